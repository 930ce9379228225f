package run

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// TestAmbiguousCaseVariantsFailNotCreate: the account holds "Case Plan"
// and "CASE PLAN", the file says "case plan": the plan fails as ambiguous,
// exactly as an exact-name ambiguity does, and nothing is created.
func TestAmbiguousCaseVariantsFailNotCreate(t *testing.T) {
	start := pipelinetest.Day("2025-09-01")
	svc := pipelinetest.NewFakeService(new(atomic.Int64))
	svc.Plans[3] = &pipeline.Plan{ID: 3, Name: "Case Plan", StartDate: start, EndDate: pipelinetest.Day("2030-08-31")}
	svc.Plans[4] = &pipeline.Plan{ID: 4, Name: "CASE PLAN", StartDate: start, EndDate: pipelinetest.Day("2030-08-31")}
	r := NewRunner([]pipeline.Account{{Name: "acme", Service: svc}}, nil, RunOptions{})
	in := &pipeline.InputPlan{Name: "case plan", StartDate: start, EndDate: pipelinetest.Day("2030-08-31")}
	cs, err := r.Plan(context.Background(), []*pipeline.InputPlan{in})
	if err != nil {
		t.Fatal(err)
	}
	d := cs.Plans[0]
	if svc.Writes() != 0 {
		t.Fatalf("%d writes", svc.Writes())
	}
	if d.Action != diff.ActionFailed || !strings.Contains(d.Reason, "ambiguous plan") || !strings.Contains(d.Reason, "3, 4") ||
		!strings.Contains(d.Reason, "letter case") {
		t.Fatalf("action %v, reason %q; want an ambiguous plan", d.Action, d.Reason)
	}
}
