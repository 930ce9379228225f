package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/apiclient"
)

// TestPlanProperties checks, for random dates and random counter patches,
// that a created plan has one whole-financial-year milestone per year its
// (clamped) dates overlap, and that a PATCH leaves exactly the stored
// counters overlaid with the patch.
func TestPlanProperties(t *testing.T) {
	srv := startSandbox(t, Options{})
	names := served.names
	const day = "2006-01-02"
	first := time.Date(2025, time.September, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(2030, time.August, 31, 0, 0, 0, 0, time.UTC)
	draw := func(tt *rapid.T, label string, from, to time.Time) time.Time {
		span := int(to.Sub(from).Hours() / 24)
		return from.AddDate(0, 0, rapid.IntRange(0, span).Draw(tt, label))
	}
	// fyStart returns 1 September of the financial year holding d.
	fyStart := func(d time.Time) time.Time {
		y := d.Year()
		if d.Month() < time.September {
			y--
		}
		return time.Date(y, time.September, 1, 0, 0, 0, 0, time.UTC)
	}
	rapid.Check(t, func(tt *rapid.T) {
		c := caller{t: t, base: srv.URL, key: acmeKey, secret: acmeSecret}
		start := draw(tt, "start", first, last)
		end := draw(tt, "end", start, time.Date(2034, time.December, 31, 0, 0, 0, 0, time.UTC))
		r := c.do("POST", plansPath, planBody(fmt.Sprintf(`"start_date":%q,"end_date":%q`, start.Format(day), end.Format(day))))
		if r.status != 201 {
			tt.Fatalf("create %s..%s: %d %s", start.Format(day), end.Format(day), r.status, r.body)
		}
		var p apiclient.Plan
		if err := json.Unmarshal(r.body, &p); err != nil {
			tt.Fatal(err)
		}
		clamped := end
		if clamped.After(last) {
			clamped = last
		}
		if p.EndDate != clamped.Format(day) {
			tt.Fatalf("end %s, want %s", p.EndDate, clamped.Format(day))
		}
		// One milestone per financial year from the one holding the start
		// to the one holding the clamped end, each a whole year.
		fy := fyStart(start)
		for i, m := range p.Milestones {
			if m.YearNumber != i+1 || m.StartDate != fy.Format(day) || m.EndDate != fy.AddDate(1, 0, -1).Format(day) {
				tt.Fatalf("milestone %d = %d %s..%s, want %s..", i, m.YearNumber, m.StartDate, m.EndDate, fy.Format(day))
			}
			fy = fy.AddDate(1, 0, 0)
		}
		if len(p.Milestones) == 0 || !fy.After(clamped) || fy.AddDate(-1, 0, 0).After(clamped) {
			tt.Fatalf("%d milestones do not end with the financial year holding %s", len(p.Milestones), clamped.Format(day))
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
