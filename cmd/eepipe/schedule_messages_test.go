package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// TestMaxDurationNamesTheLimit: a run stopped by --max-duration says so
// with the limit, whichever step the limit stopped (reading the plans,
// opening the state store), for export, reconcile and apply.
func TestMaxDurationNamesTheLimit(t *testing.T) {
	e := newCkEnv(t)
	vars := maps.Clone(e.vars)
	vars[envState] = e.path("state.db")
	plans := e.path("plans.csv")
	if err := table.WriteFlatCSV(plans, ckPlans(t), nil); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"export", "-o", e.path("x.xlsx")},
		{"reconcile", plans},
		{"apply", plans, "--no-recalc"},
	} {
		code, _, stderr := runWithFiles(t, vars, append(args, "--max-duration", "1ns")...)
		if code != ExitFatal || !strings.Contains(stderr, "stopped after --max-duration 1ns") {
			t.Errorf("%s: exit %d, want 3 naming the limit\n%s", args[0], code, stderr)
		}
	}
}

// TestOutputLockWaitIsLogged: a run that waits (--lock-wait) for the lock
// of its --output-dir says so before it waits, naming the lock file and
// the limit.
func TestOutputLockWaitIsLogged(t *testing.T) {
	e := newCkEnv(t)
	out := e.path("runs")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := filelock.Acquire(context.Background(), filepath.Join(out, lockFileName), pipeline.LockInfo{Command: "eepipe export nightly"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	r := e.run("export", "--output-dir", out, "--lock-wait", "20ms")
	if r.code != ExitFatal || !strings.Contains(r.err, "holds the lock file "+filepath.Join(out, lockFileName)) ||
		!strings.Contains(r.err, "waiting up to 20ms (--lock-wait)") || !strings.Contains(r.err, "eepipe export nightly") {
		t.Errorf("exit %d\n%s", r.code, r.err)
	}
}

// TestSummaryForPeople: where the logs are for people (console: a
// terminal, or --log-format console) a run ends with a sentence, not the
// machine summary; off a terminal it ends with the JSON summary event.
func TestSummaryForPeople(t *testing.T) {
	e := newCkEnv(t)
	out := e.path("x.csv")
	r := e.run("--log-format", "console", "export", "-o", out)
	last := lastLine(r.err)
	if r.code != ExitOK || !strings.HasPrefix(last, "eepipe export: done in ") || !strings.Contains(last, "wrote "+out) ||
		strings.Contains(r.err, "summary") || strings.Contains(r.err, "elapsed_seconds") {
		t.Errorf("console: exit %d, last line %q\n%s", r.code, last, r.err)
	}
	r = e.run("--log-format", "console", "export", "-o", e.path("y.csv"), "--max-duration", "1ns")
	if last := lastLine(r.err); r.code != ExitFatal || !strings.HasPrefix(last, "eepipe export: stopped by --max-duration in ") || !strings.Contains(last, "(exit 3)") {
		t.Errorf("console, stopped: exit %d, last line %q\n%s", r.code, last, r.err)
	}
	r = e.run("--log-format", "json", "export", "-o", e.path("z.csv"))
	if s := summaryLine(t, r.err); r.code != ExitOK || s["command"] != "export" || s["outcome"] != "ok" {
		t.Errorf("json: exit %d, summary %v\n%s", r.code, s, r.err)
	}
}

func TestHumanSummary(t *testing.T) {
	got := humanSummary("reconcile", "differences", ExitDiff, 0, 2340*time.Millisecond, []string{"r.xlsx"}, []string{"key expires in 3 days", "plan X skipped"})
	want := "eepipe reconcile: done, with differences in 2.3s (exit 1); wrote r.xlsx; 2 warnings (above)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
