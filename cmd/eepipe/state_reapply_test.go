package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// TestReapplyRecordsNoCounter: the first apply of an account's export
// records the counters it finds in sync (their baselines); applying the
// unchanged file again is recorded as a run but adds no counter to the
// store, as every value is on record already; a later change on the
// service to a counter only the first apply of the export recorded is
// still held, named with that run.
func TestReapplyRecordsNoCounter(t *testing.T) {
	s := newStateEnv(t, "")
	if r := s.eepipe("apply", s.csv("v1.csv", cAMT, 3), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	export := filepath.Join(s.dir, "export.csv")
	if r := s.run("export", "-o", export); r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.err)
	}
	rows := func() (n [3]int) {
		t.Helper()
		db, err := sql.Open("sqlite", s.state)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// The writes, their counters (packed in each write's row) and the
		// last values applied (packed by target).
		for i, q := range []string{`SELECT count(*) FROM eepipe_writes`,
			`SELECT count(*) FROM eepipe_writes w, json_each(w.counters)`,
			`SELECT count(*) FROM eepipe_last_values l, json_each(l.counters)`} {
			if err := db.QueryRow(q).Scan(&n[i]); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	perRun := func() map[int64]int {
		t.Helper()
		st, err := statestore.OpenWith(context.Background(), s.state, testStoreOptions)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		hist, err := st.History(context.Background(), pipeline.HistoryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]int{}
		for _, h := range hist {
			out[h.Run.ID]++
		}
		return out
	}
	// Run 2: the export's counters not on record yet are recorded.
	if r := s.eepipe("apply", export, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply the export: exit %d\n%s", r.code, r.err)
	}
	before := rows()
	if n := perRun()[2]; n < 50 {
		t.Fatalf("the first apply of the export recorded %d counters", n)
	}
	// Run 3: in sync, every value on record: a run, no counter.
	s.srv.Sandbox.ResetStats()
	if r := s.eepipe("apply", export, "--no-recalc"); r.code != 0 || s.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply the export again: exit %d, %d writes\n%s", r.code, s.srv.Sandbox.Stats().Writes, r.err)
	}
	if after := rows(); after != before {
		t.Errorf("rows (writes, write counters, last applied) %v after the re-apply, %v before", after, before)
	}
	if n := perRun()[3]; n != 0 {
		t.Errorf("the re-apply recorded %d counters", n)
	}
	if r := s.eepipe("history"); r.code != 0 || !strings.Contains(r.out, "3 runs.") || !strings.Contains(r.out, "run 3 ") {
		t.Errorf("history: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// cWFS was first recorded by run 2: a change on the service is held.
	s.serviceEdit("Stateful", cWFS, 20)
	r := s.eepipe("apply", export, "--no-recalc")
	if r.code != 1 || !strings.Contains(r.err, "changed on the service since run 2 on") {
		t.Fatalf("apply after a service change: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cWFS, 20)
}
