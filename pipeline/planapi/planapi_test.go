package planapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/planapi"
	"github.com/eepipe/eepipe/pipeline/run"
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

func ptr[T any](v T) *T { return &v }

func TestServiceConverts(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
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
	c, _ := srv.client(t)
	s := planapi.New(c)
	ctx := context.Background()

	list, err := s.ListPlans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []pipeline.Plan{{ID: 1, Name: "a", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2027-08-31"), Era: "post_2025"}}
	if !reflect.DeepEqual(list, want) {
		t.Errorf("ListPlans = %+v, want %+v", list, want)
	}

	p, err := s.GetPlan(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.ScorecardID != "" || p.Sector != "Manufacturing" || p.StartDate != mustDate("2025-09-01") || p.EndDate != pipeline.LatestEnd {
		t.Errorf("GetPlan = %+v", p)
	}
	if len(p.Milestones) != 1 || p.Milestones[0].EndDate != mustDate("2026-08-31") || p.Milestones[0].YearNumber != 1 ||
		len(p.Milestones[0].Targets) != 2 || p.Milestones[0].Targets[0].Counters.Map()["number_of_martian_female_top_managers"] != 9 {
		t.Errorf("milestones = %+v", p.Milestones)
	}

	if _, err := s.CreatePlan(ctx, pipeline.NewPlan{StartDate: mustDate("2025-09-01"), EndDate: mustDate("2030-08-31"), Sector: "Construction"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlan(ctx, 7, pipeline.PlanChange{ScorecardID: ptr(""), Sector: ptr("Education")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlan(ctx, 7, pipeline.PlanChange{Name: ptr("N"), Sector: ptr("")}); err != nil {
		t.Fatal(err)
	}
	tg, err := s.UpdateTarget(ctx, 7, 70, 700, map[string]int64{"number_of_african_male_top_managers": 5})
	if err != nil || tg.ID != 700 || tg.Counters.Map()["number_of_african_male_top_managers"] != 5 {
		t.Fatalf("UpdateTarget = %+v, %v", tg, err)
	}
	if err := s.DeletePlan(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
		t.Fatal(err)
	}
	if err := s.PatchTarget(ctx, 7, 70, 700, map[string]int64{"number_of_african_male_top_managers": 6}); err != nil {
		t.Fatal(err)
	}
	srv.requireAuthOK()

	reqs := srv.requests()
	bodies := map[int]string{
		2: `{"employment_equity_plan":{"start_date":"2025-09-01","end_date":"2030-08-31","sector":"Construction"}}`,
		3: `{"employment_equity_plan":{"scorecard_id":null,"sector":"Education"}}`,
		4: `{"employment_equity_plan":{"name":"N","sector":null}}`,
		5: `{"employment_equity_target":{"number_of_african_male_top_managers":5}}`,
		8: `{"employment_equity_target":{"number_of_african_male_top_managers":6}}`,
	}
	for i, b := range bodies {
		jsonEqual(t, reqs[i].Body, b)
	}
	methods := []string{"GET", "GET", "POST", "PATCH", "PATCH", "PATCH", "DELETE", "PUT", "PATCH"}
	for i, m := range methods {
		if reqs[i].Method != m {
			t.Errorf("request %d: %s, want %s", i, reqs[i].Method, m)
		}
	}
	if reqs[8].Path != reqs[5].Path {
		t.Errorf("PatchTarget path %s, UpdateTarget path %s", reqs[8].Path, reqs[5].Path)
	}
}

// TestPatchTargetSkipsDecode: PatchTarget does not read the answer, so an
// answer UpdateTarget cannot decode does not fail it.
func TestPatchTargetSkipsDecode(t *testing.T) {
	srv := newServer(t, jsonHandler(200, `not json`))
	c, _ := srv.client(t)
	s := planapi.New(c)
	if err := s.PatchTarget(context.Background(), 1, 2, 3, map[string]int64{"number_of_african_male_top_managers": 1}); err != nil {
		t.Fatalf("PatchTarget: %v", err)
	}
	var de *apiclient.DecodeError
	if _, err := s.UpdateTarget(context.Background(), 1, 2, 3, map[string]int64{"number_of_african_male_top_managers": 1}); !errors.As(err, &de) {
		t.Fatalf("UpdateTarget: %v, want a DecodeError", err)
	}
	var _ pipeline.TargetPatcher = s
}

func TestServiceErrors(t *testing.T) {
	srv := newServer(t, jsonHandler(200, `{"id":3,"start_date":"2025-13-01","end_date":"2026-08-31"}`))
	c, _ := srv.client(t)
	s := planapi.New(c)
	_, err := s.GetPlan(context.Background(), 3)
	if err == nil || !strings.Contains(err.Error(), "plan 3") || !strings.Contains(err.Error(), "start_date") {
		t.Fatalf("err = %v", err)
	}
	srv.mu.Lock()
	srv.handler = jsonHandler(404, `{"errors":["Plan not found"]}`)
	srv.mu.Unlock()
	if _, err := s.GetPlan(context.Background(), 3); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}

// sentinels are the pipeline's errors; each translated error matches the
// ones its row names and no other.
var sentinels = []error{
	pipeline.ErrUnauthorized, pipeline.ErrNotFound, pipeline.ErrConflict, pipeline.ErrInvalid,
	pipeline.ErrRateLimited, pipeline.ErrUnclearOutcome, pipeline.ErrUnavailable,
}

// TestErr drives error responses of every kind through real requests and
// checks the pipeline sentinel each one matches once translated, that the
// client's *APIError is still reachable with errors.As, and that the text
// is the client's.
func TestErr(t *testing.T) {
	tests := []struct {
		method string // GET uses GetPlan, POST CreatePlan, PATCH UpdatePlan, PUT RecalculateScorecard
		status int
		want   []error
	}{
		{"POST", 422, []error{pipeline.ErrInvalid}},
		{"PATCH", 422, []error{pipeline.ErrInvalid}},
		{"GET", 400, []error{pipeline.ErrInvalid}},
		{"GET", 401, []error{pipeline.ErrUnauthorized}},
		{"GET", 403, []error{pipeline.ErrUnauthorized}},
		{"PATCH", 404, []error{pipeline.ErrNotFound}},
		{"GET", 404, []error{pipeline.ErrNotFound}},
		{"PATCH", 409, []error{pipeline.ErrConflict}},
		{"PUT", 409, []error{pipeline.ErrConflict}},
		{"POST", 429, []error{pipeline.ErrRateLimited}},
		{"GET", 429, []error{pipeline.ErrRateLimited}},
		{"GET", 502, []error{pipeline.ErrUnavailable}},
		{"PATCH", 503, []error{pipeline.ErrUnavailable}},
		{"POST", 500, []error{pipeline.ErrUnclearOutcome}},
		{"POST", 503, []error{pipeline.ErrUnclearOutcome}},
		{"GET", 500, nil},
		{"GET", 418, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.method, " ", tt.status), func(t *testing.T) {
			srv := newServer(t, jsonHandler(tt.status, `{"errors":["status `+fmt.Sprint(tt.status)+`"]}`))
			c, _ := srv.client(t)
			s := planapi.New(c)
			ctx := context.Background()
			var err error
			switch tt.method {
			case "GET":
				_, err = s.GetPlan(ctx, 3)
			case "POST":
				_, err = s.CreatePlan(ctx, pipeline.NewPlan{StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31")})
			case "PATCH":
				_, err = s.UpdatePlan(ctx, 3, pipeline.PlanChange{Name: ptr("x")})
			case "PUT":
				err = s.RecalculateScorecard(ctx, "scorecard_1")
			}
			var ae *apiclient.APIError
			if !errors.As(err, &ae) || ae.StatusCode != tt.status || ae.Method != tt.method {
				t.Fatalf("err = %#v, want the client's *APIError", err)
			}
			if err.Error() != ae.Error() {
				t.Errorf("text %q, want the client's %q", err, ae)
			}
			for _, s := range sentinels {
				want := false
				for _, w := range tt.want {
					want = want || w == s
				}
				if got := errors.Is(err, s); got != want {
					t.Errorf("errors.Is(err, %q) = %v, want %v", s, got, want)
				}
			}
		})
	}
	if planapi.Err(nil) != nil {
		t.Error("Err(nil) != nil")
	}
	plain := errors.New("plain")
	if planapi.Err(plain) != plain {
		t.Error("an error without a pipeline meaning must be returned as it is")
	}
}

// TestErrTransport: a connection refused before anything was sent is
// unavailable, not unclear, even for a create; a context that ended is
// neither, and is still context.Canceled.
func TestErrTransport(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := apiclient.New(apiclient.Options{BaseURL: "http://" + addr, APIKey: testKey, APISecret: testSecret,
		Retry: apiclient.RetryPolicy{MaxAttempts: 1}, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	s := planapi.New(c)
	_, err = s.CreatePlan(context.Background(), pipeline.NewPlan{StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31")})
	var te *apiclient.TransportError
	if !errors.As(err, &te) {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	if te.Sent || !errors.Is(err, pipeline.ErrUnavailable) || errors.Is(err, pipeline.ErrUnclearOutcome) || !run.IsFatal(err) {
		t.Errorf("refused create: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.GetPlan(ctx, 1)
	if !errors.Is(err, context.Canceled) || errors.Is(err, pipeline.ErrUnavailable) || errors.Is(err, pipeline.ErrUnclearOutcome) {
		t.Errorf("cancelled get: %v", err)
	}
}

func TestFinder(t *testing.T) {
	srv := newServer(t, jsonHandler(200, `[{"id":"Mk3Pq7","commodity":"","identification_number":"8001015009087","region":"Western Cape","registration_number":null,"trading_name":"Karoo Sole Trader","vat_number":"0412345678"}]`))
	c, _ := srv.client(t)
	got, err := planapi.NewFinder(c).FindCompanies(context.Background(), pipeline.CompanyIDs{IDNumber: "8001015009087"})
	if err != nil {
		t.Fatal(err)
	}
	want := []pipeline.Company{{ID: "Mk3Pq7", IdentificationNumber: "8001015009087", Region: "Western Cape", TradingName: "Karoo Sole Trader", VATNumber: "0412345678"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FindCompanies = %+v", got)
	}
	if q := srv.requests()[0].RawQuery; q != "id_number=8001015009087" {
		t.Errorf("query = %q", q)
	}
	srv.requireAuthOK()

	srv.mu.Lock()
	srv.handler = jsonHandler(401, `{"errors":["bad credentials"]}`)
	srv.mu.Unlock()
	if _, err := planapi.NewFinder(c).FindCompanies(context.Background(), pipeline.CompanyIDs{VAT: "4012345678"}); !errors.Is(err, pipeline.ErrUnauthorized) {
		t.Errorf("401 lookup: %v", err)
	}
}

// TestRateLimitedCreateWaitedOut: a create refused with 429 is waited out
// by the client's one retry policy, for the service's Retry-After, and
// sent again; apply over the sandbox then creates the plan once. (It was
// the pipeline's own 429 loop before; see
// pipeline.TestRateLimitedCreateLeftToClient.)
func TestRateLimitedCreateWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter string
		want       time.Duration
	}{
		{"Retry-After", "7", 7 * time.Second},
		{"no Retry-After", "", 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused, creates atomic.Int32
			url := startSandbox(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						creates.Add(1)
						if refused.Add(1) == 1 {
							if tc.retryAfter != "" {
								w.Header().Set("Retry-After", tc.retryAfter)
							}
							w.Header().Set("Content-Type", "application/json")
							w.WriteHeader(http.StatusTooManyRequests)
							w.Write([]byte(`{"errors":["Rate limit exceeded"]}`))
							return
						}
					}
					h.ServeHTTP(w, r)
				})
			})
			sl := &sleeps{}
			c, err := apiclient.New(apiclient.Options{BaseURL: url, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme",
				LookupURL: url, LookupUsername: "consultant", LookupPassword: "sandbox-lookup-pass",
				HTTPClient: &http.Client{Timeout: 30 * time.Second}, Sleep: sl.sleep,
				Retry: apiclient.RetryPolicy{BaseDelay: 250 * time.Millisecond, MaxDelay: 250 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			accounts := []pipeline.Account{{Name: "acme", CompanyID: "8ovHrj", Service: planapi.New(c)}}
			var pipelineSlept []time.Duration
			r := run.NewRunner(accounts, planapi.NewFinder(c), run.RunOptions{NoRecalc: true,
				Sleep: func(_ context.Context, d time.Duration) error { pipelineSlept = append(pipelineSlept, d); return nil }})
			in := &pipeline.InputPlan{Origin: pipeline.Origin{File: "plans.csv", Row: 2}, Company: pipeline.CompanyIDs{VAT: "4012345678"},
				Name: "Later", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2030-08-31")}
			_, rep, _, err := r.PlanApply(context.Background(), []*pipeline.InputPlan{in}, time.Now(), run.ApplyHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Plans[0].Outcome != run.OutcomeCreated {
				t.Fatalf("ok=%v outcome=%v err=%v", rep.OK(), rep.Plans[0].Outcome, rep.Plans[0].Err)
			}
			got := sl.get()
			if len(got) != 1 || (tc.retryAfter != "" && got[0] != tc.want) || got[0] > tc.want {
				t.Errorf("client waited %v, want one wait of %v", got, tc.want)
			}
			if len(pipelineSlept) != 0 {
				t.Errorf("the pipeline waited too: %v", pipelineSlept)
			}
			if n := creates.Load(); n != 2 {
				t.Errorf("%d creates sent, want 2 (refused, then applied)", n)
			}
			plans, err := planapi.New(c).ListPlans(context.Background())
			if err != nil || len(plans) != 1 || plans[0].Name != "Later" {
				t.Errorf("plans on the account: %+v, %v", plans, err)
			}
		})
	}
}

// TestRateLimitedCreateInterrupted: a create refused 429 whose wait for
// the Retry-After is cut by Ctrl-C (the run's context ends while the
// client waits; the request itself runs on an uncancelled context) is not
// sent again; the plan is not applied, with the service's answer and the
// interruption as the reason, and the run has no fatal error.
func TestRateLimitedCreateInterrupted(t *testing.T) {
	var creates atomic.Int32
	url := startSandbox(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				creates.Add(1)
				w.Header().Set("Retry-After", "60")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"errors":["Rate limit exceeded"]}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waited atomic.Int32
	c, err := apiclient.New(apiclient.Options{BaseURL: url, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme",
		LookupURL: url, LookupUsername: "consultant", LookupPassword: "sandbox-lookup-pass",
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
		Sleep: func(wctx context.Context, d time.Duration) error {
			waited.Add(1)
			cancel() // Ctrl-C while the client waits out the Retry-After
			select {
			case <-wctx.Done():
				return wctx.Err()
			case <-time.After(30 * time.Second): // not cut: the test fails on the second create
				return nil
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	accounts := []pipeline.Account{{Name: "acme", CompanyID: "8ovHrj", Service: planapi.New(c)}}
	r := run.NewRunner(accounts, planapi.NewFinder(c), run.RunOptions{NoRecalc: true})
	in := &pipeline.InputPlan{Origin: pipeline.Origin{File: "plans.csv", Row: 2}, Company: pipeline.CompanyIDs{VAT: "4012345678"},
		Name: "Later", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2030-08-31")}
	_, rep, _, err := r.PlanApply(ctx, []*pipeline.InputPlan{in}, time.Now(), run.ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plans[0]
	if p.Outcome != run.OutcomeNotApplied {
		t.Fatalf("outcome %v (%v), want not applied", p.Outcome, p.Err)
	}
	if !errors.Is(p.Err, pipeline.ErrStopped) || !errors.Is(p.Err, context.Canceled) || !errors.Is(p.Err, pipeline.ErrRateLimited) {
		t.Errorf("err = %v, want ErrStopped, context.Canceled and ErrRateLimited", p.Err)
	}
	if !strings.Contains(p.Err.Error(), "429") || !strings.HasSuffix(p.Err.Error(), "not retried: interrupted") {
		t.Errorf("err = %q, want the 429 and \"not retried: interrupted\"", p.Err)
	}
	if rep.Fatal != nil || !rep.Interrupted {
		t.Errorf("fatal %v, interrupted %v; want no fatal error, interrupted", rep.Fatal, rep.Interrupted)
	}
	if n, w := creates.Load(), waited.Load(); n != 1 || w != 1 {
		t.Errorf("%d creates sent, %d waits; want 1 create, 1 wait cut short", n, w)
	}
}

// mustDate is pipeline.ParseDate for the tests' literal dates; it panics
// on one that is not valid.
func mustDate(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
