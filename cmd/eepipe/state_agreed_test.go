package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// TestInSyncCounterIsProtected: a counter that already held the file's
// value when v1 was first applied (so eepipe sent nothing for it) is still
// protected: the client changes it on the service, and applying v1 again
// leaves it alone, exits 1 and names the run that agreed it. Three ways
// for the counter to be in sync: the plan existed with it, eepipe created
// the plan (all zeros), eepipe created it with the scorecard's prefill.
func TestInSyncCounterIsProtected(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares the service and returns the value of cAMT the
		// file gives (equal to what the service will hold after the first
		// apply without sending it) and the scorecard the row names.
		setup func(t *testing.T, s *stateEnv) (amt int, scorecard string)
	}{
		{"existing plan", func(t *testing.T, s *stateEnv) (int, string) {
			if _, err := s.client.CreatePlan(context.Background(), apiclient.PlanCreate{Name: "Stateful", StartDate: "2025-09-01", EndDate: "2030-08-31"}); err != nil {
				t.Fatal(err)
			}
			s.serviceEdit("Stateful", cAMT, 7)
			return 7, ""
		}},
		{"created with zeros", func(t *testing.T, s *stateEnv) (int, string) { return 0, "" }},
		{"created with prefill", func(t *testing.T, s *stateEnv) (int, string) {
			// Learn the prefill by creating (and deleting) a probe plan.
			ctx := context.Background()
			p, err := s.client.CreatePlan(ctx, apiclient.PlanCreate{Name: "Probe", StartDate: "2025-09-01", EndDate: "2030-08-31", ScorecardID: "scorecard_acme_2025"})
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, c := s.target("Probe")
			if err := s.client.DeletePlan(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			if c[cAMT] == 0 {
				t.Fatalf("the prefill leaves %s at 0; pick a counter it sets", cAMT)
			}
			return int(c[cAMT]), "scorecard_acme_2025"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStateEnv(t, "")
			sb := s.srv.Sandbox
			amt, scorecard := tc.setup(t, s)
			v1 := writeCSV(t, filepath.Join(s.dir, "v1.csv"), []row{{name: "Stateful", start: "2025-09-01", end: "2030-08-31", scorecard: scorecard,
				year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, amt, cWFS, 55)}})

			// (1) apply v1: cAMT already holds the file's value, only cWFS is sent.
			if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
				t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
			}
			s.want("Stateful", cAMT, amt, cWFS, 55)
			// (2) the client changes cAMT in the web app.
			s.serviceEdit("Stateful", cAMT, amt+10)
			// (3) apply v1 again: cAMT is not overwritten, exit 1, run 1 named.
			sb.ResetStats()
			r := s.eepipe("apply", v1, "--no-recalc")
			if r.code != 1 || sb.Stats().Writes != 0 {
				t.Fatalf("apply v1 again: exit %d, %d writes; want 1 and 0\n%s", r.code, sb.Stats().Writes, r.err)
			}
			s.want("Stateful", cAMT, amt+10, cWFS, 55)
			for _, w := range []string{"1 counter changed on the service", cAMT, "changed on the service since run 1 on",
				"last applied " + strconv.Itoa(amt) + " by run 1"} {
				if !strings.Contains(r.err, w) {
					t.Errorf("the message lacks %q:\n%s", w, r.err)
				}
			}
			// diff and reconcile classify it the same way, and record nothing.
			if r := s.eepipe("diff", v1); r.code != 1 || !strings.Contains(r.out, "changed on the service since run 1") {
				t.Errorf("diff: exit %d\n%s\n%s", r.code, r.out, r.err)
			}
			rec := s.reconcile(v1)
			if c := rec.classes(); c[cAMT] != diff.ClassService || len(c) != 1 {
				t.Errorf("reconcile classes = %v", c)
			}
			if l := rec.last(cAMT); l == nil || l.RunID != 1 || l.Value != int64(amt) {
				t.Errorf("reconcile last applied of %s = %+v, want %d by run 1", cAMT, l, amt)
			}
			// The second apply (0 writes) is a run too; diff and reconcile are not.
			if r := s.eepipe("history"); r.code != 0 || !strings.Contains(r.out, "2 runs.") {
				t.Errorf("history: exit %d\n%s\n%s", r.code, r.out, r.err)
			}
		})
	}
}

// TestInSyncRunIsRecorded: an apply that finds everything in sync writes
// nothing but records a run; the values it agreed were already on record
// (run 1 applied them), so it records no counter again, and a later
// change on the service is attributed to run 1, which last applied them.
func TestInSyncRunIsRecorded(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	s.srv.Sandbox.ResetStats()
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 || s.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply v1 in sync: exit %d, %d writes\n%s", r.code, s.srv.Sandbox.Stats().Writes, r.err)
	}
	s.serviceEdit("Stateful", cWFS, 20)
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 1 || !strings.Contains(r.err, "changed on the service since run 1 on") {
		t.Fatalf("apply after a service change: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cWFS, 20)
	h := s.eepipe("history")
	if h.code != 0 || !strings.Contains(h.out, "3 runs.") || strings.Contains(h.out, "already held the file's values") {
		t.Errorf("history: exit %d\n%s\n%s", h.code, h.out, h.err)
	}
	if !strings.Contains(h.out, "run 2 ") {
		t.Errorf("history lacks run 2:\n%s", h.out)
	}
	// Run 3 found cAMT in sync, also on record: still only run 1's values.
	if r := s.eepipe("history", "--counter", cAMT); r.code != 0 || strings.Count(r.out, "  run ") != 1 || !strings.Contains(r.out, "  run 1 ") {
		t.Errorf("history --counter %s: exit %d\n%s\n%s", cAMT, r.code, r.out, r.err)
	}
}
