package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// requestOrder is an http.RoundTripper that notes, when the first PATCH
// is sent, how many plan reads (GET of one plan) have been answered, and
// how many plan reads were answered after it.
type requestOrder struct {
	next http.RoundTripper

	mu                   sync.Mutex
	reads                int // plan reads answered
	patched              bool
	readsAtFirstPatch    int
	readsAfterFirstPatch int
}

var planPath = regexp.MustCompile(`^/api/public/v1/employment_equity_plans/[0-9]+$`)

func (o *requestOrder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPatch {
		o.mu.Lock()
		if !o.patched {
			o.patched, o.readsAtFirstPatch = true, o.reads
		}
		o.mu.Unlock()
	}
	resp, err := o.next.RoundTrip(req)
	if req.Method == http.MethodGet && planPath.MatchString(req.URL.Path) {
		o.mu.Lock()
		o.reads++
		if o.patched {
			o.readsAfterFirstPatch++
		}
		o.mu.Unlock()
	}
	return resp, err
}

// updateRows is n plans, one target each, with amt v+i.
func updateRows(n, v int) []row {
	var rows []row
	for i := range n {
		rows = append(rows, row{name: fmt.Sprintf("Pipelined %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, v+i)})
	}
	return rows
}

// TestApplyWritesWhileStillReading proves the update path is pipelined:
// with more plans than workers, the first PATCH goes out before the last
// plan is read (before, every read finished before the first write).
// Counted over HTTP against the sandbox, not timed.
func TestApplyWritesWhileStillReading(t *testing.T) {
	const plans, workers = 24, 4
	e := newEnv(t, sandbox.Options{Latency: 2 * time.Millisecond})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(plans, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	writeCSV(t, file, updateRows(plans, 50))
	e.srv.Sandbox.ResetStats()
	order := &requestOrder{next: http.DefaultTransport}
	hc := &http.Client{Transport: order}
	r := e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--concurrency", fmt.Sprint(workers), "--no-recalc")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	st := e.srv.Sandbox.Stats()
	if st.ByRoute["GET /api/public/v1/employment_equity_plans/{id}"] != plans || st.Writes != plans || st.MaxInFlight > workers {
		t.Errorf("stats %+v", st)
	}
	if !order.patched || order.readsAtFirstPatch >= plans || order.readsAfterFirstPatch == 0 {
		t.Fatalf("the first PATCH went out after %d of %d plan reads (%d read after it): not pipelined",
			order.readsAtFirstPatch, plans, order.readsAfterFirstPatch)
	}
	// Each worker takes one plan through read, compare and write before
	// the next: at most one read per worker precedes the first write.
	if order.readsAtFirstPatch > workers {
		t.Errorf("the first PATCH went out after %d plan reads, want at most %d", order.readsAtFirstPatch, workers)
	}
	for i, p := range e.srv.Sandbox.Plans("acme") {
		if c := storedTarget(t, p, 1, pipeline.TargetAll); c[cAMT] < 50 {
			t.Errorf("plan %d not written: %d", i, c[cAMT])
		}
	}
	e.srv.Sandbox.ResetStats()
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Errorf("re-run: exit %d, %d writes", r.code, e.srv.Sandbox.Stats().Writes)
	}
}

// TestApplyShowsEachPlanOnTerminal: on a terminal each plan to change is
// shown as it is written (there is no change set before the first write
// any more), as diff shows it: its counters counted, listed with -v; then
// what was compared, then what was done; past 30 plans one line says the
// rest are not listed.
func TestApplyShowsEachPlanOnTerminal(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(34, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	rows := updateRows(34, 1)
	rows[3].counters[cAMT] = 99
	writeCSV(t, file, rows)
	f, _, errb := e.factory()
	f.IO.ErrTTY = true
	if code := Execute(context.Background(), f, []string{"apply", file, "--no-recalc"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	out := errb.String()
	for _, want := range []string{"Each plan as it is compared, then written:", `~ update plan`, `"Pipelined 03"`, "    1 counter in 1 target",
		"Compared: 0 to create, 1 to update, 0 to recreate, 33 unchanged", "apply -v lists each plan's counters", "1 updated"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"Pipelined 04"`) || strings.Contains(out, "more plans are applied") || strings.Contains(out, "4 -> 99") {
		t.Errorf("unchanged plans or counters are listed without -v:\n%s", out)
	}
	rows[3].counters[cAMT] = 98
	writeCSV(t, file, rows)
	f, _, errb = e.factory()
	f.IO.ErrTTY = true
	if code := Execute(context.Background(), f, []string{"apply", file, "--no-recalc", "-v"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	if out := errb.String(); !strings.Contains(out, "99 -> 98") || strings.Contains(out, `"level":"debug"`) || strings.Contains(out, "DEBUG") {
		t.Errorf("apply -v on a terminal: the plan's counters not listed, or debug logs:\n%s", out)
	}

	writeCSV(t, file, updateRows(34, 200))
	f, _, errb = e.factory()
	f.IO.ErrTTY = true
	if code := Execute(context.Background(), f, []string{"apply", file, "--no-recalc"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	out = errb.String()
	if n := strings.Count(out, "~ update plan"); n != 30 || strings.Count(out, "more plans are applied without being listed here") != 1 ||
		!strings.Contains(out, "34 updated") {
		t.Errorf("34 plans to update: %d listed, want 30 and one line for the rest:\n%s", n, out)
	}
}

// TestApplyReadsPlansUnderPostgresLock: with a PostgreSQL store the
// accounts are locked before their plans are listed and read (each plan
// is read under the lock; no second comparison is needed): a held lock
// stops the run before the first list.
func TestApplyReadsPlansUnderPostgresLock(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnv(t, pg)
	if r := s.eepipe("apply", s.csv("v1.csv", cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	v2 := s.csv("v2.csv", cAMT, 2)
	st, err := statestore.OpenWith(context.Background(), pg, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	unlock, err := st.LockAccount(context.Background(), s.srv.URL, "default", "ops@cron-host (pid 4343)", 0)
	if err != nil {
		t.Fatal(err)
	}
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v2, "--no-recalc")
	stats := s.srv.Sandbox.Stats()
	if r.code != 3 || stats.Writes != 0 || stats.ByRoute["GET /api/public/v1/employment_equity_plans/{id}"] != 0 ||
		stats.ByRoute["GET /api/public/v1/employment_equity_plans"] != 0 ||
		!strings.Contains(r.err, "locked by ops@cron-host (pid 4343)") {
		t.Fatalf("lock held: exit %d, %d writes, %d plan reads\n%s", r.code, stats.Writes,
			stats.ByRoute["GET /api/public/v1/employment_equity_plans/{id}"], r.err)
	}
	unlock()
	s.srv.Sandbox.ResetStats()
	if r := s.eepipe("apply", v2, "--no-recalc"); r.code != 0 || s.srv.Sandbox.Stats().ByRoute["GET /api/public/v1/employment_equity_plans/{id}"] != 1 ||
		s.srv.Sandbox.Stats().Writes != 1 {
		t.Errorf("after the lock: exit %d, stats %+v\n%s", r.code, s.srv.Sandbox.Stats(), r.err)
	}
}

// TestApplyStoreFailureWritesNothing: a state store that cannot be read
// when a plan is classified leaves that plan unwritten and stops the run
// (exit 3); with every plan to change, nothing is written.
func TestApplyStoreFailureWritesNothing(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(5, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	// The store opens and records runs, but its last values cannot be read.
	db, err := sql.Open("sqlite", filepath.Join(e.dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE eepipe_last_values`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	writeCSV(t, file, updateRows(5, 60))
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", file, "--no-recalc")
	if r.code != ExitFatal || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "eepipe_last_values") {
		t.Fatalf("store failing: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	for _, p := range e.srv.Sandbox.Plans("acme") {
		if c := storedTarget(t, p, 1, pipeline.TargetAll); c[cAMT] >= 60 {
			t.Errorf("plan %d written: %d", p.ID, c[cAMT])
		}
	}
}

// TestApplyDuplicateClaimBlocksBoth: two files that describe the same
// stored plan in ways the reader cannot tell apart (by plan_id alone, and
// by its name in other letter case) fail both plans before anything is
// written (their plan is not even read), and the other plans are applied.
// (Two plans to create with one name and start date are one plan to the
// reader, or its error; so is a plan_id beside the plan's name.)
func TestApplyDuplicateClaimBlocksBoth(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	dir := filepath.Join(e.dir, "in")
	writeCSV(t, filepath.Join(e.dir, "seed.csv"), updateRows(2, 1))
	if r := e.run("apply", filepath.Join(e.dir, "seed.csv"), "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	plans := e.srv.Sandbox.Plans("acme")
	claimed := planNamed(t, plans, "Pipelined 00")
	// By plan_id alone in one file, by its name in other letter case and
	// start date in the other: two plans to the reader, one stored plan.
	byID := func(v int) row {
		return row{planID: fmt.Sprint(claimed.ID), start: "2025-09-01", end: "2030-08-31", year: 1,
			typ: pipeline.TargetAll, counters: counters(cAMT, v)}
	}
	byName := byID(71)
	byName.planID, byName.name = "", "PIPELINED 00"
	other := updateRows(2, 1)[1]
	other.counters[cAMT] = 77
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeCSV(t, filepath.Join(dir, "a.csv"), []row{byID(70)})
	writeCSV(t, filepath.Join(dir, "b.csv"), []row{byName})
	writeCSV(t, filepath.Join(dir, "c.csv"), []row{other})
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", dir, "--no-recalc")
	st := e.srv.Sandbox.Stats()
	if r.code != ExitDiff || !strings.Contains(r.err, "is also described at b.csv line 2") || !strings.Contains(r.err, "is also described at a.csv line 2") {
		t.Fatalf("exit %d, want 1 with both rows failed\n%s", r.code, r.err)
	}
	if st.Writes != 1 || st.ByRoute["POST /api/public/v1/employment_equity_plans"] != 0 || st.ByRoute["GET /api/public/v1/employment_equity_plans/{id}"] != 1 {
		t.Errorf("want one write (the other plan's patch) and one read: %+v", st)
	}
	plans = e.srv.Sandbox.Plans("acme")
	if len(plans) != 2 || storedTarget(t, planNamed(t, plans, "Pipelined 00"), 1, pipeline.TargetAll)[cAMT] != 1 ||
		storedTarget(t, planNamed(t, plans, "Pipelined 01"), 1, pipeline.TargetAll)[cAMT] != 77 {
		t.Errorf("plans after the run: %+v", plans)
	}
}
