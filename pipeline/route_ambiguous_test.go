package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAmbiguousCaseVariantsFailNotCreate: the account holds "Case Plan"
// and "CASE PLAN", the file says "case plan": the plan fails as ambiguous,
// exactly as an exact-name ambiguity does, and nothing is created.
func TestAmbiguousCaseVariantsFailNotCreate(t *testing.T) {
	start := day("2025-09-01")
	svc := newFakeService(new(atomic.Int64))
	svc.plans[3] = &Plan{ID: 3, Name: "Case Plan", StartDate: start, EndDate: day("2030-08-31")}
	svc.plans[4] = &Plan{ID: 4, Name: "CASE PLAN", StartDate: start, EndDate: day("2030-08-31")}
	r := NewRunner([]Account{{Name: "acme", Service: svc}}, nil, RunOptions{})
	in := &InputPlan{Name: "case plan", StartDate: start, EndDate: day("2030-08-31")}
	cs, err := r.Plan(context.Background(), []*InputPlan{in})
	if err != nil {
		t.Fatal(err)
	}
	d := cs.Plans[0]
	if svc.writes() != 0 {
		t.Fatalf("%d writes", svc.writes())
	}
	if d.Action != actionFailed || !strings.Contains(d.Reason, "ambiguous plan") || !strings.Contains(d.Reason, "3, 4") ||
		!strings.Contains(d.Reason, "letter case") {
		t.Fatalf("action %v, reason %q; want an ambiguous plan", d.Action, d.Reason)
	}
}
