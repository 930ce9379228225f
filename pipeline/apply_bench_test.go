package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPlanAndApply measures the pipeline's own cost (diff, routing,
// gate, bookkeeping) for 200 new plans with 2,000 targets against the
// in-memory fake service, without HTTP; compare with cmd/eepipe's
// BenchmarkApply, which goes through the client and the sandbox.
func BenchmarkPlanAndApply(b *testing.B) {
	var plans []*InputPlan
	for p := range 200 {
		var cs []map[string]int64
		for y := range 5 {
			cs = append(cs, map[string]int64{amt: int64(p%7 + 1), wfs: int64(y), ifu: 3})
		}
		in := inPlan(acmeCo.VATNumber, fmt.Sprintf("Bench %03d", p), "2025-09-01", "2030-08-31", "", cs...)
		for y := range 5 {
			in.Targets = append(in.Targets, &InputTarget{YearNumber: y + 1, TargetType: TargetDisabled, Counters: CountersOf(map[string]int64{amt: 1})})
		}
		plans = append(plans, in)
	}
	b.ReportAllocs()
	for range b.N {
		w := newWorld()
		r := NewRunner(w.accounts, w.finder, RunOptions{Concurrency: 32, NoRecalc: true})
		cs, err := r.Plan(context.Background(), plans)
		if err != nil {
			b.Fatal(err)
		}
		rep := r.Apply(context.Background(), cs, time.Now())
		if s := rep.Summary(); s.PlansCreated != 200 || s.TargetsPatched != 2000 {
			b.Fatalf("summary %+v", s)
		}
	}
}
