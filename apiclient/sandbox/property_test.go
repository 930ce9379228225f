package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// TestPlanProperties checks, for random dates and random counter patches,
// that a created plan has one whole-financial-year milestone per year its
// (clamped) dates overlap, and that a PATCH leaves exactly the stored
// counters overlaid with the patch.
func TestPlanProperties(t *testing.T) {
	srv := startSandbox(t, Options{})
	names := pipeline.DefaultCatalog().Names()
	day := func(tt *rapid.T, label string, from, to pipeline.Date) pipeline.Date {
		span := int(to.Time().Sub(from.Time()).Hours() / 24)
		return pipeline.DateOf(from.Time().AddDate(0, 0, rapid.IntRange(0, span).Draw(tt, label)))
	}
	rapid.Check(t, func(tt *rapid.T) {
		c := caller{t: t, base: srv.URL, key: acmeKey, secret: acmeSecret}
		start := day(tt, "start", pipeline.EarliestStart, pipeline.LatestEnd)
		end := day(tt, "end", start, pipeline.Date{Year: 2034, Month: time.December, Day: 31})
		r := c.do("POST", plansPath, planBody(fmt.Sprintf(`"start_date":%q,"end_date":%q`, start, end)))
		if r.status != 201 {
			tt.Fatalf("create %s..%s: %d %s", start, end, r.status, r.body)
		}
		var p apiclient.Plan
		if err := json.Unmarshal(r.body, &p); err != nil {
			tt.Fatal(err)
		}
		clamped := pipeline.ClampEnd(end)
		if p.EndDate != clamped.String() {
			tt.Fatalf("end %s, want %s", p.EndDate, clamped)
		}
		years := pipeline.PlanYears(start, clamped)
		if len(p.Milestones) != len(years) || len(years) == 0 {
			tt.Fatalf("%d milestones for %s..%s, want %d", len(p.Milestones), start, clamped, len(years))
		}
		for i, m := range p.Milestones {
			if m.YearNumber != i+1 || m.StartDate != years[i].Start().String() || m.EndDate != years[i].End().String() {
				tt.Fatalf("milestone %d = %d %s..%s", i, m.YearNumber, m.StartDate, m.EndDate)
			}
		}
		if p.Milestones[0].StartDate > start.String() || p.Milestones[len(years)-1].EndDate < clamped.String() {
			tt.Fatal("milestones do not cover the plan")
		}

		mi := rapid.IntRange(0, len(p.Milestones)-1).Draw(tt, "milestone")
		ti := rapid.IntRange(0, 1).Draw(tt, "target")
		patch := rapid.MapOf(rapid.SampledFrom(names), rapid.Int64Range(0, 1e6)).Draw(tt, "patch")
		body, _ := json.Marshal(map[string]any{"employment_equity_target": patch})
		c.must(200, "PATCH", targetPath(p, mi, ti), string(body))
		want := maps.Clone(p.Milestones[mi].Targets[ti].Counters)
		maps.Copy(want, patch)
		var stored apiclient.Plan
		for _, sp := range srv.Sandbox.Plans("acme") {
			if sp.ID == p.ID {
				stored = sp
			}
		}
		if got := stored.Milestones[mi].Targets[ti].Counters; !maps.Equal(got, want) {
			tt.Fatalf("after patch %v: counters differ", patch)
		}
		c.must(204, "DELETE", fmt.Sprintf("%s/%d", plansPath, p.ID), "")
	})
}

func BenchmarkUpdateTarget(b *testing.B) {
	srv, err := Start("127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := caller{t: &testing.T{}, base: srv.URL, key: acmeKey, secret: acmeSecret}
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31"`))
	path := targetPath(p, 2, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.do("PATCH", path, targetBody(fmt.Sprintf(`"number_of_african_male_top_managers":%d`, i))); r.status != 200 {
			b.Fatalf("status %d", r.status)
		}
	}
}

func BenchmarkCreatePlan(b *testing.B) {
	srv, err := Start("127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := caller{t: &testing.T{}, base: srv.URL, key: acmeKey, secret: acmeSecret}
	body := planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.do("POST", plansPath, body); r.status != 201 {
			b.Fatalf("status %d", r.status)
		}
	}
}
