//go:build unix

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// TestKillDuringApplyLeavesStoreConsistent runs apply as a child process
// (this test binary as eepipe), kills it with SIGKILL half-way, and checks
// that the store holds what was written before the kill, that every value
// it says was applied is on the service, and that the next run converges
// without creating any plan twice.
func TestKillDuringApplyLeavesStoreConsistent(t *testing.T) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 40 * time.Millisecond}, "")
	e := s.env
	const plans = 12
	var rows []row
	for i := range plans {
		rows = append(rows, row{name: fmt.Sprintf("Kill %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, i+1, cWFS, 2*i+1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "v1.csv"), rows)

	cmd := exec.Command(os.Args[0], "apply", file, "--state", s.state, "--no-recalc", "--concurrency", "1")
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sb := e.srv.Sandbox
	for sb.Stats().ByRoute[routeTarget] < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the child was not killed (%v): it finished first", err)
	}
	patched := sb.Stats().ByRoute[routeTarget]
	if patched >= plans {
		t.Fatalf("every target was patched before the kill (%d)", patched)
	}

	// The store is intact and holds the writes made before the kill.
	db, err := sql.Open("sqlite", s.state)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	db.Close()
	st, err := statestore.Open(context.Background(), s.state)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs(context.Background(), pipeline.HistoryQuery{})
	hist, _ := st.History(context.Background(), pipeline.HistoryQuery{Counter: cAMT})
	st.Close()
	if len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("runs after the kill: %+v", runs)
	}
	// With one request in flight, at most the write in flight at the kill
	// is on the service but not on record.
	if n := int64(len(hist)); n < patched-1 || n > patched {
		t.Errorf("%d writes recorded, %d targets patched on the service", n, patched)
	}
	for _, h := range hist {
		_, _, _, got := s.target(h.PlanName)
		if got[cAMT] != h.After {
			t.Errorf("%s: the store says %d was applied, the service holds %d", h.PlanName, h.After, got[cAMT])
		}
	}

	// The next run converges: every plan once, every value right.
	if r := s.eepipe("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s", r.code, r.err)
	}
	list, err := s.client.ListPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range plans {
		name := fmt.Sprintf("Kill %02d", i)
		planNamed(t, list, name) // exactly one
		s.want(name, cAMT, i+1, cWFS, 2*i+1)
	}
	sb.ResetStats()
	if r := s.eepipe("apply", file, "--no-recalc"); r.code != 0 || sb.Stats().Writes != 0 {
		t.Fatalf("third apply: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
}
