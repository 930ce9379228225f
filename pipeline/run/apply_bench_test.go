package run

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// BenchmarkPlanAndApply measures the pipeline's own cost (diff, routing,
// gate, bookkeeping) for 200 new plans with 2,000 targets against the
// in-memory fake service, without HTTP; compare with cmd/eepipe's
// BenchmarkApply, which goes through the client and the sandbox.
func BenchmarkPlanAndApply(b *testing.B) {
	var plans []*pipeline.InputPlan
	for p := range 200 {
		var cs []map[string]int64
		for y := range 5 {
			cs = append(cs, map[string]int64{pipelinetest.Amt: int64(p%7 + 1), pipelinetest.Wfs: int64(y), pipelinetest.Ifu: 3})
		}
		in := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprintf("Bench %03d", p), "2025-09-01", "2030-08-31", "", cs...)
		for y := range 5 {
			in.Targets = append(in.Targets, &pipeline.InputTarget{YearNumber: y + 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 1})})
		}
		plans = append(plans, in)
	}
	b.ReportAllocs()
	for range b.N {
		w := pipelinetest.NewWorld()
		r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 32, NoRecalc: true})
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
	plans := func(v int64) []*pipeline.InputPlan {
		var ps []*pipeline.InputPlan
		for p := range 200 {
			c := map[string]int64{pipelinetest.Amt: int64(p%7 + 1), pipelinetest.Wfs: 2}
			if p%4 == 0 {
				c[pipelinetest.Amt] = 10 + v
			}
			ps = append(ps, pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprintf("Update %03d", p), "2025-09-01", "2030-08-31", "", c, map[string]int64{pipelinetest.Ifu: 1}))
		}
		return ps
	}
	w := pipelinetest.NewWorld()
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 32, NoRecalc: true})
	r.PlanApply(context.Background(), plans(1), time.Now(), ApplyHooks{})
	w.Acme.Delay = delay
	b.ResetTimer()
	for i := range b.N {
		r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 32, NoRecalc: true})
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
