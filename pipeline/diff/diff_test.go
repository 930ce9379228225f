package diff

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// stored creates p on a fresh fake service and returns the stored plan.
func stored(t *testing.T, np pipeline.NewPlan, set map[string]int64) *pipeline.Plan {
	t.Helper()
	s := pipelinetest.NewFakeService(&atomic.Int64{}, "scorecard_acme_2025")
	p, err := s.CreatePlan(context.Background(), np)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Milestones {
		for j := range p.Milestones[i].Targets {
			for k, v := range set {
				p.Milestones[i].Targets[j].Counters.Put(k, v)
			}
		}
	}
	return p
}

func TestDiff(t *testing.T) {
	base := pipeline.NewPlan{Name: "Acme 2025", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31"), Sector: "Manufacturing"}
	tests := []struct {
		name       string
		in         *pipeline.InputPlan
		server     *pipeline.Plan
		opts       DiffOptions
		action     Action
		changes    []string // "counter old->new" over all targets, "?" for unknown old
		fields     []string
		reasonHas  string
		targetsIDs bool
	}{
		{
			name:    "create without scorecard sends only non-zero counters",
			in:      pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}),
			action:  ActionCreate,
			changes: []string{pipelinetest.Amt + " 0->3"},
			fields:  []string{"name"},
		},
		{
			name:    "create with scorecard: old values unknown, every file counter sent",
			in:      pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}),
			action:  ActionCreate,
			changes: []string{pipelinetest.Amt + " ?->3", pipelinetest.Wfs + " ?->0"},
			fields:  []string{"name", "scorecard_id"},
		},
		{
			name:      "create needs dates",
			in:        pipelinetest.InPlan("", "New", "2026-09-01", "", "", map[string]int64{pipelinetest.Amt: 3}),
			action:    ActionFailed,
			reasonHas: "start_date and end_date",
		},
		{
			name:      "create with a year after the plan's end",
			in:        pipelinetest.InPlan("", "New", "2026-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 1}, map[string]int64{pipelinetest.Amt: 2}),
			action:    ActionFailed,
			reasonHas: "year 2 is not a year of",
		},
		{
			name:      "plan id not on the service",
			in:        &pipeline.InputPlan{PlanID: 99, Name: "X"},
			action:    ActionFailed,
			reasonHas: "plan 99 is not on the service",
		},
		{
			name:       "update sends only differing counters",
			in:         pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 5, pipelinetest.Wfs: 2}, nil, map[string]int64{pipelinetest.Ifu: 9}),
			server:     stored(t, base, map[string]int64{pipelinetest.Amt: 5, pipelinetest.Wfs: 1}),
			action:     ActionUpdate,
			changes:    []string{pipelinetest.Wfs + " 1->2", pipelinetest.Ifu + " 0->9"},
			targetsIDs: true,
		},
		{
			name:   "nothing differs",
			in:     pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 5}),
			server: stored(t, base, map[string]int64{pipelinetest.Amt: 5}),
			action: ActionUnchanged,
		},
		{
			name:   "end date after 2030-08-31 is compared clamped",
			in:     pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2032-08-31", "", map[string]int64{pipelinetest.Amt: 5}),
			server: stored(t, base, map[string]int64{pipelinetest.Amt: 5}),
			action: ActionUnchanged,
		},
		{
			name:   "metadata differences; blank fields leave the server alone",
			in:     &pipeline.InputPlan{Name: "Acme renamed", Sector: "Construction", StartDate: pipelinetest.Day("2025-09-01")},
			server: stored(t, base, nil),
			action: ActionUpdate,
			fields: []string{"name", "sector"},
		},
		{
			name:      "date change fails and explains",
			in:        pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2028-08-31", "", map[string]int64{pipelinetest.Amt: 5}),
			server:    stored(t, base, nil),
			action:    ActionFailed,
			reasonHas: "--recreate-on-date-change",
		},
		{
			name:      "date change recreates when asked",
			in:        pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2028-08-31", "", map[string]int64{pipelinetest.Amt: 5}),
			server:    stored(t, base, nil),
			opts:      DiffOptions{RecreateOnDateChange: true},
			action:    ActionRecreate,
			changes:   []string{pipelinetest.Amt + " 0->5"},
			fields:    []string{"end_date"},
			reasonHas: "created again",
		},
		{
			name:      "year outside an existing plan",
			in:        &pipeline.InputPlan{PlanID: 1, Targets: []*pipeline.InputTarget{{YearNumber: 7, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 1})}}},
			server:    stored(t, base, nil),
			action:    ActionFailed,
			reasonHas: "years 1 to 5",
		},
		{
			name:      "counter the service does not carry",
			in:        pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "", "", map[string]int64{"number_of_martian_male_top_managers": 1}),
			server:    stored(t, base, nil),
			action:    ActionFailed,
			reasonHas: "does not know the counter number_of_martian_male_top_managers",
		},
		{
			name: "financial year resolves against the server's start",
			in: &pipeline.InputPlan{PlanID: 1, Targets: []*pipeline.InputTarget{{FinancialYear: 2027, TargetType: pipeline.TargetDisabled,
				Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 4})}}},
			server:  stored(t, base, nil),
			action:  ActionUpdate,
			changes: []string{pipelinetest.Amt + " 0->4"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff(tc.in, tc.server, tc.opts)
			if d.Action != tc.action {
				t.Fatalf("action = %s (%s), want %s", d.Action, d.Reason, tc.action)
			}
			if tc.reasonHas != "" && !strings.Contains(d.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", d.Reason, tc.reasonHas)
			}
			var got []string
			for _, td := range d.Targets {
				if tc.targetsIDs && len(td.Changes) > 0 && (td.TargetID == 0 || td.MilestoneID == 0) {
					t.Errorf("target %s has no ids", td.Label())
				}
				for _, c := range td.Changes {
					old := "?"
					if c.OldKnown {
						old = itoa(c.Old)
					}
					got = append(got, c.Name+" "+old+"->"+itoa(c.New))
					if c.Origin.Header != c.Name && tc.in.Origin.File != "" {
						t.Errorf("change %s has origin %+v, want the file cell", c.Name, c.Origin)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.changes, ",") {
				t.Errorf("changes = %v, want %v", got, tc.changes)
			}
			var fields []string
			for _, f := range d.Fields {
				fields = append(fields, f.Field)
			}
			if tc.fields != nil && strings.Join(fields, ",") != strings.Join(dedupe(tc.fields), ",") {
				t.Errorf("fields = %v, want %v", fields, dedupe(tc.fields))
			}
		})
	}
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDiffPatchAfterPrefilledCreate(t *testing.T) {
	in := pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 7, pipelinetest.Wfs: 1})
	created := stored(t, pipeline.NewPlan{Name: "New", StartDate: in.StartDate, EndDate: in.EndDate, ScorecardID: "scorecard_acme_2025"}, nil)
	d := Diff(in, created, DiffOptions{})
	if d.Action != ActionUpdate || d.countersToChange() != 1 || d.Targets[0].Changes[0].Name != pipelinetest.Wfs {
		t.Fatalf("after prefill want only %s patched, got %s %+v", pipelinetest.Wfs, d.Action, d.Targets)
	}
	if got := d.Targets[0].Patch(); len(got) != 1 || got[pipelinetest.Wfs] != 1 {
		t.Errorf("patch = %v", got)
	}
}

func TestResolveCompany(t *testing.T) {
	tests := []struct {
		name    string
		ids     pipeline.CompanyIDs
		recs    []pipeline.Company
		want    string
		errIs   error
		errHas  string
		ambigue bool
	}{
		{name: "one", ids: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber}, recs: []pipeline.Company{pipelinetest.AcmeCo}, want: pipelinetest.AcmeCo.ID},
		{name: "same company twice", ids: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber, Registration: pipelinetest.AcmeCo.RegistrationNumber}, recs: []pipeline.Company{pipelinetest.AcmeCo, pipelinetest.AcmeCo}, want: pipelinetest.AcmeCo.ID},
		{name: "none", ids: pipeline.CompanyIDs{VAT: "1"}, errIs: pipeline.ErrCompanyNotFound},
		{name: "two companies", ids: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber, Registration: pipelinetest.CraneCo.RegistrationNumber}, recs: []pipeline.Company{pipelinetest.AcmeCo, pipelinetest.CraneCo},
			ambigue: true, errHas: "Blue Crane Logistics"},
		{name: "contradicting identifier", ids: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber, Registration: "1999/000000/07"}, recs: []pipeline.Company{pipelinetest.AcmeCo},
			ambigue: true, errHas: "not 1999/000000/07"},
		{name: "identifier with spaces", ids: pipeline.CompanyIDs{VAT: " 4012345678 "}, recs: []pipeline.Company{pipelinetest.AcmeCo}, want: pipelinetest.AcmeCo.ID},
		{name: "registration written with dashes", ids: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber, Registration: "2009-012345-07"}, recs: []pipeline.Company{pipelinetest.AcmeCo}, want: pipelinetest.AcmeCo.ID},
		{name: "leading zeros count", ids: pipeline.CompanyIDs{VAT: "412345678"}, recs: []pipeline.Company{pipelinetest.KarooCo}, ambigue: true, errHas: "VAT number is 0412345678"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := pipeline.ResolveCompany(tc.ids, tc.recs)
			if tc.want != "" {
				if err != nil || c.ID != tc.want {
					t.Fatalf("got %v, %v; want %s", c, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error, got %v", c)
			}
			if tc.errIs != nil && !errors.Is(err, tc.errIs) {
				t.Errorf("error %v is not %v", err, tc.errIs)
			}
			var ae *pipeline.AmbiguousCompanyError
			if tc.ambigue != errors.As(err, &ae) {
				t.Errorf("ambiguous = %v for %v", !tc.ambigue, err)
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %q does not contain %q", err, tc.errHas)
			}
		})
	}
}

func TestChangeSetRender(t *testing.T) {
	server := stored(t, pipeline.NewPlan{Name: "Acme 2025", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31")}, nil)
	server.ID = 17
	cs := &ChangeSet{Plans: []*PlanDiff{
		Diff(pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 3}), nil, DiffOptions{}),
		Diff(pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "", "", map[string]int64{pipelinetest.Wfs: 2}), server, DiffOptions{}),
		Diff(pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "", ""), server, DiffOptions{}),
		Failed(pipelinetest.InPlan("1", "Lost", "2026-09-01", "", ""), "company not found: no company has VAT 1"),
	}}
	cs.Plans[0].Account = "acme"
	var b bytes.Buffer
	if err := cs.Render(&b, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`+ create plan "New" starting 2026-09-01 (account acme)`,
		"pre-filled from scorecard scorecard_acme_2025",
		pipelinetest.Amt + "  (prefill) -> 3",
		`~ update plan 17 "Acme 2025"`,
		pipelinetest.Wfs + "  0 -> 2",
		`! failed plan "Lost" starting 2026-09-01 (company VAT 1): company not found`,
		"(1 unchanged plans not listed)",
		"Plan: 1 to create, 1 to update, 0 to recreate, 1 unchanged, 1 failed; 2 targets to patch, 2 counters to change.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if !cs.HasChanges() || !cs.HasFailures() {
		t.Error("HasChanges/HasFailures false")
	}
}

// TestDiffChangesHeldWithoutSpareRoom: a target's changes, held until the
// run ends, take the room they need, for a plan to create and for the diff
// against the created plan (docs/performance.md, "A first apply of 2,000
// new plans").
func TestDiffChangesHeldWithoutSpareRoom(t *testing.T) {
	counters := map[string]int64{}
	for i, name := range pipeline.DefaultCatalog().Names() {
		counters[name] = int64(i%5 + 1)
	}
	in := pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "", counters)
	for name, d := range map[string]*PlanDiff{
		"create":          Diff(in, nil, DiffOptions{}),
		"against created": Diff(in, stored(t, pipeline.NewPlan{Name: "New", StartDate: in.StartDate, EndDate: in.EndDate}, nil), DiffOptions{}),
	} {
		if d.countersToChange() == 0 {
			t.Fatalf("%s: no changes: %s %s", name, d.Action, d.Reason)
		}
		for _, td := range d.Targets {
			if n, c := len(td.Changes), cap(td.Changes); c > n+n/8 {
				t.Errorf("%s: %d changes in room for %d", name, n, c)
			}
		}
	}
}

// TestDropChangesKeepsCounts: a diff whose changes were let go still
// counts them, as the change set's summary and the run's report read them.
func TestDropChangesKeepsCounts(t *testing.T) {
	in := pipelinetest.InPlan("", "New", "2026-09-01", "2028-08-31", "",
		map[string]int64{pipelinetest.Amt: 7, pipelinetest.Wfs: 1}, map[string]int64{pipelinetest.Amt: 0})
	d := Diff(in, nil, DiffOptions{})
	counters, targets := d.countersToChange(), d.targetsToPatch()
	if counters != 2 || targets != 1 {
		t.Fatalf("before: %d counters in %d targets, want 2 in 1", counters, targets)
	}
	d.DropChanges()
	for i, td := range d.Targets {
		if td.Changes != nil {
			t.Errorf("target %d kept %d changes", i, len(td.Changes))
		}
	}
	if c, n := d.countersToChange(), d.targetsToPatch(); c != counters || n != targets {
		t.Errorf("after: %d counters in %d targets, want %d in %d", c, n, counters, targets)
	}
}
