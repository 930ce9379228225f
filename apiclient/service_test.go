package apiclient

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

func ptr[T any](v T) *T { return &v }

func TestPlanServiceConverts(t *testing.T) {
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/employment_equity_plans"):
			w.Write([]byte(`[{"id":1,"name":"a","start_date":"2025-09-01","end_date":"2027-08-31","scorecard_id":null,"sector":null,"era":"post_2025"}]`))
		case r.Method == "PATCH" && strings.Contains(r.URL.Path, "employment_equity_targets"):
			w.Write([]byte(targetJSON))
		case r.Method == "DELETE":
			w.WriteHeader(204)
		case r.Method == "PUT":
			w.WriteHeader(202)
			w.Write([]byte(`{"status":"queued"}`))
		default:
			if r.Method == "POST" {
				w.WriteHeader(201)
			}
			w.Write([]byte(planJSON))
		}
	})
	s := NewPlanService(fx.c)
	ctx := context.Background()

	list, err := s.ListPlans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []pipeline.Plan{{ID: 1, Name: "a", StartDate: pipeline.MustDate("2025-09-01"), EndDate: pipeline.MustDate("2027-08-31"), Era: "post_2025"}}
	if !reflect.DeepEqual(list, want) {
		t.Errorf("ListPlans = %+v, want %+v", list, want)
	}

	p, err := s.GetPlan(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.ScorecardID != "" || p.Sector != "Manufacturing" || p.StartDate != pipeline.MustDate("2025-09-01") || p.EndDate != pipeline.LatestEnd {
		t.Errorf("GetPlan = %+v", p)
	}
	if len(p.Milestones) != 1 || p.Milestones[0].EndDate != pipeline.MustDate("2026-08-31") || p.Milestones[0].YearNumber != 1 ||
		len(p.Milestones[0].Targets) != 2 || p.Milestones[0].Targets[0].Counters["number_of_martian_female_top_managers"] != 9 {
		t.Errorf("milestones = %+v", p.Milestones)
	}

	if _, err := s.CreatePlan(ctx, pipeline.NewPlan{StartDate: pipeline.MustDate("2025-09-01"), EndDate: pipeline.MustDate("2030-08-31"), Sector: "Construction"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlan(ctx, 7, pipeline.PlanChange{ScorecardID: ptr(""), Sector: ptr("Education")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlan(ctx, 7, pipeline.PlanChange{Name: ptr("N"), Sector: ptr("")}); err != nil {
		t.Fatal(err)
	}
	tg, err := s.UpdateTarget(ctx, 7, 70, 700, map[string]int64{"number_of_african_male_top_managers": 5})
	if err != nil || tg.ID != 700 || tg.Counters["number_of_african_male_top_managers"] != 5 {
		t.Fatalf("UpdateTarget = %+v, %v", tg, err)
	}
	if err := s.DeletePlan(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
		t.Fatal(err)
	}
	fx.ts.requireAuthOK()

	reqs := fx.ts.requests()
	bodies := map[int]string{
		2: `{"employment_equity_plan":{"start_date":"2025-09-01","end_date":"2030-08-31","sector":"Construction"}}`,
		3: `{"employment_equity_plan":{"scorecard_id":null,"sector":"Education"}}`,
		4: `{"employment_equity_plan":{"name":"N","sector":null}}`,
		5: `{"employment_equity_target":{"number_of_african_male_top_managers":5}}`,
	}
	for i, b := range bodies {
		jsonEqual(t, reqs[i].Body, b)
	}
	methods := []string{"GET", "GET", "POST", "PATCH", "PATCH", "PATCH", "DELETE", "PUT"}
	for i, m := range methods {
		if reqs[i].Method != m {
			t.Errorf("request %d: %s, want %s", i, reqs[i].Method, m)
		}
	}
}

func TestPlanServiceErrors(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `{"id":3,"start_date":"2025-13-01","end_date":"2026-08-31"}`))
	s := NewPlanService(fx.c)
	_, err := s.GetPlan(context.Background(), 3)
	if err == nil || !strings.Contains(err.Error(), "plan 3") || !strings.Contains(err.Error(), "start_date") {
		t.Fatalf("err = %v", err)
	}
	fx.ts.setHandler(status(404))
	if _, err := s.GetPlan(context.Background(), 3); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}

func TestCompanyFinder(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[{"id":"Mk3Pq7","commodity":"","identification_number":"8001015009087","region":"Western Cape","registration_number":null,"trading_name":"Karoo Sole Trader","vat_number":"0412345678"}]`))
	got, err := NewCompanyFinder(fx.c).FindCompanies(context.Background(), pipeline.CompanyIDs{IDNumber: "8001015009087"})
	if err != nil {
		t.Fatal(err)
	}
	want := []pipeline.Company{{ID: "Mk3Pq7", IdentificationNumber: "8001015009087", Region: "Western Cape", TradingName: "Karoo Sole Trader", VATNumber: "0412345678"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FindCompanies = %+v", got)
	}
	if q := fx.ts.requests()[0].RawQuery; q != "id_number=8001015009087" {
		t.Errorf("query = %q", q)
	}
	fx.ts.requireAuthOK()
}

func TestCatalogFromTarget(t *testing.T) {
	def := pipeline.DefaultCatalog()
	counters := map[string]int64{}
	for i, n := range def.Names() {
		counters[n] = int64(i)
	}
	c, err := CatalogFromTarget(Target{ID: 1, Counters: counters})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Names(), def.Names()) {
		t.Errorf("catalog of a default target = %v", c.Names())
	}

	var wire Target
	if err := wire.UnmarshalJSON([]byte(`{"id":2,"target_type":"all_employees","number_of_martian_female_top_managers":1,"number_of_african_male_top_managers":0,"number_of_african_female_top_managers":0}`)); err != nil {
		t.Fatal(err)
	}
	c, err = CatalogFromTarget(wire)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"number_of_african_male_top_managers", "number_of_african_female_top_managers", "number_of_martian_female_top_managers"}; !reflect.DeepEqual(c.Names(), want) {
		t.Errorf("catalog = %v, want %v", c.Names(), want)
	}

	if _, err := CatalogFromTarget(Target{ID: 3}); err == nil || !strings.Contains(err.Error(), "target 3") {
		t.Errorf("empty target: err = %v", err)
	}
}
