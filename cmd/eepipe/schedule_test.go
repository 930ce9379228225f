package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// summaryLine returns the JSON summary line of a run's stderr.
func summaryLine(t *testing.T, stderr string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "summary" {
			if found != nil {
				t.Fatalf("two summary lines:\n%s", stderr)
			}
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no summary line in:\n%s", stderr)
	}
	return found
}

func TestScheduledExportStampsPrunesAndSummarises(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 2)
	out := e.path("snapshots")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// Older snapshots of the same name, and files that must be left alone.
	var old []string
	for i := 1; i <= 3; i++ {
		n := formats.StampedName("plans.xlsx", e.now.Add(-time.Duration(i)*24*time.Hour))
		old = append(old, n)
		os.WriteFile(filepath.Join(out, n), []byte("old"), 0o644)
	}
	others := []string{formats.StampedName("plans.csv", e.now.Add(-72*time.Hour)), "notes.txt"}
	for _, n := range others {
		os.WriteFile(filepath.Join(out, n), []byte("x"), 0o644)
	}
	code, stdout, stderr := e.run("export", "--output-dir", out, "--keep", "2", "--log-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := filepath.Join(out, "plans-2026-11-22T0300Z.xlsx")
	if strings.TrimSpace(stdout) != want {
		t.Fatalf("wrote %q, want %q", stdout, want)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	wantNames := append([]string{filepath.Base(want), old[0], lockFileName}, others...)
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("folder holds %v, want %v (the lock file, oldest pruned)", names, wantNames)
	}
	assertLockFree(t, filepath.Join(out, lockFileName))
	s := summaryLine(t, stderr)
	if s["command"] != "export" || s["outcome"] != "ok" || s["exit_code"] != 0.0 || s["plans_exported"] != 2.0 {
		t.Fatalf("summary %v", s)
	}
	if pr, _ := s["pruned"].([]any); len(pr) != 2 {
		t.Fatalf("summary pruned %v, want 2 files", s["pruned"])
	}
}

// TestLockRefusesSecondRunNotStaleRecords: a held lock refuses the run
// (exit 3, holder named, nothing written); a lock file whose record names
// a dead process, or a live unrelated one, blocks nothing (the OS lock
// decides, not the record).
func TestLockRefusesSecondRunNotStaleRecords(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 1)
	out := e.path("out")
	os.MkdirAll(out, 0o755)
	lock := filepath.Join(out, lockFileName)

	// A live run holds the lock: refused, exit 3, nothing written.
	live, err := filelock.Acquire(context.Background(), lock, pipeline.LockInfo{Command: "eepipe export"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := e.run("export", "--output-dir", out, "--log-format", "json")
	if code != ExitFatal {
		t.Fatalf("second run: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "another eepipe run holds the lock") || !strings.Contains(stderr, lock) ||
		!strings.Contains(stderr, fmt.Sprintf("process %d", os.Getpid())) || !strings.Contains(stderr, "(eepipe export)") ||
		!strings.Contains(stderr, "or give --lock-wait to wait for it") {
		t.Fatalf("message does not explain the lock:\n%s", stderr)
	}
	if s := summaryLine(t, stderr); s["outcome"] != "locked" || s["exit_code"] != 3.0 {
		t.Fatalf("summary %v", s)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("folder holds %v, want only the lock", entries)
	}
	// The same with an explicit --lock and reconcile.
	if code, _, stderr := e.run("reconcile", "--lock", lock, e.path("nothing.csv")); code != ExitFatal || !strings.Contains(stderr, "holds the lock") {
		t.Fatalf("reconcile with a held --lock: exit %d\n%s", code, stderr)
	}
	live.Unlock()

	// Records of a dead process and of a live unrelated one (PID reuse).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	for _, pid := range []int{cmd.Process.Pid, os.Getppid()} {
		host, _ := os.Hostname()
		rec := fmt.Sprintf(`{"pid":%d,"host":%q,"since":"2026-11-21T03:00:00Z","command":"eepipe export"}`, pid, host)
		if err := os.WriteFile(lock, []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr = e.run("export", "--output-dir", out, "--log-format", "json")
		if code != 0 {
			t.Fatalf("run over a lock record of pid %d that nobody holds: exit %d\n%s\n%s", pid, code, stdout, stderr)
		}
	}
}

func TestMaxDurationStopsTheRun(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 4)
	export := e.path("plans.csv")
	if code, _, stderr := e.run("export", "-o", export); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	e.srv.Sandbox.SetLatency(400 * time.Millisecond)
	defer e.srv.Sandbox.SetLatency(0)

	out := e.path("bounded.xlsx")
	code, _, stderr := e.run("export", "-o", out, "--max-duration", "150ms", "--log-format", "json")
	if code != ExitFatal {
		t.Fatalf("export past --max-duration: exit %d, want 3\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a partial export was written: %v", err)
	}
	if !strings.Contains(stderr, "no partial export was written") {
		t.Errorf("the message does not say that nothing was written:\n%s", stderr)
	}
	if s := summaryLine(t, stderr); s["outcome"] != "timeout" || s["exit_code"] != 3.0 {
		t.Fatalf("summary %v", s)
	}

	report := e.path("drift.json")
	// --no-state: creating a new state store (fsynced) on a loaded machine
	// could use up the 150ms before the comparison that this is about.
	code, _, stderr = e.run("reconcile", export, "--report", report, "--max-duration", "150ms", "--log-format", "json", "--no-state")
	if code != ExitFatal {
		t.Fatalf("reconcile past --max-duration: exit %d, want 3\n%s", code, stderr)
	}
	var rec struct {
		Complete bool   `json:"complete"`
		InSync   bool   `json:"in_sync"`
		Stopped  string `json:"stopped"`
	}
	if err := json.Unmarshal([]byte(exReadFile(t, report)), &rec); err != nil {
		t.Fatalf("report not written: %v", err)
	}
	if rec.Complete || rec.InSync || !strings.Contains(rec.Stopped, "max-duration") {
		t.Fatalf("report %+v, want incomplete and stopped by --max-duration", rec)
	}
	if s := summaryLine(t, stderr); s["outcome"] != "timeout" {
		t.Fatalf("summary %v", s)
	}
}

func TestKeyExpiryRepeatedInSummary(t *testing.T) {
	fx := sandbox.DefaultFixtures()
	for i := range fx.Accounts {
		if fx.Accounts[i].Name == "acme" {
			fx.Accounts[i].ExpiresAt = time.Now().Add(12*24*time.Hour + time.Hour).UTC().Format(time.RFC3339)
		}
	}
	e := newExEnv(t, fx)
	e.createPlans(e.acme, "Acme", 1)
	export := e.path("plans.csv")
	code, _, stderr := e.run("export", "-o", export, "--log-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	s := summaryLine(t, stderr)
	ws, _ := s["warnings"].([]any)
	if len(ws) != 1 || !strings.Contains(ws[0].(string), "expires in 12d") || s["level"] != "warn" {
		t.Fatalf("summary warnings %v (level %v), want the key expiry", s["warnings"], s["level"])
	}
	code, _, stderr = e.run("reconcile", export, "--log-format", "json")
	if code != 0 {
		t.Fatalf("reconcile exit %d\n%s", code, stderr)
	}
	if ws, _ := summaryLine(t, stderr)["warnings"].([]any); len(ws) != 1 {
		t.Fatalf("reconcile summary warnings %v", ws)
	}
	for _, secret := range []string{"sandbox-secret-acme", "sandbox-lookup-pass"} {
		if strings.Contains(stderr, secret) {
			t.Fatalf("a secret is in the logs")
		}
	}
}

func TestScheduleFlagErrors(t *testing.T) {
	e := newExEnv(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"export"}, "export needs to know where to write: -o FILE"},
		{[]string{"export", "-o", "x.txt"}, ".xlsx or .csv"},
		{[]string{"export", "-o", "x.csv", "--layout", "grid"}, "flat or long"},
		{[]string{"export", "-o", "x.xlsx", "--layout", "long"}, "grid or flat"},
		{[]string{"export", "-o", "x.xlsx", "--keep", "3"}, "--output-dir"},
		{[]string{"export", "-o", "x.xlsx", "--plan", "0"}, "positive"},
		{[]string{"reconcile", "a.csv", "--report", "r.txt"}, ".xlsx, .csv or .json"},
		{[]string{"reconcile", "a.csv", "--report", "a.csv"}, "overwrite an input"},
	}
	for _, tc := range tests {
		code, _, stderr := e.run(tc.args...)
		if code != ExitInvalid || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// assertLockFree fails unless the lock file at path is free: released, and
// emptied of its holder's record. The file itself stays (a lock file
// removed while another run waits on it would let a third lock a new one).
func assertLockFree(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Fatalf("lock file after the run: %q, %v; want it empty", b, err)
	}
	l, err := filelock.Acquire(context.Background(), path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("lock still held after the run: %v", err)
	}
	l.Unlock()
}
