package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// planJSON is a retrieve response with fields the client does not know.
const planJSON = `{
  "id": 7, "name": "EE Plan 2025-09-01 to 2030-08-31", "start_date": "2025-09-01", "end_date": "2030-08-31",
  "scorecard_id": null, "sector": "Manufacturing", "era": "post_2025",
  "created_at": "2025-10-01T08:00:00Z", "updated_at": "2025-10-02T08:00:00Z",
  "owner": {"nested": [1, 2, {"x": null}]}, "future_flag": true,
  "milestones": [{
    "id": 70, "year_number": 1, "start_date": "2025-09-01", "end_date": "2026-08-31", "status": "open",
    "targets": [
      {"id": 700, "target_type": "all_employees", "number_of_african_male_top_managers": 3,
       "number_of_martian_female_top_managers": 9, "note": "unknown field", "number_of_white_male_top_managers": null},
      {"id": 701, "target_type": "disabled_employees", "number_of_african_male_top_managers": 0}
    ]
  }]
}`

const targetJSON = `{"id": 700, "target_type": "all_employees", "number_of_african_male_top_managers": 5, "number_of_martian_female_top_managers": 9, "extra": {"a": 1}}`

const scorecardJSON = `{"id": "scorecard_acme_2025", "description": "FY2025", "start_date": "2025-03-01", "end_date": "2026-02-28", "charter_id": "alpha_generic", "province": "National", "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z", "totals": {"ownership": 12.5}}`

func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body = %s, want %s", got, want)
	}
}

// TestMethods checks every method's HTTP method, path under the base path,
// headers, body wrapping and signature (verified server-side), and the
// decoding of the answer.
func TestMethods(t *testing.T) {
	name := "Renamed"
	sc := NullString("scorecard_acme_2026")
	null := NullString("")
	api := testBasePath + APIPrefix
	tests := []struct {
		name     string
		call     func(ctx context.Context, c *Client) (any, error)
		method   string
		path     string
		body     string // "" = no body
		status   int
		response string
		check    func(t *testing.T, got any)
	}{
		{
			name:   "ListPlans",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.ListPlans(ctx) },
			method: "GET", path: api + "/employment_equity_plans",
			status: 200, response: `[{"id":1,"name":"a","start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_x","sector":null,"era":"post_2025","unknown":1},{"id":2}]`,
			check: func(t *testing.T, got any) {
				ps := got.([]Plan)
				if len(ps) != 2 || ps[0].ID != 1 || *ps[0].ScorecardID != "scorecard_x" || ps[0].Sector != nil || ps[0].Milestones != nil {
					t.Errorf("plans = %+v", ps)
				}
			},
		},
		{
			name:   "GetPlan",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetPlan(ctx, 7) },
			method: "GET", path: api + "/employment_equity_plans/7",
			status: 200, response: planJSON,
			check: func(t *testing.T, got any) {
				p := got.(*Plan)
				if p.ID != 7 || p.Era != "post_2025" || p.ScorecardID != nil || *p.Sector != "Manufacturing" || len(p.Milestones) != 1 {
					t.Fatalf("plan = %+v", p)
				}
				tg := p.Milestones[0].Targets
				if len(tg) != 2 || tg[0].TargetType != "all_employees" || tg[0].Counters["number_of_african_male_top_managers"] != 3 ||
					tg[0].Counters["number_of_martian_female_top_managers"] != 9 || len(tg[0].Counters) != 2 {
					t.Errorf("targets = %+v", tg)
				}
			},
		},
		{
			name: "CreatePlan",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePlan(ctx, PlanCreate{Name: "A", StartDate: "2025-09-01", EndDate: "2030-08-31", ScorecardID: "scorecard_acme_2025", Sector: "Construction"})
			},
			method: "POST", path: api + "/employment_equity_plans",
			body:   `{"employment_equity_plan":{"name":"A","start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025","sector":"Construction"}}`,
			status: 201, response: planJSON,
			check: func(t *testing.T, got any) {
				if got.(*Plan).ID != 7 {
					t.Errorf("plan = %+v", got)
				}
			},
		},
		{
			name: "CreatePlan minimal leaves out empty fields",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePlan(ctx, PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
			},
			method: "POST", path: api + "/employment_equity_plans",
			body:   `{"employment_equity_plan":{"start_date":"2025-09-01","end_date":"2026-08-31"}}`,
			status: 201, response: planJSON,
		},
		{
			name: "UpdatePlan",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdatePlan(ctx, 7, PlanUpdate{Name: &name, ScorecardID: &sc, Sector: &null})
			},
			method: "PATCH", path: api + "/employment_equity_plans/7",
			body:   `{"employment_equity_plan":{"name":"Renamed","scorecard_id":"scorecard_acme_2026","sector":null}}`,
			status: 200, response: planJSON,
		},
		{
			name:   "DeletePlan",
			call:   func(ctx context.Context, c *Client) (any, error) { return nil, c.DeletePlan(ctx, 7) },
			method: "DELETE", path: api + "/employment_equity_plans/7",
			status: 204,
		},
		{
			name: "UpdateTarget",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateTarget(ctx, 7, 70, 700, map[string]int64{"number_of_african_male_top_managers": 5, "number_of_martian_female_top_managers": 0})
			},
			method: "PATCH", path: api + "/employment_equity_plans/7/employment_equity_milestones/70/employment_equity_targets/700",
			body:   `{"employment_equity_target":{"number_of_african_male_top_managers":5,"number_of_martian_female_top_managers":0}}`,
			status: 200, response: targetJSON,
			check: func(t *testing.T, got any) {
				tg := got.(*Target)
				if tg.ID != 700 || tg.Counters["number_of_african_male_top_managers"] != 5 || tg.Counters["number_of_martian_female_top_managers"] != 9 {
					t.Errorf("target = %+v", tg)
				}
			},
		},
		{
			name:   "ListScorecards",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.ListScorecards(ctx) },
			method: "GET", path: api + "/scorecards",
			status: 200, response: "[" + scorecardJSON + "]",
			check: func(t *testing.T, got any) {
				if s := got.([]Scorecard); len(s) != 1 || s[0].ID != "scorecard_acme_2025" || s[0].Province != "National" {
					t.Errorf("scorecards = %+v", s)
				}
			},
		},
		{
			name: "GetScorecard escapes the id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetScorecard(ctx, "scorecard_odd id/with?chars")
			},
			method: "GET", path: api + "/scorecards/scorecard_odd%20id%2Fwith%3Fchars",
			status: 200, response: scorecardJSON,
			check: func(t *testing.T, got any) {
				if got.(*Scorecard).CharterID != "alpha_generic" {
					t.Errorf("scorecard = %+v", got)
				}
			},
		},
		{
			name: "CreateScorecard",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateScorecard(ctx, ScorecardInput{Description: "FY", StartDate: "2025-03-01", EndDate: "2026-02-28", CharterID: "alpha_generic", Province: "National"})
			},
			method: "POST", path: api + "/scorecards",
			body:   `{"scorecard":{"description":"FY","start_date":"2025-03-01","end_date":"2026-02-28","charter_id":"alpha_generic","province":"National"}}`,
			status: 201, response: scorecardJSON,
		},
		{
			name: "UpdateScorecard sends only the fields to change",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateScorecard(ctx, "scorecard_acme_2025", ScorecardInput{Province: "Gauteng"})
			},
			method: "PUT", path: api + "/scorecards/scorecard_acme_2025",
			body:   `{"scorecard":{"province":"Gauteng"}}`,
			status: 200, response: scorecardJSON,
		},
		{
			name: "DeleteScorecard",
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteScorecard(ctx, "scorecard_acme_2025")
			},
			method: "DELETE", path: api + "/scorecards/scorecard_acme_2025",
			status: 204,
		},
		{
			name: "RecalculateScorecard accepts any 2xx and body",
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.RecalculateScorecard(ctx, "scorecard_acme_2025")
			},
			method: "PUT", path: api + "/scorecards/scorecard_acme_2025/recalculate",
			status: 202, response: `<html>queued</html>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, jsonHandler(tt.status, tt.response), func(o *Options) { o.UserAgent = "eepipe/test" })
			got, err := tt.call(context.Background(), fx.c)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			fx.ts.requireAuthOK()
			reqs := fx.ts.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tt.method || r.Path != tt.path || r.RawQuery != "" {
				t.Errorf("request = %s %s?%s, want %s %s", r.Method, r.Path, r.RawQuery, tt.method, tt.path)
			}
			if r.Header.Get("Accept") != "application/json" || r.Header.Get("X-Api-Key") != testKey || r.Header.Get("User-Agent") != "eepipe/test" {
				t.Errorf("headers = %v", r.Header)
			}
			if !strings.HasPrefix(r.Header.Get("Authorization"), "HMAC ") {
				t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
			}
			if tt.body == "" {
				if len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
					t.Errorf("unexpected body %q / Content-Type %q", r.Body, r.Header.Get("Content-Type"))
				}
			} else {
				if r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
				}
				jsonEqual(t, r.Body, tt.body)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// TestSignatureCoversExactBytes sends a body with odd but valid bytes
// through Do; the server recomputes the signature over what it received.
func TestSignatureCoversExactBytes(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `{"ok":true}`))
	body := []byte("{ \"employment_equity_target\" :\t{\"number_of_a_b_c\": 1}}\n\n")
	var out map[string]any
	if err := fx.c.Do(context.Background(), "patch", APIPrefix+"/employment_equity_plans/1?ignored=1", body, &out); err != nil {
		t.Fatalf("Do: %v", err)
	}
	fx.ts.requireAuthOK()
	r := fx.ts.requests()[0]
	if string(r.Body) != string(body) || r.Method != "PATCH" || r.RawQuery != "ignored=1" {
		t.Errorf("sent %s %q ?%s", r.Method, r.Body, r.RawQuery)
	}
	if want := Signature(testSecret, testBasePath+APIPrefix+"/employment_equity_plans/1", body); r.Header.Get("Authorization") != want {
		t.Errorf("Authorization = %q, want %q", r.Header.Get("Authorization"), want)
	}
	if out["ok"] != true {
		t.Errorf("out = %v", out)
	}
}

// TestWrongSecretIsUnauthorized shows that the server's check is real: a
// client with another secret is refused, and the error says 401.
func TestWrongSecretIsUnauthorized(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[]`), func(o *Options) { o.APISecret = "another-secret" })
	_, err := fx.c.ListPlans(context.Background())
	if !hasStatus(err, 401) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if len(fx.ts.requests()) != 1 {
		t.Errorf("401 was retried")
	}
}

func TestSearchCompanies(t *testing.T) {
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("vat_number") == "none" {
			w.Write([]byte(`[]`))
			return
		}
		w.Write([]byte(`[{"id":"8ovHrj","commodity":"Food Services","identification_number":null,"region":"National","registration_number":"2009/012345/07","trading_name":"Acme Foods (Pty) Ltd","vat_number":"4012345678","rating":"L1"}]`))
	})
	got, err := fx.c.SearchCompanies(context.Background(), CompanyQuery{VATNumber: "0412345678", RegistrationNumber: "2009/012345/07"})
	if err != nil {
		t.Fatal(err)
	}
	fx.ts.requireAuthOK()
	if len(got) != 1 || got[0].ID != "8ovHrj" || got[0].IdentificationNumber != nil || *got[0].RegistrationNumber != "2009/012345/07" {
		t.Errorf("companies = %+v", got)
	}
	r := fx.ts.requests()[0]
	if r.Method != "GET" || r.Path != testBasePath+"/api/companies" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}
	if r.RawQuery != "registration_number=2009%2F012345%2F07&vat_number=0412345678" {
		t.Errorf("query = %q (only non-empty parameters, leading zeros kept)", r.RawQuery)
	}
	if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Accept") != "application/json" || r.Header.Get("Content-Type") != "" {
		t.Errorf("headers = %v", r.Header)
	}

	none, err := fx.c.SearchCompanies(context.Background(), CompanyQuery{VATNumber: "none"})
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("no match: %v, %v (want an empty, non-nil slice)", none, err)
	}
}

func TestSearchCompaniesNotConfigured(t *testing.T) {
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", APIKey: "k", APISecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SearchCompanies(context.Background(), CompanyQuery{VATNumber: "1"}); err == nil || !strings.Contains(err.Error(), "lookup") {
		t.Errorf("err = %v", err)
	}
	lc, err := New(Options{LookupURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.ListPlans(context.Background()); err == nil || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("err = %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"nothing", Options{}, "neither"},
		{"scheme", Options{BaseURL: "ftp://h", APIKey: "k", APISecret: "s"}, "http"},
		{"no host", Options{BaseURL: "http://", APIKey: "k", APISecret: "s"}, "no host"},
		{"credentials", Options{LookupURL: "https://user:" + testLookupPass + "@h/"}, "credentials"},
		{"query", Options{BaseURL: "https://h/?a=1", APIKey: "k", APISecret: "s"}, "query"},
		{"no key", Options{BaseURL: "https://h", APISecret: "s"}, "API key"},
		{"no secret", Options{BaseURL: "https://h", APIKey: "k"}, "API secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			assertNoSecrets(t, "error", err.Error())
		})
	}
}

// TestBasePathTrailingSlash: a trailing slash on the base URL does not
// double the slash in the path (which would change the signature).
func TestBasePathTrailingSlash(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[]`), func(o *Options) { o.BaseURL += "/" })
	if _, err := fx.c.ListScorecards(context.Background()); err != nil {
		t.Fatal(err)
	}
	fx.ts.requireAuthOK()
	if p := fx.ts.requests()[0].Path; p != testBasePath+APIPrefix+"/scorecards" {
		t.Errorf("path = %s", p)
	}
}

func TestDefaultUserAgent(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[]`))
	if _, err := fx.c.ListPlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ua := fx.ts.requests()[0].Header.Get("User-Agent"); !strings.HasPrefix(ua, "eepipe/") || len(ua) <= len("eepipe/") {
		t.Errorf("User-Agent = %q", ua)
	}
}

// TestRedirectNotFollowed: a redirect would drop or break the signature;
// the client reports it instead.
func TestRedirectNotFollowed(t *testing.T) {
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, "https://elsewhere.example/api", http.StatusFound)
	})
	_, err := fx.c.ListPlans(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 302 || !strings.Contains(err.Error(), "elsewhere.example") {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestDebugLog(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[]`))
	if _, err := fx.c.ListPlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries := fx.logs.FilterMessage("request").All()
	if len(entries) != 1 {
		t.Fatalf("log = %s", logText(fx.logs))
	}
	m := entries[0].ContextMap()
	if m["method"] != "GET" || m["path"] != testBasePath+APIPrefix+"/employment_equity_plans" || m["status"] != int64(200) || m["attempt"] != int64(1) {
		t.Errorf("fields = %v", m)
	}
	if _, ok := m["duration"]; !ok {
		t.Errorf("no duration: %v", m)
	}
	assertNoSecrets(t, "log", logText(fx.logs))
}

// TestDecodeErrorOnCreateIsUnclear: a 201 whose body cannot be read means
// the plan exists but its id is unknown.
func TestDecodeErrorOnCreateIsUnclear(t *testing.T) {
	fx := newFixture(t, jsonHandler(201, `<html><title>Created</title></html>`))
	_, err := fx.c.CreatePlan(context.Background(), PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
	if !errors.Is(err, ErrUnclearOutcome) || !strings.Contains(err.Error(), "Created") {
		t.Fatalf("err = %v", err)
	}
	fx.ts.setHandler(jsonHandler(200, ``))
	_, err = fx.c.GetPlan(context.Background(), 1)
	if err == nil || errors.Is(err, ErrUnclearOutcome) || !strings.Contains(err.Error(), "empty response body") {
		t.Fatalf("GET with empty 200: %v", err)
	}
}
