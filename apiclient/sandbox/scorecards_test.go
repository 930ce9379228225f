package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

func scBody(fields string) string { return `{"scorecard":{` + fields + `}}` }

const fullScorecard = `"description":"FY2027","start_date":"2027-03-01","end_date":"2028-02-29","charter_id":"alpha_ict","province":"Western Cape"`

func TestScorecardCRUD(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	blue := srv.as(t, blueKey, blueSecret)

	var list []apiclient.Scorecard
	c.must(200, "GET", scorecardsURL, "").decode(t, &list)
	if len(list) != 2 || list[0].ID != "scorecard_acme_2025" || list[1].ID != "scorecard_acme_2026" {
		t.Fatalf("acme scorecards %+v", list)
	}
	if list[0].Province != "National" || list[0].CharterID != "alpha_generic" || list[0].CreatedAt == "" {
		t.Errorf("fixture scorecard %+v", list[0])
	}

	var sc apiclient.Scorecard
	c.must(201, "POST", scorecardsURL, scBody(fullScorecard)).decode(t, &sc)
	if !strings.HasPrefix(sc.ID, "scorecard_") || len(sc.ID) <= len("scorecard_") || sc.Description != "FY2027" || sc.EndDate != "2028-02-29" {
		t.Fatalf("created %+v", sc)
	}
	path := scorecardsURL + "/" + sc.ID
	var got apiclient.Scorecard
	c.must(200, "GET", path, "").decode(t, &got)
	if got != sc {
		t.Errorf("retrieve %+v != created %+v", got, sc)
	}
	// Partial update: only named fields change.
	c.must(200, "PUT", path, scBody(`"province":"Gauteng","updated_at":"x","id":"scorecard_other"`)).decode(t, &got)
	if got.Province != "Gauteng" || got.Description != "FY2027" || got.CharterID != "alpha_ict" || got.ID != sc.ID {
		t.Errorf("partial update %+v", got)
	}
	// Foreign and unknown: 404 on every operation.
	for _, p := range []string{path, scorecardsURL + "/scorecard_nope"} {
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			body := ""
			if m == "PUT" {
				body = scBody(`"description":"x"`)
			}
			if r := blue.do(m, p, body); r.status != 404 || len(r.errors()) != 1 {
				t.Errorf("%s %s as bluecrane: %d %s", m, p, r.status, r.body)
			}
		}
		if r := blue.do("PUT", p+"/recalculate", ""); r.status != 404 {
			t.Errorf("recalculate %s as bluecrane: %d", p, r.status)
		}
	}
	blue.must(200, "GET", scorecardsURL, "").decode(t, &list)
	if len(list) != 1 || list[0].ID != "scorecard_bluecrane_2025" {
		t.Errorf("bluecrane scorecards %+v", list)
	}
	// A new scorecard can back a plan (no workforce: zero counters).
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"` + sc.ID + `"`))
	if p.ScorecardID == nil || *p.ScorecardID != sc.ID || p.Milestones[0].Targets[0].Counters["number_of_african_male_top_managers"] != 0 {
		t.Errorf("plan on a created scorecard %+v", p)
	}
	r := c.must(204, "DELETE", path, "")
	if len(r.body) != 0 {
		t.Errorf("204 body %q", r.body)
	}
	c.must(404, "GET", path, "")
	c.must(404, "DELETE", path, "")
	c.must(422, "POST", plansPath, planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"`+sc.ID+`"`))
}

func TestScorecardValidation(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	create := []struct{ name, body, want string }{
		{"missing all", scBody(``), "description can't be blank|start_date can't be blank|end_date can't be blank|charter_id can't be blank|province can't be blank"},
		{"missing province", scBody(`"description":"d","start_date":"2027-03-01","end_date":"2028-02-28","charter_id":"alpha_ict"`), "province can't be blank"},
		{"bad charter", scBody(`"description":"d","start_date":"2027-03-01","end_date":"2028-02-28","charter_id":"generic","province":"National"`), `charter_id "generic" is not included in the list of charters`},
		{"bad province", scBody(`"description":"d","start_date":"2027-03-01","end_date":"2028-02-28","charter_id":"alpha_ict","province":"Gautengg"`), `province "Gautengg" is not included in the list of provinces`},
		{"bad date", scBody(`"description":"d","start_date":"2027-02-29","end_date":"2028-02-28","charter_id":"alpha_ict","province":"National"`), `start_date "2027-02-29" is not a valid date (YYYY-MM-DD)`},
		{"end before start", scBody(`"description":"d","start_date":"2027-03-01","end_date":"2027-02-28","charter_id":"alpha_ict","province":"National"`), "end_date 2027-02-28 must not be before start_date 2027-03-01"},
		{"not a string", scBody(`"description":1,"start_date":"2027-03-01","end_date":"2028-02-28","charter_id":"alpha_ict","province":"National"`), "description must be a string"},
		{"null field", scBody(`"description":null,"start_date":"2027-03-01","end_date":"2028-02-28","charter_id":"alpha_ict","province":"National"`), "description can't be blank"},
		{"no wrapper", `{"description":"d"}`, `scorecard is missing: send {"scorecard": {...}}`},
	}
	for _, tc := range create {
		r := c.do("POST", scorecardsURL, tc.body)
		if got := strings.Join(r.errors(), "|"); r.status != 422 || got != tc.want {
			t.Errorf("create %s: %d %q, want 422 %q", tc.name, r.status, got, tc.want)
		}
	}
	path := scorecardsURL + "/scorecard_acme_2026"
	update := []struct{ name, body, want string }{
		{"blank description", scBody(`"description":"  "`), "description can't be blank"},
		{"bad province", scBody(`"province":"Cape"`), `province "Cape" is not included in the list of provinces`},
		{"end before stored start", scBody(`"end_date":"2026-01-01"`), "end_date 2026-01-01 must not be before start_date 2026-03-01"},
		{"bad charter", scBody(`"charter_id":"alpha_nope"`), `charter_id "alpha_nope" is not included in the list of charters`},
	}
	for _, tc := range update {
		r := c.do("PUT", path, tc.body)
		if got := strings.Join(r.errors(), "|"); r.status != 422 || got != tc.want {
			t.Errorf("update %s: %d %q, want 422 %q", tc.name, r.status, got, tc.want)
		}
	}
	var sc apiclient.Scorecard
	c.must(200, "GET", path, "").decode(t, &sc)
	if sc.Description != "Acme Foods B-BBEE scorecard 2026" || sc.EndDate != "2027-02-28" {
		t.Errorf("rejected updates changed the scorecard: %+v", sc)
	}
}

func TestRecalculate(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	srv := startSandbox(t, Options{Now: clock.Now, RecalcDuration: time.Minute})
	c := srv.as(t, acmeKey, acmeSecret)
	a := scorecardsURL + "/scorecard_acme_2025/recalculate"
	b := scorecardsURL + "/scorecard_acme_2026/recalculate"
	r := c.must(202, "PUT", a, "")
	if string(r.body) != "{\"status\":\"queued\"}\n" {
		t.Errorf("202 body %q", r.body)
	}
	r = c.must(409, "PUT", a, "")
	if len(r.errors()) != 1 {
		t.Errorf("409 body %s", r.body)
	}
	clock.Add(30 * time.Second)
	c.must(202, "PUT", b, "") // independent per scorecard
	c.must(409, "PUT", a, "")
	clock.Add(30 * time.Second) // a's run ends now
	c.must(202, "PUT", a, "")
	c.must(409, "PUT", b, "")
	c.must(409, "PUT", a, "")
	clock.Add(time.Minute)
	c.must(202, "PUT", b, "")
	c.must(404, "PUT", scorecardsURL+"/scorecard_bluecrane_2025/recalculate", "")
	srv.as(t, blueKey, blueSecret).must(202, "PUT", scorecardsURL+"/scorecard_bluecrane_2025/recalculate", "")

	// A frozen clock does not make runs last for ever: the real clock ends
	// them too.
	frozen := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	const run = 150 * time.Millisecond
	srvF := startSandbox(t, Options{Now: func() time.Time { return frozen }, RecalcDuration: run})
	cf := srvF.as(t, acmeKey, acmeSecret)
	began := time.Now()
	cf.must(202, "PUT", a, "")
	if r := cf.do("PUT", a, ""); time.Since(began) < run && r.status != 409 {
		t.Errorf("second run during the first, frozen clock: %d, want 409", r.status)
	}
	time.Sleep(run)
	cf.must(202, "PUT", a, "")

	// Zero duration: every run finishes at once.
	srv0 := startSandbox(t, Options{})
	c0 := srv0.as(t, acmeKey, acmeSecret)
	c0.must(202, "PUT", a, "")
	c0.must(202, "PUT", a, "")
}
