package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

func planBody(fields string) string { return `{"employment_equity_plan":{` + fields + `}}` }

func TestCreatePlanShape(t *testing.T) {
	now := time.Date(2026, 11, 22, 8, 30, 0, 123e6, time.UTC)
	srv := startSandbox(t, Options{Now: func() time.Time { return now }})
	c := srv.as(t, acmeKey, acmeSecret)
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31"`))
	if p.Name != "EE Plan 2025-09-01 to 2030-08-31" {
		t.Errorf("derived name %q", p.Name)
	}
	if p.Era != "post_2025" || p.ScorecardID != nil || p.Sector != nil {
		t.Errorf("era %q scorecard %v sector %v", p.Era, p.ScorecardID, p.Sector)
	}
	if p.CreatedAt != "2026-11-22T08:30:00.123Z" || p.UpdatedAt != p.CreatedAt {
		t.Errorf("timestamps %q %q", p.CreatedAt, p.UpdatedAt)
	}
	if len(p.Milestones) != 5 {
		t.Fatalf("%d milestones, want 5", len(p.Milestones))
	}
	ids := map[int64]bool{p.ID: true}
	for i, m := range p.Milestones {
		fyStart, fyEnd := fmt.Sprintf("%d-09-01", 2025+i), fmt.Sprintf("%d-08-31", 2026+i)
		if m.YearNumber != i+1 || m.StartDate != fyStart || m.EndDate != fyEnd {
			t.Errorf("milestone %d: year %d %s..%s", i, m.YearNumber, m.StartDate, m.EndDate)
		}
		if len(m.Targets) != 2 || m.Targets[0].TargetType != "all_employees" || m.Targets[1].TargetType != "disabled_employees" {
			t.Fatalf("milestone %d targets %+v", i, m.Targets)
		}
		for _, tg := range m.Targets {
			if len(tg.Counters) != 90 {
				t.Errorf("target has %d counters, want 90", len(tg.Counters))
			}
			for _, n := range served.names {
				if v, ok := tg.Counters[n]; !ok || v != 0 {
					t.Errorf("counter %s = %d (present %v), want 0", n, v, ok)
				}
			}
			ids[tg.ID] = true
		}
		ids[m.ID] = true
	}
	if len(ids) != 1+5+10 {
		t.Errorf("ids are not distinct: %v", ids)
	}
	// Retrieve returns the same; list has no milestones.
	var got apiclient.Plan
	c.must(200, "GET", fmt.Sprintf("%s/%d", plansPath, p.ID), "").decode(t, &got)
	if fmt.Sprint(got) != fmt.Sprint(p) {
		t.Errorf("retrieve differs from create:\n%v\n%v", got, p)
	}
	r := c.must(200, "GET", plansPath, "")
	if strings.Contains(string(r.body), "milestones") {
		t.Errorf("list carries milestones: %s", r.body)
	}
	var list []apiclient.Plan
	r.decode(t, &list)
	if len(list) != 1 || list[0].ID != p.ID || list[0].Name != p.Name || list[0].Era != "post_2025" {
		t.Errorf("list %+v", list)
	}
	if !strings.Contains(string(r.body), `"scorecard_id":null`) || !strings.Contains(string(r.body), `"sector":null`) {
		t.Errorf("list must carry scorecard_id and sector as null: %s", r.body)
	}
}

func TestCreatePlanDates(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	tests := []struct {
		start, end string
		wantEnd    string
		years      []string // milestone start dates
	}{
		{"2025-09-01", "2026-08-31", "2026-08-31", []string{"2025-09-01"}},
		{"2026-01-15", "2027-03-01", "2027-03-01", []string{"2025-09-01", "2026-09-01"}},
		{"2026-08-31", "2026-09-01", "2026-09-01", []string{"2025-09-01", "2026-09-01"}},
		{"2027-05-05", "2027-05-05", "2027-05-05", []string{"2026-09-01"}},
		{"2028-09-01", "2040-12-31", "2030-08-31", []string{"2028-09-01", "2029-09-01"}},
		{"2030-08-31", "2031-01-01", "2030-08-31", []string{"2029-09-01"}},
	}
	for _, tc := range tests {
		p := c.createPlan(planBody(fmt.Sprintf(`"name":"x","start_date":%q,"end_date":%q`, tc.start, tc.end)))
		if p.StartDate != tc.start || p.EndDate != tc.wantEnd {
			t.Errorf("%s..%s: stored %s..%s, want end %s", tc.start, tc.end, p.StartDate, p.EndDate, tc.wantEnd)
		}
		var starts []string
		for _, m := range p.Milestones {
			starts = append(starts, m.StartDate)
		}
		if fmt.Sprint(starts) != fmt.Sprint(tc.years) {
			t.Errorf("%s..%s: milestones %v, want %v", tc.start, tc.end, starts, tc.years)
		}
	}
}

func TestCreatePlanRejects(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"start before 2025-09-01", planBody(`"start_date":"2025-08-31","end_date":"2026-08-31"`), 422, "start_date 2025-08-31 must be on or after 2025-09-01"},
		{"start missing", planBody(`"end_date":"2026-08-31"`), 422, "start_date can't be blank"},
		{"start null", planBody(`"start_date":null,"end_date":"2026-08-31"`), 422, "start_date can't be blank"},
		{"start impossible", planBody(`"start_date":"2026-02-30","end_date":"2026-08-31"`), 422, `start_date "2026-02-30" is not a valid date`},
		{"start a number", planBody(`"start_date":20250901,"end_date":"2026-08-31"`), 422, "start_date must be a date string"},
		{"start after 2030-08-31", planBody(`"start_date":"2030-09-01","end_date":"2031-08-31"`), 422, "must be on or before 2030-08-31"},
		{"end missing", planBody(`"start_date":"2025-09-01"`), 422, "end_date can't be blank"},
		{"end malformed", planBody(`"start_date":"2025-09-01","end_date":"31/08/2026"`), 422, `end_date "31/08/2026" is not a valid date`},
		{"end before start", planBody(`"start_date":"2026-09-01","end_date":"2026-08-31"`), 422, "end_date 2026-08-31 must not be before start_date 2026-09-01"},
		{"unknown scorecard", planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_nope"`), 422, "Scorecard not found"},
		{"foreign scorecard", planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_bluecrane_2025"`), 422, "Scorecard not found"},
		{"scorecard a number", planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":7`), 422, "Scorecard not found"},
		{"sector not in list", planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","sector":"manufacturing"`), 422, `sector "manufacturing" is not included in the list`},
		{"sector a number", planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","sector":3`), 422, "sector is not included in the list"},
		{"name a number", planBody(`"name":5,"start_date":"2025-09-01","end_date":"2026-08-31"`), 422, "name must be a string"},
		{"no wrapper", `{"start_date":"2025-09-01","end_date":"2026-08-31"}`, 422, "employment_equity_plan is missing"},
		{"wrapper not an object", `{"employment_equity_plan":[1]}`, 422, "employment_equity_plan must be an object"},
		{"body an array", `[]`, 422, "the body must be an object"},
		{"not JSON", `{"employment_equity_plan":`, 400, "not valid JSON"},
		{"empty body", ``, 400, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("POST", plansPath, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if msgs := strings.Join(r.errors(), " | "); !strings.Contains(msgs, tc.want) {
				t.Errorf("errors %q, want one containing %q", msgs, tc.want)
			}
		})
	}
	// The unknown and the foreign scorecard get the very same body.
	a := c.do("POST", plansPath, planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_nope"`))
	b := c.do("POST", plansPath, planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_bluecrane_2025"`))
	if string(a.body) != string(b.body) {
		t.Errorf("unknown and foreign scorecard answers differ:\n%s\n%s", a.body, b.body)
	}
	// Several problems are reported together.
	r := c.do("POST", plansPath, planBody(`"start_date":"2024-01-01","end_date":"x","sector":"y"`))
	if len(r.errors()) != 3 {
		t.Errorf("want 3 messages, got %q", r.errors())
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 0 {
		t.Errorf("%d plans stored by rejected creates", n)
	}
}

func TestCreatePlanBlankAndNullFields(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	p := c.createPlan(planBody(`"name":"   ","start_date":"2026-03-01","end_date":"2031-02-01","scorecard_id":null,"sector":null,"era":"pre_2025","id":99`))
	if p.Name != "EE Plan 2026-03-01 to 2030-08-31" {
		t.Errorf("name %q: derived from the clamped dates", p.Name)
	}
	if p.Era != "post_2025" || p.ID == 99 {
		t.Errorf("era %q id %d: response-only fields must be ignored", p.Era, p.ID)
	}
	p = c.createPlan(planBody(`"name":"Named","start_date":"2026-03-01","end_date":"2027-02-01","scorecard_id":"","sector":"Construction"`))
	if p.Name != "Named" || p.ScorecardID != nil || p.Sector == nil || *p.Sector != "Construction" {
		t.Errorf("plan %+v", p)
	}
	for _, m := range p.Milestones {
		for _, tg := range m.Targets {
			for n, v := range tg.Counters {
				if v != 0 {
					t.Fatalf("%s = %d without scorecard", n, v)
				}
			}
		}
	}
}

func TestCreatePlanPrefill(t *testing.T) {
	srv := startSandbox(t, Options{})
	fx := DefaultFixtures()
	wf := fx.Scorecards[0].Workforce
	for _, tc := range []struct {
		key, secret, scorecard string
		workforce              *Workforce
	}{
		{acmeKey, acmeSecret, "scorecard_acme_2025", fx.Scorecards[0].Workforce},
		{blueKey, blueSecret, "scorecard_bluecrane_2025", fx.Scorecards[2].Workforce},
		{acmeKey, acmeSecret, "scorecard_acme_2026", nil}, // no workforce: zeros
	} {
		c := srv.as(t, tc.key, tc.secret)
		p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2028-08-31","scorecard_id":"` + tc.scorecard + `"`))
		if p.ScorecardID == nil || *p.ScorecardID != tc.scorecard || len(p.Milestones) != 3 {
			t.Fatalf("plan %+v", p)
		}
		for _, m := range p.Milestones {
			for _, tg := range m.Targets {
				want := tc.workforce.counters(tg.TargetType)
				for _, n := range served.names {
					if tg.Counters[n] != want[n] {
						t.Errorf("%s milestone %d %s %s = %d, want %d", tc.scorecard, m.YearNumber, tg.TargetType, n, tg.Counters[n], want[n])
					}
				}
			}
		}
	}
	if wf.AllEmployees["number_of_african_female_semi_skilled_employees"] == 0 {
		t.Fatal("the example workforce should not be zero")
	}
}

func TestUpdatePlan(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	srv := startSandbox(t, Options{Now: clock.Now})
	c := srv.as(t, acmeKey, acmeSecret)
	p := c.createPlan(planBody(`"name":"Acme EE","start_date":"2025-09-01","end_date":"2027-08-31","scorecard_id":"scorecard_acme_2025","sector":"Manufacturing"`))
	path := fmt.Sprintf("%s/%d", plansPath, p.ID)
	before := p.Milestones
	clock.Add(time.Minute)

	var u apiclient.Plan
	c.must(200, "PATCH", path, planBody(`"name":"Renamed","scorecard_id":"scorecard_acme_2026","sector":null,"start_date":"2026-09-01","end_date":"2030-08-31","era":"pre_2025"`)).decode(t, &u)
	if u.Name != "Renamed" || u.ScorecardID == nil || *u.ScorecardID != "scorecard_acme_2026" || u.Sector != nil {
		t.Errorf("updated %+v", u)
	}
	if u.StartDate != "2025-09-01" || u.EndDate != "2027-08-31" || u.Era != "post_2025" {
		t.Errorf("dates and era must not change: %s..%s %s", u.StartDate, u.EndDate, u.Era)
	}
	if fmt.Sprint(u.Milestones) != fmt.Sprint(before) {
		t.Error("rebinding the scorecard changed milestones or counters (prefill must not re-run)")
	}
	if u.UpdatedAt == u.CreatedAt {
		t.Error("updated_at did not move")
	}
	// Only named fields change; blank name derives one; scorecard null unbinds.
	c.must(200, "PATCH", path, planBody(`"sector":"Construction"`)).decode(t, &u)
	if u.Name != "Renamed" || u.Sector == nil || *u.Sector != "Construction" || u.ScorecardID == nil {
		t.Errorf("partial update %+v", u)
	}
	c.must(200, "PATCH", path, planBody(`"name":"","scorecard_id":null`)).decode(t, &u)
	if u.Name != "EE Plan 2025-09-01 to 2027-08-31" || u.ScorecardID != nil {
		t.Errorf("blank name / null scorecard %+v", u)
	}

	rejects := []struct{ name, body, want string }{
		{"malformed start_date", planBody(`"start_date":"2025-13-01"`), `start_date "2025-13-01" is not a valid date`},
		{"malformed end_date", planBody(`"end_date":"soon"`), `end_date "soon" is not a valid date`},
		{"date not a string", planBody(`"end_date":true`), "end_date must be a date string"},
		{"unknown scorecard", planBody(`"scorecard_id":"scorecard_nope"`), "Scorecard not found"},
		{"foreign scorecard", planBody(`"scorecard_id":"scorecard_bluecrane_2025"`), "Scorecard not found"},
		{"bad sector", planBody(`"sector":"Mining"`), `sector "Mining" is not included`},
		{"no wrapper", `{"name":"x"}`, "employment_equity_plan is missing"},
	}
	for _, tc := range rejects {
		r := c.do("PATCH", path, tc.body)
		if r.status != 422 || !strings.Contains(strings.Join(r.errors(), "|"), tc.want) {
			t.Errorf("%s: %d %s, want 422 with %q", tc.name, r.status, r.body, tc.want)
		}
	}
	a := c.do("PATCH", path, planBody(`"scorecard_id":"scorecard_nope"`))
	b := c.do("PATCH", path, planBody(`"scorecard_id":"scorecard_bluecrane_2025"`))
	if string(a.body) != string(b.body) {
		t.Errorf("unknown and foreign scorecard answers differ: %s / %s", a.body, b.body)
	}
	// A rejected update changes nothing, not even the valid fields beside it.
	c.do("PATCH", path, planBody(`"name":"Should not stick","sector":"nope"`))
	if got := srv.Sandbox.Plans("acme")[0]; got.Name != u.Name {
		t.Errorf("rejected update changed the name to %q", got.Name)
	}

	// 404s: unknown, foreign, not an integer.
	blue := srv.as(t, blueKey, blueSecret)
	for _, tc := range []struct {
		c    caller
		path string
	}{{c, plansPath + "/999999"}, {blue, path}, {c, plansPath + "/abc"}} {
		for _, m := range []string{"GET", "PATCH", "DELETE"} {
			body := ""
			if m == "PATCH" {
				body = planBody(`"name":"x"`)
			}
			if r := tc.c.do(m, tc.path, body); r.status != 404 || len(r.errors()) != 1 {
				t.Errorf("%s %s as %s: %d %s, want 404", m, tc.path, tc.c.key, r.status, r.body)
			}
		}
	}
	if got := srv.Sandbox.Plans("acme"); len(got) != 1 || got[0].Name != u.Name {
		t.Errorf("foreign calls changed the plan: %+v", got)
	}
}

func TestDeletePlanCascades(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
	keep := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
	path := fmt.Sprintf("%s/%d", plansPath, p.ID)
	m, tg := p.Milestones[0], p.Milestones[0].Targets[0]
	if r := srv.as(t, blueKey, blueSecret).do("DELETE", path, ""); r.status != 404 {
		t.Fatalf("foreign delete: %d", r.status)
	}
	r := c.must(204, "DELETE", path, "")
	if len(r.body) != 0 {
		t.Errorf("204 with a body: %q", r.body)
	}
	c.must(404, "GET", path, "")
	c.must(404, "DELETE", path, "")
	c.must(404, "PATCH", path, planBody(`"name":"x"`))
	c.must(404, "PATCH", fmt.Sprintf("%s/employment_equity_milestones/%d/employment_equity_targets/%d", path, m.ID, tg.ID), `{"employment_equity_target":{"number_of_african_male_top_managers":1}}`)
	if got := srv.Sandbox.Plans("acme"); len(got) != 1 || got[0].ID != keep.ID {
		t.Errorf("after delete: %+v", got)
	}
}

func targetPath(p apiclient.Plan, mi, ti int) string {
	return fmt.Sprintf("%s/%d/employment_equity_milestones/%d/employment_equity_targets/%d", plansPath, p.ID, p.Milestones[mi].ID, p.Milestones[mi].Targets[ti].ID)
}

func targetBody(fields string) string { return `{"employment_equity_target":{` + fields + `}}` }

func TestUpdateTarget(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2027-08-31","scorecard_id":"scorecard_acme_2025"`))
	orig := p.Milestones[1].Targets[1]
	path := targetPath(p, 1, 1)

	var got apiclient.Target
	c.must(200, "PATCH", path, targetBody(`"number_of_african_male_top_managers":7,"number_of_white_female_grand_total_employees":0,"target_type":"all_employees","id":5,"number_of_martian_male_top_managers":3,"colour":"blue"`)).decode(t, &got)
	if got.ID != orig.ID || got.TargetType != "disabled_employees" {
		t.Errorf("id/type changed: %d %s", got.ID, got.TargetType)
	}
	if len(got.Counters) != 90 {
		t.Errorf("%d counters: unknown counters must be ignored, all known returned", len(got.Counters))
	}
	for n, v := range orig.Counters {
		want := v
		switch n {
		case "number_of_african_male_top_managers":
			want = 7
		case "number_of_white_female_grand_total_employees":
			want = 0
		}
		if got.Counters[n] != want {
			t.Errorf("%s = %d, want %d", n, got.Counters[n], want)
		}
	}
	stored := srv.Sandbox.Plans("acme")[0]
	if fmt.Sprint(stored.Milestones[1].Targets[1]) != fmt.Sprint(got) {
		t.Error("stored target differs from the response")
	}
	if fmt.Sprint(stored.Milestones[0]) != fmt.Sprint(p.Milestones[0]) || fmt.Sprint(stored.Milestones[1].Targets[0]) != fmt.Sprint(p.Milestones[1].Targets[0]) {
		t.Error("other targets changed")
	}
	c.must(200, "PATCH", path, targetBody(``))
	c.must(200, "PATCH", path, targetBody(`"number_of_african_male_top_managers":0`))

	const f = "number_of_indian_female_middle_managers"
	for _, v := range []string{`"5"`, `1.5`, `3.0`, `1e2`, `-1`, `true`, `null`, `[1]`, `{}`, `""`, `99999999999999999999`} {
		r := c.do("PATCH", path, targetBody(`"number_of_african_male_top_managers":9,"`+f+`":`+v))
		if r.status != 422 {
			t.Errorf("%s=%s: status %d, want 422", f, v, r.status)
			continue
		}
		if msgs := r.errors(); len(msgs) != 1 || !strings.HasPrefix(msgs[0], f+" ") {
			t.Errorf("%s=%s: errors %q must name the field", f, v, msgs)
		}
	}
	if after := srv.Sandbox.Plans("acme")[0].Milestones[1].Targets[1]; after.Counters["number_of_african_male_top_managers"] != 0 {
		t.Error("a rejected PATCH changed a valid counter beside the bad one")
	}
	if r := c.do("PATCH", path, targetBody(`"target_type":"disabled_employees","`+f+`":"x"`)); r.status != 422 {
		t.Errorf("status %d", r.status)
	}
	c.must(422, "PATCH", path, `{"number_of_african_male_top_managers":1}`)

	// 404 for every way the path can point outside the account's plan.
	other := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
	blue := srv.as(t, blueKey, blueSecret)
	bp := blue.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
	seg := func(plan, m, tg int64) string {
		return fmt.Sprintf("%s/%d/employment_equity_milestones/%d/employment_equity_targets/%d", plansPath, plan, m, tg)
	}
	m0, m1 := p.Milestones[0], p.Milestones[1]
	cases := map[string]struct {
		c    caller
		path string
	}{
		"foreign account":                {blue, path},
		"unknown plan":                   {c, seg(999999, m1.ID, orig.ID)},
		"milestone of another plan":      {c, seg(p.ID, other.Milestones[0].ID, other.Milestones[0].Targets[0].ID)},
		"milestone of a foreign plan":    {c, seg(p.ID, bp.Milestones[0].ID, bp.Milestones[0].Targets[0].ID)},
		"target of another milestone":    {c, seg(p.ID, m1.ID, m0.Targets[0].ID)},
		"target of another plan":         {c, seg(p.ID, m1.ID, other.Milestones[0].Targets[0].ID)},
		"plan id used as milestone id":   {c, seg(p.ID, p.ID, orig.ID)},
		"unknown target":                 {c, seg(p.ID, m1.ID, 999999)},
		"non-integer milestone":          {c, fmt.Sprintf("%s/%d/employment_equity_milestones/x/employment_equity_targets/%d", plansPath, p.ID, orig.ID)},
		"foreign plan with own ids":      {c, seg(bp.ID, bp.Milestones[0].ID, bp.Milestones[0].Targets[0].ID)},
		"own path with a bad body first": {blue, seg(p.ID, m1.ID, orig.ID)},
	}
	for name, tc := range cases {
		body := targetBody(`"number_of_african_male_top_managers":1`)
		if strings.HasPrefix(name, "own path") {
			body = targetBody(`"number_of_african_male_top_managers":-1`)
		}
		if r := tc.c.do("PATCH", tc.path, body); r.status != 404 || len(r.errors()) != 1 {
			t.Errorf("%s: %d %s, want 404", name, r.status, r.body)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	srv := startSandbox(t, Options{})
	const workers, each = 8, 5
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			key, secret := acmeKey, acmeSecret
			if w%2 == 1 {
				key, secret = blueKey, blueSecret
			}
			c := srv.as(t, key, secret)
			for i := 0; i < each; i++ {
				p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2027-08-31"`))
				c.must(200, "PATCH", targetPath(p, 1, 0), targetBody(fmt.Sprintf(`"number_of_african_male_top_managers":%d`, w*100+i)))
				c.must(200, "GET", plansPath, "")
			}
		}(w)
	}
	wg.Wait()
	ids := map[int64]bool{}
	for _, acct := range []string{"acme", "bluecrane"} {
		plans := srv.Sandbox.Plans(acct)
		if len(plans) != workers/2*each {
			t.Errorf("%s has %d plans", acct, len(plans))
		}
		for _, p := range plans {
			ids[p.ID] = true
			for _, m := range p.Milestones {
				ids[m.ID] = true
				for _, tg := range m.Targets {
					ids[tg.ID] = true
				}
			}
		}
	}
	if want := workers * each * (1 + 2 + 4); len(ids) != want {
		t.Errorf("%d distinct ids, want %d", len(ids), want)
	}
	st := srv.Sandbox.Stats()
	if st.Requests != workers*each*3 || st.Writes != workers*each*2 {
		t.Errorf("stats %+v", st)
	}
}
