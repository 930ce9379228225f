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
		_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
		if err != nil {
			b.Fatal(err)
		}
		if s := rep.Summary(); s.PlansCreated != 200 || s.TargetsPatched != 2000 {
			b.Fatalf("summary %+v", s)
		}
	}
}

// BenchmarkUpdatePath measures PlanApply on the update path against the
// in-memory fake service with 5 ms per request (no HTTP, no sandbox CPU:
// the latency scheduling alone): 200 stored plans, 50 of them with a
// counter changed, concurrency 32.
func BenchmarkUpdatePath(b *testing.B) {
	const delay = 5 * time.Millisecond
	plans := func(v int64) []*InputPlan {
		var ps []*InputPlan
		for p := range 200 {
			c := map[string]int64{amt: int64(p%7 + 1), wfs: 2}
			if p%4 == 0 {
				c[amt] = 10 + v
			}
			ps = append(ps, inPlan(acmeCo.VATNumber, fmt.Sprintf("Update %03d", p), "2025-09-01", "2030-08-31", "", c, map[string]int64{ifu: 1}))
		}
		return ps
	}
	w := newWorld()
	r := NewRunner(w.accounts, w.finder, RunOptions{Concurrency: 32, NoRecalc: true})
	r.PlanApply(context.Background(), plans(1), time.Now(), ApplyHooks{})
	w.acme.delay = delay
	b.ResetTimer()
	for i := range b.N {
		r := NewRunner(w.accounts, w.finder, RunOptions{Concurrency: 32, NoRecalc: true})
		_, rep, _, err := r.PlanApply(context.Background(), plans(int64(i%2)), time.Now(), ApplyHooks{})
		if err != nil {
			b.Fatal(err)
		}
		if s := rep.Summary(); s.PlansUpdated != 50 || s.TargetsPatched != 50 {
			b.Fatalf("summary %+v", s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/apply")
}
