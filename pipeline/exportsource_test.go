package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestExportSourcesByCompany: each company asked for is looked up and
// exported from its own account, once, with the record's identifiers;
// what names no single company of an account is an ExportCompanyError, a
// failing lookup a CompanyLookupError.
func TestExportSourcesByCompany(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	noWarn := func(s string) { t.Errorf("unexpected warning %q", s) }
	got, err := ExportSources(ctx, w.accounts, nil, w.finder, []string{" 4098765432 ", craneCo.RegistrationNumber, acmeCo.VATNumber}, noWarn)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].account.Name != "bluecrane" || got[1].account.Name != "acme" ||
		got[0].name != craneCo.TradingName || got[0].company.Registration != craneCo.RegistrationNumber {
		t.Errorf("sources %+v, want bluecrane then acme with their records' identifiers", got)
	}

	for _, tc := range []struct {
		name, q, want string
	}{
		{"blank", "  ", "needs a VAT, registration or ID number"},
		{"unknown", "4000000000", "4000000000: the company lookup knows no company with that VAT, registration or ID number"},
		{"no account", karooCo.VATNumber, karooCo.VATNumber + ": it is Karoo Sole Trader (id Mk3Pq7), but no configured account belongs to it; add an account with company_id Mk3Pq7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ExportSources(ctx, w.accounts, nil, w.finder, []string{tc.q}, noWarn)
			var ce *ExportCompanyError
			if !errors.As(err, &ce) || err.Error() != tc.want {
				t.Errorf("err = %v, want ExportCompanyError %q", err, tc.want)
			}
		})
	}

	twins := &fakeFinder{companies: []Company{acmeCo, {ID: "x1", TradingName: "Acme Twin", VATNumber: acmeCo.VATNumber}}}
	_, err = ExportSources(ctx, w.accounts, nil, twins, []string{acmeCo.VATNumber}, noWarn)
	var ce *ExportCompanyError
	if !errors.As(err, &ce) || len(ce.several) != 2 ||
		err.Error() != acmeCo.VATNumber+" matches several companies: Acme Foods (Pty) Ltd (id 8ovHrj); Acme Twin (id x1); give an identifier of one company only" {
		t.Errorf("err = %v, want the two companies named", err)
	}

	down := &fakeFinder{err: ErrUnavailable}
	_, err = ExportSources(ctx, w.accounts, nil, down, []string{acmeCo.VATNumber}, noWarn)
	var le *CompanyLookupError
	if !errors.As(err, &le) || !errors.Is(err, ErrUnavailable) || le.query != acmeCo.VATNumber {
		t.Errorf("err = %v, want a CompanyLookupError for %s", err, acmeCo.VATNumber)
	}
}

// TestExportSourcesConfigured: without companies every account is read,
// its configured identifiers completed from the lookup; identifiers of
// another company are a configuredCompanyError.
func TestExportSourcesConfigured(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	got, err := ExportSources(ctx, w.accounts, []CompanyIDs{{VAT: acmeCo.VATNumber}}, w.finder, nil, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != acmeCo.TradingName || got[0].company.Registration != acmeCo.RegistrationNumber || !got[1].company.IsZero() {
		t.Errorf("sources %+v, want acme completed and bluecrane as configured", got)
	}
	_, err = ExportSources(ctx, w.accounts, []CompanyIDs{{VAT: craneCo.VATNumber}}, w.finder, nil, func(string) {})
	var ce *configuredCompanyError
	if !errors.As(err, &ce) {
		t.Errorf("err = %v, want a configuredCompanyError", err)
	}
}

// TestReadExport: the plans come in account order with their account's
// company identifiers and name, and the served catalog; --plan ids found
// nowhere are Missing; the single account named default is exported
// without an account name.
func TestReadExport(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	for _, acct := range []*fakeService{w.crane, w.acme} {
		if _, err := acct.CreatePlan(ctx, NewPlan{Name: "P", StartDate: day("2025-09-01"), EndDate: day("2027-08-31")}); err != nil {
			t.Fatal(err)
		}
	}
	sources := []ExportSource{
		{account: w.accounts[0], company: CompanyIDs{VAT: acmeCo.VATNumber}, name: acmeCo.TradingName},
		{account: w.accounts[1]},
	}
	var got []ExportedStored
	read, err := ReadExport(ctx, sources, ExportQuery{Concurrency: 2, Each: func(p ExportedStored, cat *Catalog) error {
		if cat == nil {
			t.Error("no served catalog with the first plan")
		}
		got = append(got, p)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Account != "acme" || got[0].CompanyName != acmeCo.TradingName || got[0].Plan.Company.VAT != acmeCo.VATNumber ||
		got[1].Account != "bluecrane" || got[1].Plan.Account != "bluecrane" || read.Catalog == nil {
		t.Errorf("read %+v (catalog %v), want acme's plan then bluecrane's", got, read.Catalog)
	}

	one := []ExportSource{{account: Account{Name: "default", Service: w.acme}}}
	got = nil
	read, err = ReadExport(ctx, one, ExportQuery{Concurrency: 1, PlanIDs: []int64{999, got0ID(t, w.acme)}, Each: func(p ExportedStored, _ *Catalog) error {
		got = append(got, p)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Account != "" || got[0].Plan.Account != "" || !slices.Equal(read.Missing, []int64{999}) {
		t.Errorf("read %+v, missing %v: want one plan without an account name and 999 missing", got, read.Missing)
	}
}

func got0ID(t *testing.T, s *fakeService) int64 {
	t.Helper()
	ps, err := s.ListPlans(context.Background())
	if err != nil || len(ps) == 0 {
		t.Fatalf("list: %v", err)
	}
	return ps[0].ID
}
