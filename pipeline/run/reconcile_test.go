package run

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// rcService is a read-only in-memory PlanService for reconcile tests.
type rcService struct {
	plans  []pipeline.Plan
	writes int
}

func (s *rcService) ListPlans(context.Context) ([]pipeline.Plan, error) {
	out := make([]pipeline.Plan, len(s.plans))
	for i, p := range s.plans {
		p.Milestones = nil
		out[i] = p
	}
	return out, nil
}

func (s *rcService) GetPlan(_ context.Context, id int64) (*pipeline.Plan, error) {
	for i := range s.plans {
		if s.plans[i].ID == id {
			p := s.plans[i]
			return &p, nil
		}
	}
	return nil, pipeline.ErrNotFound
}

func (s *rcService) CreatePlan(context.Context, pipeline.NewPlan) (*pipeline.Plan, error) {
	s.writes++
	return nil, pipeline.ErrInvalid
}

func (s *rcService) UpdatePlan(context.Context, int64, pipeline.PlanChange) (*pipeline.Plan, error) {
	s.writes++
	return nil, pipeline.ErrInvalid
}

func (s *rcService) DeletePlan(context.Context, int64) error { s.writes++; return pipeline.ErrInvalid }

func (s *rcService) UpdateTarget(context.Context, int64, int64, int64, map[string]int64) (*pipeline.Target, error) {
	s.writes++
	return nil, pipeline.ErrInvalid
}

func (s *rcService) RecalculateScorecard(context.Context, string) error {
	s.writes++
	return pipeline.ErrInvalid
}

func rcStored(id int64, name, start string) pipeline.Plan {
	p := pipeline.Plan{ID: id, Name: name, StartDate: pipelinetest.Day(start), EndDate: pipeline.LatestEnd, Era: pipeline.EraPost2025}
	for y, fy := range pipeline.PlanYears(p.StartDate, p.EndDate) {
		m := pipeline.Milestone{ID: id*10 + int64(y+1), YearNumber: y + 1, StartDate: fy.Start(), EndDate: fy.End()}
		for k, tt := range pipeline.TargetTypes {
			c := map[string]int64{}
			for _, n := range pipeline.DefaultCatalog().Names() {
				c[n] = 2
			}
			m.Targets = append(m.Targets, pipeline.Target{ID: m.ID*10 + int64(k), TargetType: tt, Counters: pipeline.CountersOf(c)})
		}
		p.Milestones = append(p.Milestones, m)
	}
	return p
}

func TestReconcileClassifiesPlans(t *testing.T) {
	svc := &rcService{plans: []pipeline.Plan{
		rcStored(1, "In sync", "2026-09-01"),
		rcStored(2, "Differs", "2026-09-01"),
		rcStored(3, "Server only", "2026-09-01"),
		rcStored(4, "Dates differ", "2026-09-01"),
	}}
	file := func(o pipeline.Origin) pipeline.Origin { o.File = "plans.xlsx"; o.Sheet = "Targets"; return o }
	cell := file(pipeline.Origin{Cell: "M7", Row: 7, Column: 13})
	top := pipeline.CounterName("african", "male", "top_managers")
	semi := pipeline.CounterName("white", "female", "semi_skilled_employees")
	plans := []*pipeline.InputPlan{
		{PlanID: 1, Name: "In sync", Origin: file(pipeline.Origin{Row: 2}), Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{top: 2, semi: 2})},
		}},
		{PlanID: 2, Name: "Differs", Origin: file(pipeline.Origin{Row: 3}), Targets: []*pipeline.InputTarget{
			{YearNumber: 2, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(map[string]int64{top: 2, semi: 5}), Cells: map[string]pipeline.Origin{semi: cell}},
		}},
		{Name: "New plan", StartDate: pipelinetest.Day("2027-09-01"), EndDate: pipelinetest.Day("2030-08-31"), Origin: file(pipeline.Origin{Row: 4}),
			Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{top: 1})}}},
		{PlanID: 99, Name: "Deleted", Origin: file(pipeline.Origin{Row: 5}), Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{top: 1})}}},
		{PlanID: 4, Name: "Dates differ", StartDate: pipelinetest.Day("2027-09-01"), Origin: file(pipeline.Origin{Row: 6})},
	}
	accounts := []pipeline.Account{{Name: "acme", CompanyID: "8ovHrj", Service: svc}}
	r := NewRunner(accounts, nil, RunOptions{})
	cs, err := r.Plan(context.Background(), plans)
	if err != nil {
		t.Fatal(err)
	}
	rec := diff.Reconcile(cs, accounts)
	if svc.writes != 0 {
		t.Fatalf("reconcile wrote %d times", svc.writes)
	}
	want := []struct {
		id       int64
		presence diff.Presence
		inSync   bool
	}{
		{1, diff.PresencePresent, true},
		{2, diff.PresencePresent, false},
		{0, diff.PresenceMissing, false},
		{99, diff.PresenceMissing, false},
		{4, diff.PresencePresent, false},
		{3, diff.PresenceOnlyOnServer, false},
	}
	if len(rec.Plans) != len(want) {
		t.Fatalf("%d plans: %+v", len(rec.Plans), rec.Plans)
	}
	for i, w := range want {
		p := rec.Plans[i]
		if p.PlanID != w.id || p.Presence != w.presence || p.InSync != w.inSync {
			t.Errorf("plan %d: id %d %s in_sync %v; want %d %s %v (%s)", i, p.PlanID, p.Presence, p.InSync, w.id, w.presence, w.inSync, p.Reason)
		}
	}
	d := rec.Plans[1]
	if len(d.Targets) != 1 || len(d.Targets[0].Counters) != 1 {
		t.Fatalf("differing plan: %+v", d.Targets)
	}
	c := d.Targets[0].Counters[0]
	if c.Counter != semi || c.Workbook != 5 || c.Server != 2 || c.Location.Cell != "M7" || d.Targets[0].YearNumber != 2 ||
		d.Targets[0].FinancialYear != "2027/28" || d.Targets[0].TargetType != pipeline.TargetDisabled || d.Targets[0].TargetID == 0 {
		t.Errorf("difference %+v in %+v", c, d.Targets[0])
	}
	dates := rec.Plans[4]
	if len(dates.Fields) != 1 || dates.Fields[0].Field != "start_date" || dates.Fields[0].Server != "2026-09-01" || dates.Reason == "" {
		t.Errorf("dates plan: %+v", dates)
	}
	s := rec.Summary
	if s.PlansInSync != 1 || s.PlansDiffering != 2 || s.PlansMissingOnServer != 2 || s.PlansOnlyOnServer != 1 || s.CountersDiffering != 1 || rec.InSync {
		t.Errorf("summary %+v in_sync %v", s, rec.InSync)
	}
	var b strings.Builder
	if err := rec.Render(&b); err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{"workbook 5, service 2", "only on the service: plan 3", "missing on the service", "1 in sync, 2 differ"} {
		if !strings.Contains(b.String(), frag) {
			t.Errorf("render lacks %q:\n%s", frag, b.String())
		}
	}

	// The JSON shape is the documented one.
	rec.GeneratedAt = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"schema":"eepipe.reconcile/v1"`, `"presence":"only_on_server"`, `"counters":[{"counter":"` + semi + `","workbook":5,"server":2,"location":{"file":"plans.xlsx","sheet":"Targets","cell":"M7"}}]`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON lacks %s:\n%s", key, js)
		}
	}

	// In sync when only the plan in sync is in the workbook... except that
	// the others are then only on the server.
	cs, _ = NewRunner(accounts, nil, RunOptions{}).Plan(context.Background(), plans[:1])
	if rec := diff.Reconcile(cs, accounts); rec.InSync || rec.Summary.PlansOnlyOnServer != 3 {
		t.Errorf("one plan of four: in_sync %v, only on server %d", rec.InSync, rec.Summary.PlansOnlyOnServer)
	}
	svc.plans = svc.plans[:1]
	cs, _ = NewRunner(accounts, nil, RunOptions{}).Plan(context.Background(), plans[:1])
	clean := diff.Reconcile(cs, accounts)
	if !clean.InSync {
		t.Errorf("the only plan in sync: %+v", clean.Summary)
	}
	clean.MarkStopped("stopped")
	if clean.InSync || clean.Complete {
		t.Error("a stopped reconciliation is in sync")
	}
}
