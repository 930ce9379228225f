//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// TestKillThenSameFileSettlesPending kills an apply (kill -9) at many
// points of its writes and runs the same file again: the writes the
// killed run left pending are all settled by the next run, although the
// targets the killed run wrote are then in sync (nothing to send for
// them): adopted, with the note docs/apply-and-state.md gives, when the
// service holds their values; re-sent otherwise. Afterwards no write of
// the killed run is pending, history calls none of them FAILED, and the
// killed run shows as interrupted, not running. The last point kills the
// run after its last request was sent: the next run has nothing to send.
func TestKillThenSameFileSettlesPending(t *testing.T) {
	for _, at := range []int{1, 9, 22, 34, killPlans} {
		t.Run(fmt.Sprintf("after %d patches", at), func(t *testing.T) {
			testKillThenSameFile(t, "", at)
		})
	}
}

// TestKillThenSameFileSettlesPendingPostgres is
// TestKillThenSameFileSettlesPending through a PostgreSQL store.
func TestKillThenSameFileSettlesPendingPostgres(t *testing.T) {
	for _, at := range []int{5, 27, killPlans} {
		t.Run(fmt.Sprintf("after %d patches", at), func(t *testing.T) {
			testKillThenSameFile(t, statestoretest.PostgresURL(t), at) // a database of its own
		})
	}
}

// killPlans is how many plans (one target each) the killed run writes.
const killPlans = 40

func testKillThenSameFile(t *testing.T, state string, at int) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 60 * time.Millisecond}, state)
	e := s.env
	mk := func(file string, base int) string {
		var rows []row
		for i := range killPlans {
			rows = append(rows, row{name: fmt.Sprintf("Rerun %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
				counters: counters(cAMT, base+i, cWFS, base+2*i)})
		}
		return writeCSV(t, filepath.Join(e.dir, file), rows)
	}
	v1, v2 := mk("v1.csv", 100), mk("v2.csv", 500)
	if r := s.eepipe("apply", v1, "--no-recalc", "--concurrency", "8"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	sb := e.srv.Sandbox
	sb.ResetStats()
	cmd := exec.Command(os.Args[0], "apply", v2, "--state", s.state, "--no-recalc", "--concurrency", "8")
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for sb.Stats().ByRoute[routeTarget] < int64(at) {
		time.Sleep(time.Millisecond)
	}
	killEepipe(t, cmd)

	killed, pending, unanswered := pendingAfterKill(t, s)
	t.Logf("%d writes pending after the kill, %d of them on the service", pending, unanswered)

	// The same file again: converges, holds nothing back, adopts each
	// unanswered write with a note.
	r := s.eepipe("apply", v2, "--no-recalc", "--concurrency", "8")
	if r.code != 0 || strings.Contains(r.err, "NOT overwritten") {
		t.Fatalf("apply v2 after the kill: exit %d (want 0, nothing held)\n%s", r.code, r.err)
	}
	noted := map[string]bool{}
	for _, m := range regexp.MustCompile(fmt.Sprintf(`\(target (\d+)\): run %d sent 2 counters and recorded no answer \(it was stopped first, or got no clear one\); the service holds the values sent, `+
		`so they count as applied by run %[1]d \(adopted\), not as changed on the service`, killed)).FindAllStringSubmatch(r.out+r.err, -1) {
		noted[m[1]] = true
	}
	if len(noted) != unanswered {
		t.Errorf("%d writes noted as adopted, want %d", len(noted), unanswered)
	}
	for i := range killPlans {
		s.want(fmt.Sprintf("Rerun %02d", i), cAMT, 500+i, cWFS, 500+2*i)
	}

	st, err := statestore.OpenWith(context.Background(), s.state, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, err := st.History(context.Background(), pipeline.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	adopted := 0
	for _, h := range hist {
		switch {
		case h.Outcome == pipeline.OutcomePending:
			t.Errorf("run %d's write to %s %s is still pending after the next run", h.Run.ID, h.PlanName, h.Counter)
		case h.Run.ID == killed && h.Counter == cAMT && strings.HasPrefix(h.Outcome, pipeline.OutcomeAdopted):
			adopted++
		}
	}
	if adopted != unanswered {
		t.Errorf("%d of the killed run's writes recorded as adopted, want %d", adopted, unanswered)
	}
	runs, err := st.Runs(context.Background(), pipeline.HistoryQuery{})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs: %v, %+v", err, runs)
	}
	if runs[1].ID != killed || runs[1].Status != pipeline.RunInterrupted || runs[2].Status != "ok" {
		t.Errorf("after the next run, the killed run is %q and the next %q; want %s and ok", runs[1].Status, runs[2].Status, pipeline.RunInterrupted)
	}
	h := s.eepipe("history")
	if h.code != 0 || strings.Contains(h.out, "FAILED") || strings.Contains(h.out, "pending") || !strings.Contains(h.out, "  "+pipeline.RunInterrupted+"  ") {
		t.Errorf("history: exit %d\n%s%s", h.code, h.out, h.err)
	}
	if n := strings.Count(h.out, fmt.Sprintf("2 counters that run %d sent in 1 target adopted", killed)); n != unanswered {
		t.Errorf("history lists %d adoptions under the next run, want %d\n%s", n, unanswered, h.out)
	}
}

// pendingAfterKill reads what a killed run left in the store: its id, its
// writes still pending, and how many of those the service holds.
func pendingAfterKill(t *testing.T, s *stateEnv) (killed int64, pending, unanswered int) {
	t.Helper()
	// What the killed run left: its writes the service holds whose answer
	// is not on record.
	st, err := statestore.OpenWith(context.Background(), s.state, testStoreOptions)
	if err != nil {
		t.Fatalf("the store does not open after the kill: %v", err)
	}
	hist, err := st.History(context.Background(), pipeline.HistoryQuery{Counter: cAMT})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) == 0 {
		t.Fatal("no write on record")
	}
	killed = hist[len(hist)-1].Run.ID
	for _, h := range hist {
		if h.Run.ID != killed || h.Outcome != pipeline.OutcomePending {
			continue
		}
		pending++
		if _, _, _, got := s.target(h.PlanName); got[cAMT] == h.After {
			unanswered++
		}
	}
	if pending == 0 {
		t.Fatalf("the kill left no write pending: the test missed the window")
	}
	return killed, pending, unanswered
}
