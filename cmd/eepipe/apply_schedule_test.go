package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// TestApplyScheduledRun: apply from cron stamps its run report in
// --output-dir, prunes older ones with --keep, releases its lock and ends
// with one JSON summary line.
func TestApplyScheduledRun(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 2)
	export := e.path("plans.csv")
	if code, _, stderr := e.run("export", "-o", export); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	out := e.path("runs")
	os.MkdirAll(out, 0o755)
	for i := 1; i <= 2; i++ {
		os.WriteFile(filepath.Join(out, formats.StampedName("run.json", e.now.Add(-time.Duration(i)*time.Hour))), []byte("{}"), 0o644)
	}
	e.srv.Sandbox.ResetStats()
	code, stdout, stderr := e.run("apply", export, "--output-dir", out, "--keep", "2", "--log-format", "json")
	if code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("exit %d, %d writes\n%s\n%s", code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
	}
	report := filepath.Join(out, "run-2026-11-22T0300Z.json")
	var rep struct {
		Summary struct {
			PlansUnchanged int `json:"plans_unchanged"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(exReadFile(t, report)), &rep); err != nil || rep.Summary.PlansUnchanged != 2 {
		t.Fatalf("stamped run report: %v %+v", err, rep)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Fatalf("folder holds %d files, want the new report, one older (keep 2) and the lock file: %v", len(entries), entries)
	}
	assertLockFree(t, filepath.Join(out, lockFileName))
	s := summaryLine(t, stderr)
	if s["command"] != "apply" || s["outcome"] != "ok" || s["exit_code"] != 0.0 || s["plans_unchanged"] != 2.0 || s["writes"] != 0.0 {
		t.Fatalf("summary %v", s)
	}
	if o, _ := s["outputs"].([]any); len(o) != 1 || o[0] != report {
		t.Fatalf("summary outputs %v, want %s", s["outputs"], report)
	}
	if !strings.HasSuffix(strings.TrimSpace(stderr), "}") || !strings.Contains(lastLine(stderr), `"msg":"summary"`) {
		t.Fatalf("the summary is not the last line:\n%s", stderr)
	}
	// --keep without --output-dir is a usage error, before any request.
	if code, _, stderr := e.run("apply", export, "--keep", "3"); code != ExitInvalid {
		t.Fatalf("--keep alone: exit %d\n%s", code, stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestApplyLockRefusesSecondRun: a held lock (--lock, or the one in
// --output-dir) refuses the run before any request, exit 3; released, the
// run goes ahead.
func TestApplyLockRefusesSecondRun(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 1)
	export := e.path("plans.csv")
	if code, _, stderr := e.run("export", "-o", export); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	lock := e.path("apply.lock")
	held, err := filelock.Acquire(context.Background(), lock, pipeline.LockInfo{Command: "eepipe apply"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Sandbox.ResetStats()
	code, stdout, stderr := e.run("apply", export, "--lock", lock, "--log-format", "json")
	if code != ExitFatal || !strings.Contains(stderr, "another eepipe run holds the lock") {
		t.Fatalf("apply with a held lock: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
		t.Fatalf("apply with a held lock sent %d requests", st.Requests)
	}
	if s := summaryLine(t, stderr); s["outcome"] != "locked" || s["command"] != "apply" {
		t.Fatalf("summary %v", s)
	}
	// The lock of --output-dir.
	out := e.path("runs")
	os.MkdirAll(out, 0o755)
	heldOut, err := filelock.Acquire(context.Background(), filepath.Join(out, lockFileName), pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer heldOut.Unlock()
	if code, _, stderr := e.run("apply", export, "--output-dir", out); code != ExitFatal || !strings.Contains(stderr, "holds the lock") {
		t.Fatalf("apply with the output folder locked: exit %d\n%s", code, stderr)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	// Released: the run goes ahead and leaves the lock free.
	if code, _, stderr := e.run("apply", export, "--lock", lock); code != 0 {
		t.Fatalf("apply after release: exit %d\n%s", code, stderr)
	}
	again, err := filelock.Acquire(context.Background(), lock, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("lock still held after the run: %v", err)
	}
	again.Unlock()
}

// TestApplyMaxDuration: when --max-duration passes no new request starts,
// the run report is written with the plans not applied, and apply exits 3.
func TestApplyMaxDuration(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 4)
	export := e.path("plans.csv")
	if code, _, stderr := e.run("export", "-o", export); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	// The store exists (export reads only and creates none): the unchanged
	// export applied once, so that the timed run below spends its time on
	// writes, not on creating and migrating a new store.
	if code, _, stderr := e.run("apply", export, "--no-recalc"); code != 0 {
		t.Fatalf("apply of the unchanged export: exit %d\n%s", code, stderr)
	}
	// Every counter of the file changed: a full run would patch every target.
	recs, err := csv.NewReader(strings.NewReader(exReadFile(t, export))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "number_of_african_male_top_managers")
	if col < 0 {
		t.Fatal("no counter column")
	}
	for _, r := range recs[1:] {
		r[col] = "999"
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(recs)
	os.WriteFile(export, buf.Bytes(), 0o644)

	e.srv.Sandbox.SetLatency(300 * time.Millisecond)
	defer e.srv.Sandbox.SetLatency(0)
	e.srv.Sandbox.ResetStats()
	report := e.path("run.json")
	code, _, stderr := e.run("apply", export, "--report", report, "--max-duration", "200ms", "--concurrency", "1", "--log-format", "json")
	if code != ExitFatal || !strings.Contains(stderr, "--max-duration 200ms") {
		t.Fatalf("apply past --max-duration: exit %d, want 3\n%s", code, stderr)
	}
	var rep struct {
		Interrupted bool `json:"interrupted"`
		Summary     struct {
			PlansNotApplied int `json:"plans_not_applied"`
			TargetsPatched  int `json:"targets_patched"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(exReadFile(t, report)), &rep); err != nil {
		t.Fatalf("run report not written: %v", err)
	}
	if rep.Summary.PlansNotApplied == 0 {
		t.Fatalf("run report %+v: want plans not applied", rep)
	}
	if w := e.srv.Sandbox.Stats().Writes; w >= 4*5*2 {
		t.Fatalf("%d writes: the run went on after --max-duration", w)
	}
	if s := summaryLine(t, stderr); s["outcome"] != "timeout" || s["exit_code"] != 3.0 {
		t.Fatalf("summary %v", s)
	}
}
