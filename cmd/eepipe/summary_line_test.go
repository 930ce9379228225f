package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// TestSummaryIsTheLastLine: whatever the outcome, a run's last line on
// stderr is the summary (the error's message comes before it), so that a
// monitoring system reading the log's tail finds it.
func TestSummaryIsTheLastLine(t *testing.T) {
	e := newExEnv(t, nil)
	bad := e.path("bad.csv")
	os.WriteFile(bad, []byte("target_type,number_of_bogus\nall_employees,1\n"), 0o644)
	lock := e.path("held.lock")
	held, err := filelock.Acquire(context.Background(), lock, pipeline.LockInfo{Command: "eepipe export"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"invalid input", []string{"reconcile", bad, "--report", e.path("r.json")}, ExitInvalid, "nothing was sent"},
		{"lock held", []string{"export", "-o", e.path("x.csv"), "--lock", lock}, ExitFatal, "holds the lock"},
		{"unknown plan id", []string{"export", "-o", e.path("y.csv"), "--plan", "987654"}, ExitDiff, "987654"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := e.run(append(tc.args, "--log-format", "json")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			last := lastLine(stderr)
			if !strings.Contains(last, `"msg":"summary"`) {
				t.Fatalf("the last line is not the summary: %q\n%s", last, stderr)
			}
			i := strings.Index(stderr, `"level":"error"`) // the error is a JSON event like every stderr line
			if i < 0 || !strings.Contains(stderr[i:], tc.msg) || i > strings.Index(stderr, `"msg":"summary"`) {
				t.Fatalf("the error message (%q) is missing or after the summary:\n%s", tc.msg, stderr)
			}
			if n := strings.Count(stderr, tc.msg); n != 1 {
				t.Fatalf("the error message is printed %d times:\n%s", n, stderr)
			}
			if s := summaryLine(t, stderr); s["exit_code"] != float64(tc.code) {
				t.Fatalf("summary %v", s)
			}
		})
	}
}
