package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// seed creates a stored plan on s and returns it as stored.
func seed(t *testing.T, s *pipelinetest.FakeService, name string) *pipeline.Plan {
	t.Helper()
	p, err := s.CreatePlan(context.Background(), pipeline.NewPlan{Name: name, StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// byID is an input plan that names only a plan id (and maybe an account),
// as exports of a configuration without company identifiers are.
func byID(id int64, account string) *pipeline.InputPlan {
	p := pipelinetest.InPlan("", "", "", "", "", map[string]int64{pipelinetest.Amt: 1})
	p.PlanID, p.Account = id, account
	return p
}

// TestRouteByPlanIDAndAccount: with several accounts and no company
// columns, a plan_id goes to the one account that holds it; a plan id held
// by none or by several is an error for that plan only; the account
// column decides when given, and a company that disagrees with it is an
// error, never a guess.
func TestRouteByPlanIDAndAccount(t *testing.T) {
	w := pipelinetest.NewWorld()
	// Each account numbers its plans on its own here, so that one id can
	// be held by both (as two services behind one configuration could).
	w.Crane.NextID = &atomic.Int64{}
	a1 := seed(t, w.Acme, "Acme one")   // id 1 on acme
	a2 := seed(t, w.Acme, "Acme two")   // id 2 on acme
	c1 := seed(t, w.Crane, "Crane one") // id 1 on bluecrane too
	if a1.ID != c1.ID {
		t.Fatalf("ids %d and %d should collide", a1.ID, c1.ID)
	}
	acmeWrong := byID(a2.ID, "")
	acmeWrong.Company = pipeline.CompanyIDs{VAT: pipelinetest.CraneCo.VATNumber}
	plans := []*pipeline.InputPlan{
		byID(a2.ID, ""),          // held by acme only
		byID(a1.ID, ""),          // held by both
		byID(a1.ID, "bluecrane"), // held by both, the account column decides
		byID(999, ""),            // held by none
		byID(a2.ID, "nosuch"),    // unknown account
		acmeWrong,                // plan on acme, company columns (looked up) name Blue Crane
	}
	withCompany := byID(a1.ID, "acme")
	withCompany.Company = pipeline.CompanyIDs{VAT: pipelinetest.CraneCo.VATNumber}
	plans = append(plans, withCompany) // account column and company disagree

	r := NewRunner(w.Accounts, w.Finder, RunOptions{})
	cs, err := r.Plan(context.Background(), plans)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		account string
		fail    string
	}{
		{"acme", ""},
		{"", "held by several configured accounts (acme, bluecrane); add the account column"},
		{"bluecrane", ""},
		{"", "plan 999 is on none of the configured accounts (acme, bluecrane)"},
		{"", `the file names account "nosuch", which is not configured; the configured accounts are acme, bluecrane`},
		{"", "is not on account bluecrane"}, // with the lookup, the company decides the account
		{"", "the account column names account acme, whose company is 8ovHrj, but the company columns name Blue Crane Logistics"},
	}
	for i, d := range cs.Plans {
		switch {
		case want[i].fail == "" && (d.Action == diff.ActionFailed || d.Account != want[i].account):
			t.Errorf("plan %d: %v on %q (%s), want account %s", i, d.Action, d.Account, d.Reason, want[i].account)
		case want[i].fail != "" && (d.Action != diff.ActionFailed || !strings.Contains(d.Reason, want[i].fail)):
			t.Errorf("plan %d: %v %q, want a failure with %q", i, d.Action, d.Reason, want[i].fail)
		}
	}
	if got := cs.Plans[2].PlanID(); got != c1.ID {
		t.Errorf("plan on bluecrane matched %d", got)
	}
}

// TestRouteAccountAgainstConfiguredIdentifiers: without the lookup, the
// company columns are checked against the identifiers the configuration
// gives the account (one rule, sameIdentifier).
func TestRouteAccountAgainstConfiguredIdentifiers(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts[0].Company = pipeline.CompanyIDs{Registration: "2009/012345/07"}
	p1 := seed(t, w.Acme, "Acme one")
	same := byID(p1.ID, "acme")
	same.Company = pipeline.CompanyIDs{Registration: "2009-012345-07"} // written differently, the same number
	other := byID(p1.ID, "acme")
	other.Company = pipeline.CompanyIDs{Registration: "2015/123456/07"}
	r := NewRunner(w.Accounts, nil, RunOptions{})
	cs, err := r.Plan(context.Background(), []*pipeline.InputPlan{same, other})
	if err != nil {
		t.Fatal(err)
	}
	if d := cs.Plans[0]; d.Action == diff.ActionFailed {
		t.Errorf("same registration written differently: %s", d.Reason)
	}
	if d := cs.Plans[1]; d.Action != diff.ActionFailed || !strings.Contains(d.Reason, "configured company identifiers are registration 2009/012345/07") {
		t.Errorf("other registration: %v %q", d.Action, d.Reason)
	}
}

// TestServiceCatalogFromTargets: the catalog is the keys of a target the
// service returns, and a file counter the service lacks is an error
// naming its column.
func TestServiceCatalogFromTargets(t *testing.T) {
	w := pipelinetest.NewWorld()
	r := NewRunner(w.Accounts, w.Finder, RunOptions{})
	if c, err := r.ServiceCatalog(context.Background()); c != nil || err != nil {
		t.Fatalf("no stored plan: catalog %v, %v; want none", c, err)
	}
	small, err := pipeline.NewCatalog([]string{pipelinetest.Amt, "number_of_african_female_top_managers", "number_of_other_diverse_top_managers"})
	if err != nil {
		t.Fatal(err)
	}
	w.Crane.Catalog = small
	seed(t, w.Crane, "Served")
	r = NewRunner(w.Accounts, w.Finder, RunOptions{})
	c, err := r.ServiceCatalog(context.Background())
	if err != nil || c == nil || !c.Equal(small) {
		t.Fatalf("catalog %v, %v; want the served %v", c, err, small.Names())
	}
	in := pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "X", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1, "number_of_white_male_top_managers": 2})
	in.Targets[0].Cells["number_of_white_male_top_managers"] = pipeline.Origin{File: "plans.csv", Row: 2, Column: 10, Header: "number_of_white_male_top_managers"}
	ps := CheckServiceCatalog([]*pipeline.InputPlan{in}, c)
	if len(ps) != 1 || ps[0].Origin.Column != 10 || !strings.Contains(ps[0].Message, "number_of_white_male_top_managers is a counter the service does not have") {
		t.Errorf("CheckServiceCatalog = %v", ps)
	}
}

// TestCatalogOfStored: the catalog a stored plan shows is the keys of its
// first target with counters, known ones in the default catalog's order,
// then the others sorted; a plan whose targets carry no counter shows none.
// (It was planapi.CatalogFromTarget's test, a second route now gone.)
func TestCatalogOfStored(t *testing.T) {
	def := pipeline.DefaultCatalog()
	counters := map[string]int64{}
	for i, n := range def.Names() {
		counters[n] = int64(i)
	}
	p := &pipeline.Plan{Milestones: []pipeline.Milestone{{Targets: []pipeline.Target{{ID: 1}}}, {Targets: []pipeline.Target{{ID: 2, Counters: pipeline.CountersOf(counters)}}}}}
	if c := pipeline.CatalogOfStored(p); c == nil || !slices.Equal(c.Names(), def.Names()) {
		t.Errorf("catalog of a default target = %v", c)
	}
	odd := map[string]int64{"number_of_martian_female_top_managers": 1, "number_of_african_male_top_managers": 0, "number_of_african_female_top_managers": 0}
	p = &pipeline.Plan{Milestones: []pipeline.Milestone{{Targets: []pipeline.Target{{ID: 3, Counters: pipeline.CountersOf(odd)}, {ID: 4, Counters: pipeline.CountersOf(counters)}}}}}
	want := []string{"number_of_african_male_top_managers", "number_of_african_female_top_managers", "number_of_martian_female_top_managers"}
	if c := pipeline.CatalogOfStored(p); c == nil || !slices.Equal(c.Names(), want) {
		t.Errorf("catalog = %v, want %v", c, want)
	}
	if c := pipeline.CatalogOfStored(&pipeline.Plan{Milestones: []pipeline.Milestone{{Targets: []pipeline.Target{{ID: 5}}}}}); c != nil {
		t.Errorf("a plan without counters: catalog %v, want none", c.Names())
	}
	if c := pipeline.CatalogOfTarget(pipeline.Target{ID: 6}); c != nil {
		t.Errorf("a target without counters: catalog %v, want none", c.Names())
	}
}

// TestSameIdentifier covers the cases where the two old rules
// (sameIdentifier in resolve.go: letters and digits; identifierEqual in
// the export command: spaces and case only, never equal when blank)
// disagreed; the one rule now decides them all the same way.
func TestSameIdentifier(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
		why  string
	}{
		{"2009/012345/07", "2009/012345/07", true, "as stored"},
		{"2009/012345/07", "2009-012345-07", true, "old identifierEqual: false (export --company dropped the record apply accepted)"},
		{"2009/012345/07", "2009 012345 07", true, "old identifierEqual: false"},
		{"2009/012345/07", "200901234507", true, "old identifierEqual: false"},
		{" 4012345678", "4012345678", true, "spaces"},
		{"4012 345 678", "4012345678", true, "inner spaces"},
		{"ab123", "AB123", true, "letter case"},
		{"0412345678", "412345678", false, "leading zeros count"},
		{"", "", false, "old sameIdentifier: true (a blank identifier matched a blank one)"},
		{"/", "", false, "old sameIdentifier: true (no letter or digit matched none)"},
		{"-", "-", false, "old sameIdentifier: true"},
		{"4012345678", "4098765432", false, "different"},
	} {
		if got := pipeline.SameIdentifier(tc.a, tc.b); got != tc.want {
			t.Errorf("sameIdentifier(%q, %q) = %v, want %v (%s)", tc.a, tc.b, got, tc.want, tc.why)
		}
		if got := pipeline.SameIdentifier(tc.b, tc.a); got != tc.want {
			t.Errorf("sameIdentifier(%q, %q) = %v, not symmetric", tc.b, tc.a, got)
		}
	}
	rec := pipeline.Company{VATNumber: "4012345678", RegistrationNumber: "2009/012345/07"}
	if !pipeline.CompanyHas(rec, "2009-012345-07") || pipeline.CompanyHas(rec, "") || pipeline.CompanyHas(pipeline.Company{}, "") {
		t.Error("companyHas disagrees with sameIdentifier")
	}
	if !pipeline.SameCompanyIDs(pipeline.CompanyIDs{VAT: "4012345678"}, pipeline.CompanyIDs{VAT: "4012 345678", Registration: "x"}) ||
		pipeline.SameCompanyIDs(pipeline.CompanyIDs{VAT: "4012345678", Registration: "2009/012345/07"}, pipeline.CompanyIDs{VAT: "4012345678", Registration: "2015/123456/07"}) ||
		pipeline.SameCompanyIDs(pipeline.CompanyIDs{VAT: "4012345678"}, pipeline.CompanyIDs{Registration: "2009/012345/07"}) {
		t.Error("sameCompanyIDs")
	}
}

// TestExportedPlanBlanksDisagreeingTotals: totals the service holds as 0
// beside non-zero levels travel blank; totals that agree travel as they are.
func TestExportedPlanBlanksDisagreeingTotals(t *testing.T) {
	counters := map[string]int64{}
	for _, n := range pipeline.DefaultCatalog().Names() {
		counters[n] = 0
	}
	counters[pipelinetest.Amt] = 3 // african male top managers; the totals stay 0
	counters[pipeline.CounterName("white", "female", "senior_managers")] = 2
	counters[pipeline.CounterName("white", "female", "total_permanent_employees")] = 2
	counters[pipeline.CounterName("white", "female", "temporary_employees")] = 1
	counters[pipeline.CounterName("white", "female", "grand_total_employees")] = 3
	stored := &pipeline.Plan{ID: 5, Name: "P", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31"),
		Milestones: []pipeline.Milestone{{YearNumber: 1, StartDate: pipelinetest.Day("2025-09-01"), Targets: []pipeline.Target{{ID: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(counters)}}}}}
	in := exportedPlan(stored, pipeline.CompanyIDs{}, "acme")
	got := in.Targets[0].Counters
	if in.Account != "acme" {
		t.Errorf("account %q", in.Account)
	}
	for _, n := range []string{pipeline.CounterName("african", "male", "total_permanent_employees"), pipeline.CounterName("african", "male", "grand_total_employees")} {
		if _, ok := got.Map()[n]; ok {
			t.Errorf("%s exported as %d, want blank", n, got.Map()[n])
		}
	}
	for _, n := range []string{pipeline.CounterName("white", "female", "total_permanent_employees"), pipeline.CounterName("white", "female", "grand_total_employees"),
		pipeline.CounterName("coloured", "male", "total_permanent_employees"), pipelinetest.Amt} {
		if got.Map()[n] != counters[n] {
			t.Errorf("%s = %d, want %d", n, got.Map()[n], counters[n])
		}
	}
	if stored.Milestones[0].Targets[0].Counters.Count() != len(pipeline.DefaultCatalog().Names()) {
		t.Error("the stored plan was changed")
	}
	// Read back: no totals warning.
	a := assemble.NewAssembler(nil)
	tgt := in.Targets[0]
	a.TotalWarnings(tgt)
	if len(a.Problems) != 0 {
		t.Errorf("warnings on the exported totals: %v", a.Problems)
	}
}

// TestReadStoredThroughTheGate: export and check --server read stored
// plans through the one door: every account listed once, the plans
// retrieved at most Concurrency at a time, counted by the gate, in account
// then id order; --plan ids no account lists are reported; a refused key
// is an error naming its account.
func TestReadStoredThroughTheGate(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.Delay, w.Crane.Delay = 2*time.Millisecond, 2*time.Millisecond
	var ids []int64
	for i := range 4 {
		ids = append(ids, seed(t, w.Acme, fmt.Sprint("A", i)).ID, seed(t, w.Crane, fmt.Sprint("C", i)).ID)
	}
	r := NewRunner(w.Accounts, nil, RunOptions{Concurrency: 2})
	got, err := r.ReadStored(context.Background(), StoredQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Plans) != 8 || got.Plans[0].Account.Name != "acme" || got.Plans[7].Account.Name != "bluecrane" {
		t.Fatalf("read %d plans: %+v", len(got.Plans), got.Plans)
	}
	for i := 1; i < 4; i++ {
		if got.Plans[i].Plan.ID <= got.Plans[i-1].Plan.ID {
			t.Errorf("plans out of id order: %d after %d", got.Plans[i].Plan.ID, got.Plans[i-1].Plan.ID)
		}
	}
	rc := r.requests()
	if rc.ByKind["list"] != 2 || rc.ByKind["get"] != 8 || rc.MaxInFlight > 2 || r.Progress().plansRead != 8 {
		t.Errorf("requests %+v, plans read %d", rc, r.Progress().plansRead)
	}
	if w.Acme.MaxSeen.Load() > 2 || w.Crane.MaxSeen.Load() > 2 || rc.MaxInFlight < 2 {
		t.Errorf("in flight: acme %d, bluecrane %d, gate %d; want the bound 2 reached, never passed", w.Acme.MaxSeen.Load(), w.Crane.MaxSeen.Load(), rc.MaxInFlight)
	}

	r = NewRunner(w.Accounts, nil, RunOptions{})
	got, err = r.ReadStored(context.Background(), StoredQuery{PlanIDs: []int64{ids[1], 99999, ids[1]}})
	if err != nil || len(got.Plans) != 1 || got.Plans[0].Plan.ID != ids[1] || !slices.Equal(got.Missing, []int64{99999}) {
		t.Errorf("--plan: %+v, %v", got, err)
	}

	w.Crane.Unauthorized = true
	w.Accounts[1].KeyHint = "mpk_blue…"
	r = NewRunner(w.Accounts, nil, RunOptions{})
	if _, err := r.ReadStored(context.Background(), StoredQuery{}); err == nil || !strings.Contains(err.Error(), "account bluecrane: key mpk_blue… refused") {
		t.Errorf("refused key: %v", err)
	}
}

// TestCheckConfiguredCompany: an account's configured identifiers must name
// one company, the account's own when it has a company_id; the record then
// completes them; an unreachable lookup keeps them with a warning.
func TestCheckConfiguredCompany(t *testing.T) {
	finder := &pipelinetest.FakeFinder{Companies: []pipeline.Company{pipelinetest.AcmeCo, pipelinetest.CraneCo}}
	for _, tc := range []struct {
		name        string
		finder      *pipelinetest.FakeFinder
		account     pipeline.Account
		ids         pipeline.CompanyIDs
		wantCompany string // company id, "" for none
		wantWarn    string // substring, "" for no warning
		wantErr     string // substring, "" for no error
	}{
		{"own company", finder, pipeline.Account{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID}, pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber}, pipelinetest.AcmeCo.ID, "", ""},
		{"other company", finder, pipeline.Account{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID}, pipeline.CompanyIDs{VAT: pipelinetest.CraneCo.VATNumber},
			"", "", "the identifiers of account acme in the configuration (VAT 4098765432) belong to Blue Crane Logistics (id Q2wE9z), but the account's company_id is 8ovHrj"},
		{"no company_id", finder, pipeline.Account{Name: "default"}, pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber}, pipelinetest.AcmeCo.ID,
			"the account's company identifiers (VAT 4012345678) name Acme Foods (Pty) Ltd (id 8ovHrj), but the account names no company_id", ""},
		{"unknown", finder, pipeline.Account{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID}, pipeline.CompanyIDs{VAT: "4999999999"}, "", "", "no company has"},
		{"two companies", finder, pipeline.Account{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID}, pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber, Registration: pipelinetest.CraneCo.RegistrationNumber}, "", "", "account acme"},
		{"lookup down", &pipelinetest.FakeFinder{Err: errors.New("connection refused")}, pipeline.Account{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID}, pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber},
			"", "could not be checked through the company lookup (connection refused); they are written as configured", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warn, err := pipeline.CheckConfiguredCompany(context.Background(), tc.finder, tc.account, tc.ids)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if got := ""; c != nil {
				got = c.ID
				if got != tc.wantCompany {
					t.Errorf("company = %s, want %s", got, tc.wantCompany)
				}
			} else if tc.wantCompany != "" {
				t.Errorf("company = nil, want %s", tc.wantCompany)
			}
			if tc.wantWarn == "" && warn != "" || !strings.Contains(warn, tc.wantWarn) {
				t.Errorf("warning = %q, want %q", warn, tc.wantWarn)
			}
		})
	}
	// A cancelled run: no warning, nothing checked.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	down := &pipelinetest.FakeFinder{Err: context.Canceled}
	if c, warn, err := pipeline.CheckConfiguredCompany(ctx, down, pipeline.Account{Name: "acme"}, pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber}); c != nil || warn != "" || err != nil {
		t.Errorf("cancelled: %v %q %v", c, warn, err)
	}
}
