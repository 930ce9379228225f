package diff

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
	"pgregory.net/rapid"
)

// TestDiffProperties checks, over generated plans and inputs, that applying
// the diff's patches to the stored plan makes the next diff unchanged, that
// only counters that differ are sent, and that blank counters are never sent.
func TestDiffProperties(t *testing.T) {
	names := pipeline.DefaultCatalog().Names()
	rapid.Check(t, func(t *rapid.T) {
		years := rapid.IntRange(1, 5).Draw(t, "years")
		start := pipelinetest.Day("2025-09-01")
		end := pipeline.FinancialYear(2025 + years - 1).End()
		s := pipelinetest.NewFakeService(&atomic.Int64{}, "scorecard_acme_2025")
		prefilled := rapid.Bool().Draw(t, "prefilled")
		np := pipeline.NewPlan{Name: "P", StartDate: start, EndDate: end}
		if prefilled {
			np.ScorecardID = "scorecard_acme_2025"
		}
		server, err := s.CreatePlan(context.Background(), np)
		if err != nil {
			t.Fatal(err)
		}
		in := &pipeline.InputPlan{Name: "P", StartDate: start}
		seen := map[[2]any]bool{}
		for range rapid.IntRange(0, 6).Draw(t, "targets") {
			y := rapid.IntRange(1, years).Draw(t, "year")
			typ := rapid.SampledFrom(pipeline.TargetTypes).Draw(t, "type")
			if seen[[2]any{y, typ}] {
				continue
			}
			seen[[2]any{y, typ}] = true
			tg := &pipeline.InputTarget{YearNumber: y, TargetType: typ, Counters: pipeline.CountersOf(map[string]int64{})}
			for range rapid.IntRange(0, 8).Draw(t, "counters") {
				tg.Counters.Put(rapid.SampledFrom(names).Draw(t, "name"), rapid.Int64Range(0, 9).Draw(t, "value"))
			}
			in.Targets = append(in.Targets, tg)
		}
		d := Diff(in, server, DiffOptions{})
		if d.Action == ActionFailed {
			t.Fatalf("diff failed: %s", d.Reason)
		}
		for i, td := range d.Targets {
			stored := findTarget(findMilestone(server, td.YearNumber), td.TargetType).Counters.Map()
			want := 0
			for n, v := range in.Targets[i].Counters.All() {
				if stored[n] != v {
					want++
				}
			}
			if len(td.Changes) != want {
				t.Fatalf("target %s: %d changes, want %d", td.Label(), len(td.Changes), want)
			}
			for _, c := range td.Changes {
				if _, set := in.Targets[i].Counters.Map()[c.Name]; !set || c.Old != stored[c.Name] || c.New == c.Old {
					t.Fatalf("change %v is not a file value that differs", c)
				}
			}
			if len(td.Changes) > 0 {
				if _, err := s.UpdateTarget(context.Background(), server.ID, td.MilestoneID, td.TargetID, td.Patch()); err != nil {
					t.Fatal(err)
				}
			}
		}
		after, _ := s.GetPlan(context.Background(), server.ID)
		if d2 := Diff(in, after, DiffOptions{}); d2.Action != ActionUnchanged || d2.countersToChange() != 0 {
			t.Fatalf("after applying the patches the diff is %s with %d changes", d2.Action, d2.countersToChange())
		}
		if (d.Action == ActionUnchanged) != (d.countersToChange() == 0) {
			t.Fatalf("action %s with %d changes", d.Action, d.countersToChange())
		}
	})
}
