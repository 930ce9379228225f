package sandbox_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// The conformance tests drive the real apiclient.Client against the
// sandbox over HTTP on 127.0.0.1: every row of the contract's error table
// and every rule the sandbox implements, as a client of the service sees it.

type account struct{ key, secret string }

// testHTTP is the HTTP client of the tests: a request that gets stuck fails
// its test after a bounded time instead of hanging the package.
var testHTTP = &http.Client{Timeout: 30 * time.Second}

var (
	acme = account{"mpk_sandbox_acme", "sandbox-secret-acme"}
	blue = account{"mpk_sandbox_bluecrane", "sandbox-secret-bluecrane"}
)

func start(t *testing.T, opts sandbox.Options) *sandbox.Server {
	t.Helper()
	srv, err := sandbox.Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func client(t *testing.T, srv *sandbox.Server, a account, mutate ...func(*apiclient.Options)) *apiclient.Client {
	t.Helper()
	opts := apiclient.Options{
		BaseURL: srv.URL, APIKey: a.key, APISecret: a.secret,
		LookupURL: srv.URL, LookupUsername: "consultant", LookupPassword: "sandbox-lookup-pass",
		Retry:      apiclient.RetryPolicy{MaxAttempts: 8, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
	}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := apiclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// statusOf returns the status of an *apiclient.APIError, or 0.
func statusOf(err error) int {
	var ae *apiclient.APIError
	if errors.As(err, &ae) {
		return ae.StatusCode
	}
	return 0
}

// expectAPIError fails unless err is an APIError with status. (What a
// status means to the pipeline is the adapter's business, tested there.)
func expectAPIError(t *testing.T, what string, err error, status int) *apiclient.APIError {
	t.Helper()
	var ae *apiclient.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v, want an APIError %d", what, err, status)
	}
	if ae.StatusCode != status {
		t.Fatalf("%s: %v (status %d), want %d", what, err, ae.StatusCode, status)
	}
	if len(ae.Messages) == 0 {
		t.Errorf("%s: no error messages in %v", what, err)
	}
	return ae
}

func newPlan(start, end string) apiclient.PlanCreate {
	return apiclient.PlanCreate{StartDate: start, EndDate: end}
}

func TestConformanceSignature(t *testing.T) {
	// The published test vector of docs/configuration.md, "Authentication".
	got := apiclient.SignatureForDigest("d197b7819d6f914677270f939a4c67ad9dc4bd44076e6a0ca7bafab9235a7126",
		"/api/public/v1/scorecards", "726a4d0e2707c29beda838e4d0c8cca5753486c3057cf5a722abf65e8f4b3af1")
	if want := "HMAC ODNjMzY5N2JmNDI4NWFkZjMwNzlhOTJiMTdmOTVjZGJkMzk0MzM4OGZiYTE5OTEyMWVlOWZjOTZkNmEzNTQ4Mg=="; got != want {
		t.Fatalf("test vector: %s", got)
	}
	srv := start(t, sandbox.Options{})
	// The sandbox accepts a signature computed independently of apiclient.
	sign := func(secret, path string, body []byte) string {
		sum := sha256.Sum256(body)
		msg := path + hex.EncodeToString(sum[:])
		for i := 0; i < 5; i++ {
			m := hmac.New(sha256.New, []byte(secret))
			m.Write([]byte(msg))
			msg = hex.EncodeToString(m.Sum(nil))
		}
		return "HMAC " + base64.StdEncoding.EncodeToString([]byte(msg))
	}
	for _, tc := range []struct {
		secret string
		want   int
	}{{acme.secret, 200}, {blue.secret, 401}, {"", 401}} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/public/v1/scorecards", nil)
		req.Header.Set("X-Api-Key", acme.key)
		req.Header.Set("Authorization", sign(tc.secret, "/api/public/v1/scorecards", nil))
		req.Header.Set("Accept", "application/json")
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("secret %q: status %d, want %d", tc.secret, resp.StatusCode, tc.want)
		}
	}
}

func TestConformanceAuthentication(t *testing.T) {
	fx := sandbox.DefaultFixtures()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	fx.Accounts = append(fx.Accounts,
		sandbox.Account{Name: "soon", APIKey: "mpk_soon", Secret: "s-soon", CompanyID: "8ovHrj", ExpiresAt: "2026-12-04T09:00:00Z"},
		sandbox.Account{Name: "gone", APIKey: "mpk_gone", Secret: "s-gone", CompanyID: "8ovHrj", ExpiresAt: "2026-11-01T00:00:00Z"},
	)
	srv := start(t, sandbox.Options{Fixtures: fx, Now: func() time.Time { return now }})
	ctx := context.Background()
	for name, a := range map[string]account{
		"wrong signature": {acme.key, "not-the-secret"},
		"another secret":  {acme.key, blue.secret},
		"unknown key":     {"mpk_nobody", acme.secret},
		"expired key":     {"mpk_gone", "s-gone"},
	} {
		_, err := client(t, srv, a).ListPlans(ctx)
		ae := expectAPIError(t, name, err, 401)
		if strings.Contains(ae.Error(), a.secret) {
			t.Errorf("%s: the error shows the secret", name)
		}
		// A POST refused for its credentials stores nothing.
		_, err = client(t, srv, a).CreatePlan(ctx, newPlan("2025-09-01", "2026-08-31"))
		expectAPIError(t, name+" create", err, 401)
	}
	if n := len(srv.Sandbox.Plans("acme")) + len(srv.Sandbox.Plans("gone")); n != 0 {
		t.Errorf("%d plans stored by refused requests", n)
	}

	core, logs := observer.New(zap.WarnLevel)
	c := client(t, srv, account{"mpk_soon", "s-soon"}, func(o *apiclient.Options) { o.Logger = zap.New(core) })
	if _, err := c.ListPlans(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListScorecards(ctx); err != nil {
		t.Fatal(err)
	}
	exp, in, ok := c.KeyExpiry()
	if !ok || in != "12d" || exp != "2026-12-04T09:00:00Z" {
		t.Errorf("KeyExpiry = %q %q %v", exp, in, ok)
	}
	if logs.Len() != 1 {
		t.Errorf("%d warnings about the expiring key, want exactly one", logs.Len())
	}
	if _, _, ok := client(t, srv, acme).KeyExpiry(); ok {
		t.Error("a key without expiry reports one")
	}
}

func TestConformancePlans(t *testing.T) {
	srv := start(t, sandbox.Options{})
	ctx := context.Background()
	c := client(t, srv, acme)

	p, err := c.CreatePlan(ctx, newPlan("2025-09-01", "2035-12-31"))
	if err != nil {
		t.Fatal(err)
	}
	if p.EndDate != "2030-08-31" || p.Era != "post_2025" || len(p.Milestones) != 5 || p.Name != "EE Plan 2025-09-01 to 2030-08-31" {
		t.Fatalf("created %s..%s era %s, %d milestones, name %q", p.StartDate, p.EndDate, p.Era, len(p.Milestones), p.Name)
	}
	for i, m := range p.Milestones {
		if m.YearNumber != i+1 || len(m.Targets) != 2 || m.Targets[0].TargetType != "all_employees" || m.Targets[1].TargetType != "disabled_employees" {
			t.Fatalf("milestone %d: %+v", i, m)
		}
	}
	var served []string
	for n := range p.Milestones[0].Targets[0].Counters {
		served = append(served, n)
	}
	slices.Sort(served)
	if want := sandbox.ContractStatement().Counters; !slices.Equal(served, want) {
		t.Errorf("a served target carries %d counters, want the %d of the sandbox's catalog", len(served), len(want))
	}

	// Prefill from the scorecard's workforce, on create only.
	pre, err := c.CreatePlan(ctx, apiclient.PlanCreate{Name: "Baseline", StartDate: "2026-09-01", EndDate: "2028-08-31", ScorecardID: "scorecard_acme_2025", Sector: "Manufacturing"})
	if err != nil {
		t.Fatal(err)
	}
	wf := sandbox.DefaultFixtures().Scorecards[0].Workforce
	for _, m := range pre.Milestones {
		for _, tg := range m.Targets {
			want := wf.AllEmployees
			if tg.TargetType == "disabled_employees" {
				want = wf.DisabledEmployees
			}
			for n, v := range want {
				if tg.Counters[n] != v {
					t.Fatalf("prefill %s %s = %d, want %d", tg.TargetType, n, tg.Counters[n], v)
				}
			}
		}
	}
	sc26, null := apiclient.NullString("scorecard_acme_2026"), apiclient.NullString("")
	name := "Renamed"
	up, err := c.UpdatePlan(ctx, pre.ID, apiclient.PlanUpdate{Name: &name, ScorecardID: &sc26, Sector: &null})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name != name || up.ScorecardID == nil || *up.ScorecardID != "scorecard_acme_2026" || up.Sector != nil {
		t.Errorf("updated %+v", up)
	}
	if fmt.Sprint(up.Milestones) != fmt.Sprint(pre.Milestones) {
		t.Error("rebinding the scorecard re-ran the prefill")
	}
	// Well-formed dates on update are ignored.
	var raw apiclient.Plan
	if err := c.Do(ctx, "PATCH", fmt.Sprintf("/api/public/v1/employment_equity_plans/%d", pre.ID), []byte(`{"employment_equity_plan":{"start_date":"2027-09-01","end_date":"2027-12-31"}}`), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.StartDate != "2026-09-01" || raw.EndDate != "2028-08-31" {
		t.Errorf("dates changed on update: %s..%s", raw.StartDate, raw.EndDate)
	}

	// Target update: only the named counters change.
	tg := pre.Milestones[1].Targets[0]
	got, err := c.UpdateTarget(ctx, pre.ID, pre.Milestones[1].ID, tg.ID, map[string]int64{"number_of_african_female_top_managers": 42, "number_of_white_male_unskilled_employees": 0})
	if err != nil {
		t.Fatal(err)
	}
	for n, v := range tg.Counters {
		want := v
		if n == "number_of_african_female_top_managers" {
			want = 42
		} else if n == "number_of_white_male_unskilled_employees" {
			want = 0
		}
		if got.Counters[n] != want {
			t.Errorf("%s = %d, want %d", n, got.Counters[n], want)
		}
	}
	if got.TargetType != "all_employees" || got.ID != tg.ID {
		t.Errorf("target %d %s", got.ID, got.TargetType)
	}
	var tr apiclient.Target
	if err := c.Do(ctx, "PATCH", fmt.Sprintf("/api/public/v1/employment_equity_plans/%d/employment_equity_milestones/%d/employment_equity_targets/%d", pre.ID, pre.Milestones[1].ID, tg.ID),
		[]byte(`{"employment_equity_target":{"target_type":"disabled_employees","number_of_unknown_x_y":5,"note":"x"}}`), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.TargetType != "all_employees" || len(tr.Counters) != 90 {
		t.Errorf("target_type or unknown fields were applied: %s, %d counters", tr.TargetType, len(tr.Counters))
	}

	list, err := c.ListPlans(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %d", err, len(list))
	}
	for _, l := range list {
		if l.Milestones != nil {
			t.Error("list carries milestones")
		}
	}
	stored, err := c.GetPlan(ctx, pre.ID)
	if err != nil || stored.Name != name || stored.Milestones[1].Targets[0].Counters["number_of_african_female_top_managers"] != 42 {
		t.Fatalf("get: %v %+v", err, stored)
	}

	// Delete cascades: 204, then 404 for the plan and its targets.
	if err := c.DeletePlan(ctx, pre.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPlan(ctx, pre.ID)
	expectAPIError(t, "get deleted", err, 404)
	err = c.DeletePlan(ctx, pre.ID)
	expectAPIError(t, "delete deleted", err, 404)
	_, err = c.UpdateTarget(ctx, pre.ID, pre.Milestones[1].ID, tg.ID, map[string]int64{"number_of_african_female_top_managers": 1})
	expectAPIError(t, "target of deleted plan", err, 404)

	// The first plan is still there, clamped.
	first, err := c.GetPlan(ctx, p.ID)
	if err != nil || len(first.Milestones) != 5 || first.EndDate != "2030-08-31" {
		t.Errorf("first plan: %v %+v", err, first)
	}
}

// TestConformanceErrorTable covers every row of the contract's error table
// (docs/sandbox.md, "Behaviour"), plus the decisions docs/sandbox.md states.
func TestConformanceErrorTable(t *testing.T) {
	srv := start(t, sandbox.Options{RecalcDuration: time.Hour})
	ctx := context.Background()
	c := client(t, srv, acme)
	bc := client(t, srv, blue)
	p, err := c.CreatePlan(ctx, newPlan("2025-09-01", "2027-08-31"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.CreatePlan(ctx, newPlan("2025-09-01", "2026-08-31"))
	if err != nil {
		t.Fatal(err)
	}
	m0, m1 := p.Milestones[0], p.Milestones[1]
	sec := func(s string) *apiclient.NullString { v := apiclient.NullString(s); return &v }
	planURL := fmt.Sprintf("/api/public/v1/employment_equity_plans/%d", p.ID)

	rows := []struct {
		name    string
		call    func() error
		status  int
		message string
	}{
		{"422 create: start_date before 2025-09-01", func() error {
			_, err := c.CreatePlan(ctx, newPlan("2025-08-31", "2026-08-31"))
			return err
		}, 422, "2025-09-01"},
		{"422 create: end_date before start_date", func() error {
			_, err := c.CreatePlan(ctx, newPlan("2026-09-01", "2026-08-31"))
			return err
		}, 422, "end_date"},
		{"422 create: unknown scorecard_id", func() error {
			_, err := c.CreatePlan(ctx, apiclient.PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31", ScorecardID: "scorecard_nope"})
			return err
		}, 422, "Scorecard not found"},
		{"422 create: another account's scorecard_id", func() error {
			_, err := c.CreatePlan(ctx, apiclient.PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31", ScorecardID: "scorecard_bluecrane_2025"})
			return err
		}, 422, "Scorecard not found"},
		{"422 update: unknown scorecard_id", func() error {
			_, err := c.UpdatePlan(ctx, p.ID, apiclient.PlanUpdate{ScorecardID: sec("scorecard_nope")})
			return err
		}, 422, "Scorecard not found"},
		{"422 update: another account's scorecard_id", func() error {
			_, err := c.UpdatePlan(ctx, p.ID, apiclient.PlanUpdate{ScorecardID: sec("scorecard_bluecrane_2025")})
			return err
		}, 422, "Scorecard not found"},
		{"422 create: sector not in the list", func() error {
			_, err := c.CreatePlan(ctx, apiclient.PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31", Sector: "Farming"})
			return err
		}, 422, "sector"},
		{"422 update: sector not in the list", func() error {
			_, err := c.UpdatePlan(ctx, p.ID, apiclient.PlanUpdate{Sector: sec("construction")})
			return err
		}, 422, "sector"},
		{"422 update: invalid date", func() error {
			return c.Do(ctx, "PATCH", planURL, []byte(`{"employment_equity_plan":{"end_date":"2026-02-30"}}`), nil)
		}, 422, "end_date"},
		{"422 update target: negative counter", func() error {
			_, err := c.UpdateTarget(ctx, p.ID, m0.ID, m0.Targets[0].ID, map[string]int64{"number_of_african_male_top_managers": -1})
			return err
		}, 422, "number_of_african_male_top_managers"},
		{"422 update target: decimal counter", func() error {
			return c.Do(ctx, "PATCH", fmt.Sprintf("%s/employment_equity_milestones/%d/employment_equity_targets/%d", planURL, m0.ID, m0.Targets[0].ID),
				[]byte(`{"employment_equity_target":{"number_of_coloured_female_senior_managers":1.5}}`), nil)
		}, 422, "number_of_coloured_female_senior_managers"},
		{"422 update target: string counter", func() error {
			return c.Do(ctx, "PATCH", fmt.Sprintf("%s/employment_equity_milestones/%d/employment_equity_targets/%d", planURL, m0.ID, m0.Targets[0].ID),
				[]byte(`{"employment_equity_target":{"number_of_coloured_female_senior_managers":"2"}}`), nil)
		}, 422, "number_of_coloured_female_senior_managers"},
		{"404 update plan: unknown plan", func() error {
			_, err := c.UpdatePlan(ctx, 987654, apiclient.PlanUpdate{Sector: sec("Construction")})
			return err
		}, 404, ""},
		{"404 update plan: another account's plan", func() error {
			_, err := bc.UpdatePlan(ctx, p.ID, apiclient.PlanUpdate{Sector: sec("Construction")})
			return err
		}, 404, ""},
		{"404 retrieve: another account's plan", func() error {
			_, err := bc.GetPlan(ctx, p.ID)
			return err
		}, 404, ""},
		{"404 delete plan: unknown plan", func() error { return c.DeletePlan(ctx, 987654) }, 404, ""},
		{"404 delete plan: another account's plan", func() error { return bc.DeletePlan(ctx, p.ID) }, 404, ""},
		{"404 update target: another account's plan", func() error {
			_, err := bc.UpdateTarget(ctx, p.ID, m0.ID, m0.Targets[0].ID, map[string]int64{"number_of_african_male_top_managers": 1})
			return err
		}, 404, ""},
		{"404 update target: milestone of another plan", func() error {
			_, err := c.UpdateTarget(ctx, p.ID, other.Milestones[0].ID, other.Milestones[0].Targets[0].ID, map[string]int64{"number_of_african_male_top_managers": 1})
			return err
		}, 404, ""},
		{"404 update target: target of another milestone", func() error {
			_, err := c.UpdateTarget(ctx, p.ID, m1.ID, m0.Targets[0].ID, map[string]int64{"number_of_african_male_top_managers": 1})
			return err
		}, 404, ""},
		{"404 update target: unknown target", func() error {
			_, err := c.UpdateTarget(ctx, p.ID, m1.ID, 987654, map[string]int64{"number_of_african_male_top_managers": 1})
			return err
		}, 404, ""},
		{"404 scorecard: another account's scorecard", func() error {
			_, err := c.GetScorecard(ctx, "scorecard_bluecrane_2025")
			return err
		}, 404, ""},
		{"404 recalculate: another account's scorecard", func() error {
			return c.RecalculateScorecard(ctx, "scorecard_bluecrane_2025")
		}, 404, ""},
		{"409 recalculate: a run in progress", func() error {
			if err := c.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
				return fmt.Errorf("first run: %w", err)
			}
			return c.RecalculateScorecard(ctx, "scorecard_acme_2025")
		}, 409, "in progress"},
		{"400 company search without a parameter", func() error {
			_, err := c.SearchCompanies(ctx, apiclient.CompanyQuery{})
			return err
		}, 400, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ae := expectAPIError(t, row.name, row.call(), row.status)
			if row.message != "" && !strings.Contains(strings.Join(ae.Messages, " "), row.message) {
				t.Errorf("messages %q do not mention %q", ae.Messages, row.message)
			}
		})
	}
	// The scorecard-not-found message is identical for unknown and foreign ids.
	msgs := func(id string) string {
		_, err := c.UpdatePlan(ctx, p.ID, apiclient.PlanUpdate{ScorecardID: sec(id)})
		var ae *apiclient.APIError
		errors.As(err, &ae)
		return strings.Join(ae.Messages, "|")
	}
	if a, b := msgs("scorecard_nope"), msgs("scorecard_bluecrane_2025"); a != b {
		t.Errorf("unknown %q vs foreign %q", a, b)
	}
	// Nothing the failed calls sent changed the stored plan.
	stored, err := c.GetPlan(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*stored) != fmt.Sprint(*p) {
		t.Errorf("failed calls changed the plan %d", p.ID)
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 2 {
		t.Errorf("%d acme plans, want 2", n)
	}
}

func TestConformanceScorecards(t *testing.T) {
	srv := start(t, sandbox.Options{})
	ctx := context.Background()
	c, bc := client(t, srv, acme), client(t, srv, blue)
	list, err := c.ListScorecards(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	in := apiclient.ScorecardInput{Description: "FY2027", StartDate: "2027-03-01", EndDate: "2028-02-29", CharterID: "alpha_tourism", Province: "KwaZulu-Natal"}
	sc, err := c.CreateScorecard(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sc.ID, "scorecard_") || sc.CharterID != "alpha_tourism" || sc.CreatedAt == "" {
		t.Errorf("created %+v", sc)
	}
	up, err := c.UpdateScorecard(ctx, sc.ID, apiclient.ScorecardInput{Province: "Limpopo"})
	if err != nil || up.Province != "Limpopo" || up.Description != "FY2027" || up.EndDate != "2028-02-29" {
		t.Errorf("partial update: %v %+v", err, up)
	}
	for name, bad := range map[string]apiclient.ScorecardInput{
		"missing province": {Description: "d", StartDate: "2027-03-01", EndDate: "2028-02-28", CharterID: "alpha_ict"},
		"bad charter":      {Description: "d", StartDate: "2027-03-01", EndDate: "2028-02-28", CharterID: "ict", Province: "National"},
		"bad province":     {Description: "d", StartDate: "2027-03-01", EndDate: "2028-02-28", CharterID: "alpha_ict", Province: "Natal"},
		"bad date":         {Description: "d", StartDate: "2027-13-01", EndDate: "2028-02-28", CharterID: "alpha_ict", Province: "National"},
	} {
		_, err := c.CreateScorecard(ctx, bad)
		expectAPIError(t, name, err, 422)
	}
	_, err = c.UpdateScorecard(ctx, sc.ID, apiclient.ScorecardInput{CharterID: "alpha_nope"})
	expectAPIError(t, "update charter", err, 422)

	// Another account's scorecard: 404 on every operation.
	_, err = bc.GetScorecard(ctx, sc.ID)
	expectAPIError(t, "foreign get", err, 404)
	_, err = bc.UpdateScorecard(ctx, sc.ID, apiclient.ScorecardInput{Province: "Gauteng"})
	expectAPIError(t, "foreign update", err, 404)
	err = bc.DeleteScorecard(ctx, sc.ID)
	expectAPIError(t, "foreign delete", err, 404)
	err = bc.RecalculateScorecard(ctx, sc.ID)
	expectAPIError(t, "foreign recalculate", err, 404)
	bl, err := bc.ListScorecards(ctx)
	if err != nil || len(bl) != 1 || bl[0].ID != "scorecard_bluecrane_2025" {
		t.Errorf("bluecrane list: %v %+v", err, bl)
	}

	if err := c.DeleteScorecard(ctx, sc.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetScorecard(ctx, sc.ID)
	expectAPIError(t, "get deleted", err, 404)
}

func TestConformanceRecalculation(t *testing.T) {
	const run = 800 * time.Millisecond
	srv := start(t, sandbox.Options{RecalcDuration: run})
	ctx := context.Background()
	c := client(t, srv, acme)
	started := time.Now()
	if err := c.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
		t.Fatalf("first: %v", err)
	}
	err := c.RecalculateScorecard(ctx, "scorecard_acme_2025")
	if time.Since(started) < run {
		expectAPIError(t, "second while running", err, 409)
	}
	// Another scorecard's run is independent.
	if err := c.RecalculateScorecard(ctx, "scorecard_acme_2026"); err != nil {
		t.Fatalf("other scorecard: %v", err)
	}
	// After the run ends a new request is accepted (202 again).
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.RecalculateScorecard(ctx, "scorecard_acme_2025")
		if err == nil {
			break
		}
		if statusOf(err) != 409 || time.Now().After(deadline) {
			t.Fatalf("after the run: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if time.Since(started) < run {
		t.Errorf("accepted again %v after the first, before the %v run ended", time.Since(started), run)
	}
	st := srv.Sandbox.Stats()
	if st.ByRoute["PUT /api/public/v1/scorecards/{id}/recalculate"] < 4 {
		t.Errorf("stats %+v", st.ByRoute)
	}
}

func TestConformanceCompanies(t *testing.T) {
	srv := start(t, sandbox.Options{})
	ctx := context.Background()
	c := client(t, srv, acme)
	ids := func(cs []apiclient.Company) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		q    apiclient.CompanyQuery
		want []string
	}{
		{apiclient.CompanyQuery{VATNumber: "4012345678"}, []string{"8ovHrj"}},
		{apiclient.CompanyQuery{VATNumber: "0412345678"}, []string{"Mk3Pq7"}},
		{apiclient.CompanyQuery{RegistrationNumber: "2015/123456/07"}, []string{"Q2wE9z"}},
		{apiclient.CompanyQuery{IDNumber: "8001015009087"}, []string{"Mk3Pq7"}},
		{apiclient.CompanyQuery{VATNumber: "4012345678", RegistrationNumber: "2015/123456/07", IDNumber: "8001015009087"}, []string{"8ovHrj", "Q2wE9z", "Mk3Pq7"}},
		{apiclient.CompanyQuery{VATNumber: "4000000000"}, nil},
	} {
		got, err := c.SearchCompanies(ctx, tc.q)
		if err != nil {
			t.Fatalf("%+v: %v", tc.q, err)
		}
		if got == nil || !slices.Equal(ids(got), tc.want) {
			t.Errorf("%+v: %v, want %v", tc.q, ids(got), tc.want)
		}
	}
	got, _ := c.SearchCompanies(ctx, apiclient.CompanyQuery{IDNumber: "8001015009087"})
	if got[0].RegistrationNumber != nil || got[0].TradingName != "Karoo Sole Trader" {
		t.Errorf("record %+v", got[0])
	}
	bad := client(t, srv, acme, func(o *apiclient.Options) { o.LookupPassword = "wrong" })
	_, err := bad.SearchCompanies(ctx, apiclient.CompanyQuery{VATNumber: "4012345678"})
	ae := expectAPIError(t, "wrong lookup password", err, 401)
	if strings.Contains(ae.Error(), "wrong") {
		t.Error("the error shows the password")
	}
}

func TestConformanceFaults(t *testing.T) {
	srv := start(t, sandbox.Options{Seed: 20261122, Faults: "503=0.3,429=0.3,retry-after=0"})
	ctx := context.Background()
	c := client(t, srv, acme)
	p, err := c.CreatePlan(ctx, newPlan("2025-09-01", "2026-08-31"))
	for err != nil {
		// POST is retried only after 429: a 503 is an unclear outcome, 429s
		// that outlast the attempts a refusal.
		var ae *apiclient.APIError
		if !errors.Is(err, apiclient.ErrUnclearOutcome) && !(errors.As(err, &ae) && ae.StatusCode == 429) {
			t.Fatalf("create under faults: %v", err)
		}
		p, err = c.CreatePlan(ctx, newPlan("2025-09-01", "2026-08-31"))
	}
	srv.Sandbox.ResetStats()
	// GET, PATCH and DELETE retry through 503 and 429.
	const calls = 20
	for i := 0; i < calls; i++ {
		if _, err := c.GetPlan(ctx, p.ID); err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		if _, err := c.UpdateTarget(ctx, p.ID, p.Milestones[0].ID, p.Milestones[0].Targets[0].ID, map[string]int64{"number_of_african_male_top_managers": int64(i)}); err != nil {
			t.Fatalf("patch %d: %v", i, err)
		}
	}
	st := srv.Sandbox.Stats()
	if st.Requests <= 2*calls || st.Writes != calls {
		t.Errorf("stats %+v: want retries (more than %d requests) and exactly %d writes", st, 2*calls, calls)
	}
	if got := srv.Sandbox.Plans("acme")[0].Milestones[0].Targets[0].Counters["number_of_african_male_top_managers"]; got != calls-1 {
		t.Errorf("counter %d after the retried patches", got)
	}

	// Retry-After is honoured: one 503 with Retry-After: 1 makes the client wait.
	if err := srv.Sandbox.SetFaults("503=0.5"); err != nil {
		t.Fatal(err)
	}
	srv.Sandbox.ResetStats()
	began := time.Now()
	if _, err := c.ListPlans(ctx); err != nil {
		t.Fatal(err)
	}
	if retries := srv.Sandbox.Stats().Requests - 1; time.Since(began) < time.Duration(retries)*time.Second {
		t.Errorf("%d retries in %v: Retry-After: 1 was not honoured", retries, time.Since(began))
	}

	// lost: the write is committed, the answer never arrives; the client
	// reports an unclear outcome and the plan exists.
	_ = srv.Sandbox.SetFaults("lost=1")
	_, err = c.CreatePlan(ctx, apiclient.PlanCreate{Name: "lost answer", StartDate: "2026-09-01", EndDate: "2027-08-31"})
	if !errors.Is(err, apiclient.ErrUnclearOutcome) {
		t.Fatalf("lost POST: %v, want an unclear outcome (no answer)", err)
	}
	// reset: the connection drops before the service acts; still unclear to the client.
	_ = srv.Sandbox.SetFaults("reset=1")
	_, err = c.CreatePlan(ctx, apiclient.PlanCreate{Name: "reset", StartDate: "2026-09-01", EndDate: "2027-08-31"})
	if !errors.Is(err, apiclient.ErrUnclearOutcome) {
		t.Fatalf("reset POST: %v, want an unclear outcome (no answer)", err)
	}
	_ = srv.Sandbox.SetFaults("")
	list, err := c.ListPlans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
	}
	if !slices.Contains(names, "lost answer") || slices.Contains(names, "reset") {
		t.Errorf("plans after lost and reset: %q", names)
	}
	// A cancelled context stops the client at once, even mid-latency.
	srv.Sandbox.SetLatency(time.Hour)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.ListPlans(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow list: %v", err)
	}
	srv.Sandbox.SetLatency(0)
	if _, err := c.ListPlans(ctx); err != nil {
		t.Errorf("after latency: %v", err)
	}
}
