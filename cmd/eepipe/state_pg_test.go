package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// TestThreeWayEndToEndPostgres runs the scenario through a
// PostgreSQL store.
func TestThreeWayEndToEndPostgres(t *testing.T) {
	s := newStateEnv(t, statestoretest.PostgresURL(t))
	testThreeWay(t, s)
}

// TestThreeWayPlanFieldsPostgres is TestThreeWayPlanFields on a
// PostgreSQL store.
func TestThreeWayPlanFieldsPostgres(t *testing.T) {
	s := newStateEnv(t, statestoretest.PostgresURL(t))
	testThreeWayFields(t, s)
}

// manyTargets writes a file of n plans with one target each.
func manyTargets(t *testing.T, path string, n int, value int) string {
	var rows []row
	for i := range n {
		rows = append(rows, row{name: fmt.Sprintf("Bulk %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, value, cWFS, value+1)})
	}
	return writeCSV(t, path, rows)
}

// TestConcurrentAppliesPostgresNeverInterleave runs two applies of the same
// file to the same account through one PostgreSQL store at once: the
// second waits for the first's lock and then, reading each plan under the
// lock, finds nothing to write. Interleaved, both would write every target.
func TestConcurrentAppliesPostgresNeverInterleave(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnvWith(t, sandbox.Options{Latency: 20 * time.Millisecond}, pg)
	e := s.env
	v1 := manyTargets(t, filepath.Join(e.dir, "v1.csv"), 6, 1)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 { // create the plans
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	v2 := manyTargets(t, filepath.Join(e.dir, "v2.csv"), 6, 5)
	e.srv.Sandbox.ResetStats()
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A lock folder of its own per run, as on two hosts: only the
			// store's lock can keep them apart.
			results[i] = s.eepipe("apply", v2, "--no-recalc", "--concurrency", "2", "--lock-wait", "5m",
				"--lock-dir", filepath.Join(e.dir, fmt.Sprintf("host%d", i)))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("apply %d: exit %d\n%s", i, r.code, r.err)
		}
	}
	if got := e.srv.Sandbox.Stats().ByRoute[routeTarget]; got != 6 {
		t.Errorf("target patches = %d, want 6 (each target once: the applies did not interleave)", got)
	}
}

// TestApplyLockHeldPostgres: an account locked by another run makes apply
// exit 3 naming the holder, before any write.
func TestApplyLockHeldPostgres(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnv(t, pg)
	v1 := s.csv("v1.csv", cAMT, 1)
	st, err := statestore.OpenWith(context.Background(), pg, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	unlock, err := st.LockAccount(context.Background(), s.srv.URL, "default", "ops@cron-host (pid 4242)", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 3 || s.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "locked by ops@cron-host (pid 4242)") {
		t.Fatalf("exit %d, %d writes\n%s", r.code, s.srv.Sandbox.Stats().Writes, r.err)
	}
}

// TestApplyPostgresUnreachable: an unreachable store exits 3 before any request.
func TestApplyPostgresUnreachable(t *testing.T) {
	s := newStateEnv(t, "postgres://eepipe:pw-not-shown@127.0.0.1:1/eepipe?connect_timeout=5")
	v1 := s.csv("v1.csv", cAMT, 1)
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 3 || s.srv.Sandbox.Stats().Requests != 0 || !strings.Contains(r.err, "unreachable") || strings.Contains(r.err, "pw-not-shown") {
		t.Fatalf("exit %d, %d requests\n%s", r.code, s.srv.Sandbox.Stats().Requests, r.err)
	}
}
