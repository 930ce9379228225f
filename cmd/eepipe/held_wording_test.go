package main

import (
	"context"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// TestHeldWordingDryRun: the held-changes list of a run that sends
// nothing (diff, apply --dry-run) says the changes would not be
// overwritten; only apply says they were not (and, with
// --overwrite-service-changes, diff says they would be overwritten).
func TestHeldWordingDryRun(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB := pipeline.Sectors[0], pipeline.Sectors[4]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Fielded", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Fielded")
	v1 := s.fieldsCSV("v1.csv", id, "Fielded", secA, cAMT, 1)
	s.serviceRename(id, "Renamed by client", secB)

	const dry = "2 plan fields changed on the service since eepipe last wrote them would not be overwritten"
	for _, args := range [][]string{{"diff", v1}, {"apply", "--dry-run", v1, "--no-recalc"}} {
		r := s.eepipe(args...)
		if r.code != 1 || !strings.Contains(r.out, dry) || strings.Contains(r.out+r.err, "NOT overwritten") {
			t.Errorf("%v: exit %d; want 1 and %q\n%s\n%s", args, r.code, dry, r.out, r.err)
		}
	}
	const dryOver = "2 plan fields changed on the service since eepipe last wrote them; would be overwritten (--overwrite-service-changes)"
	if r := s.eepipe("diff", v1, "--overwrite-service-changes"); !strings.Contains(r.out, dryOver) {
		t.Errorf("diff --overwrite-service-changes: exit %d; want %q\n%s\n%s", r.code, dryOver, r.out, r.err)
	}
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 1 ||
		!strings.Contains(r.err, "2 plan fields changed on the service since eepipe last wrote them were NOT overwritten") {
		t.Errorf("apply: exit %d\n%s", r.code, r.err)
	}
}

// TestHeldFieldClearedOnService: a plan field cleared on the service is
// shown as (blank), never as an empty pair of quotes, in apply's held
// list, diff and reconcile.
func TestHeldFieldClearedOnService(t *testing.T) {
	s := newStateEnv(t, "")
	secA := pipeline.Sectors[0]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Cleared", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Cleared")
	v1 := s.fieldsCSV("v1.csv", id, "Cleared", secA, cAMT, 1)
	blank := apiclient.NullString("")
	if _, err := s.client.UpdatePlan(context.Background(), id, apiclient.PlanUpdate{Sector: &blank}); err != nil {
		t.Fatal(err)
	}
	if _, sec := s.servicePlan(id); sec != "" {
		t.Fatalf("the service still holds sector %q", sec)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", v1, "--no-recalc"}, `field sector: file "` + secA + `", service (blank), last applied "` + secA + `"`},
		{[]string{"diff", v1}, `field sector: file "` + secA + `", service (blank)`},
		{[]string{"diff", v1, "--overwrite-service-changes"}, `sector: (blank) -> "` + secA + `"`},
		{[]string{"reconcile", v1}, `sector: workbook "` + secA + `", service (blank), last applied "` + secA + `"`},
	} {
		r := s.eepipe(c.args...)
		all := r.out + r.err
		if !strings.Contains(all, c.want) || strings.Contains(all, `""`) {
			t.Errorf("%v: exit %d; want %q and no empty quotes\n%s\n%s", c.args, r.code, c.want, r.out, r.err)
		}
	}
}
