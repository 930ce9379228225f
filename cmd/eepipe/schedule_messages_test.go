package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats"
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
	if err := formats.WriteFlatCSV(plans, ckPlans(t), nil); err != nil {
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
