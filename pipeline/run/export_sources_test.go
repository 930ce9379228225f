package run

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// TestExportSourcesByCompany: each company asked for is looked up and
// exported from its own account, once, with the record's identifiers;
// what names no single company of an account is an ExportCompanyError, a
// failing lookup a CompanyLookupError.
func TestExportSourcesByCompany(t *testing.T) {
	w := pipelinetest.NewWorld()
	ctx := context.Background()
	noWarn := func(s string) { t.Errorf("unexpected warning %q", s) }
	got, err := ExportSources(ctx, w.Accounts, nil, w.Finder, []string{" 4098765432 ", pipelinetest.CraneCo.RegistrationNumber, pipelinetest.AcmeCo.VATNumber}, noWarn)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].account.Name != "bluecrane" || got[1].account.Name != "acme" ||
		got[0].name != pipelinetest.CraneCo.TradingName || got[0].company.Registration != pipelinetest.CraneCo.RegistrationNumber {
		t.Errorf("sources %+v, want bluecrane then acme with their records' identifiers", got)
	}

	for _, tc := range []struct {
		name, q, want string
	}{
		{"blank", "  ", "needs a VAT, registration or ID number"},
		{"unknown", "4000000000", "4000000000: the company lookup knows no company with that VAT, registration or ID number"},
		{"no account", pipelinetest.KarooCo.VATNumber, pipelinetest.KarooCo.VATNumber + ": it is Karoo Sole Trader (id Mk3Pq7), but no configured account belongs to it; add an account with company_id Mk3Pq7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ExportSources(ctx, w.Accounts, nil, w.Finder, []string{tc.q}, noWarn)
			var ce *ExportCompanyError
			if !errors.As(err, &ce) || err.Error() != tc.want {
				t.Errorf("err = %v, want ExportCompanyError %q", err, tc.want)
			}
		})
	}

	twins := &pipelinetest.FakeFinder{Companies: []pipeline.Company{pipelinetest.AcmeCo, {ID: "x1", TradingName: "Acme Twin", VATNumber: pipelinetest.AcmeCo.VATNumber}}}
	_, err = ExportSources(ctx, w.Accounts, nil, twins, []string{pipelinetest.AcmeCo.VATNumber}, noWarn)
	var ce *ExportCompanyError
	if !errors.As(err, &ce) || len(ce.several) != 2 ||
		err.Error() != pipelinetest.AcmeCo.VATNumber+" matches several companies: Acme Foods (Pty) Ltd (id 8ovHrj); Acme Twin (id x1); give an identifier of one company only" {
		t.Errorf("err = %v, want the two companies named", err)
	}

	down := &pipelinetest.FakeFinder{Err: pipeline.ErrUnavailable}
	_, err = ExportSources(ctx, w.Accounts, nil, down, []string{pipelinetest.AcmeCo.VATNumber}, noWarn)
	var le *CompanyLookupError
	if !errors.As(err, &le) || !errors.Is(err, pipeline.ErrUnavailable) || le.query != pipelinetest.AcmeCo.VATNumber {
		t.Errorf("err = %v, want a CompanyLookupError for %s", err, pipelinetest.AcmeCo.VATNumber)
	}
}

// TestExportSourcesConfigured: without companies every account is read,
// its configured identifiers completed from the lookup; identifiers of
// another company are a configuredCompanyError.
func TestExportSourcesConfigured(t *testing.T) {
	w := pipelinetest.NewWorld()
	ctx := context.Background()
	got, err := ExportSources(ctx, w.Accounts, []pipeline.CompanyIDs{{VAT: pipelinetest.AcmeCo.VATNumber}}, w.Finder, nil, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != pipelinetest.AcmeCo.TradingName || got[0].company.Registration != pipelinetest.AcmeCo.RegistrationNumber || !got[1].company.IsZero() {
		t.Errorf("sources %+v, want acme completed and bluecrane as configured", got)
	}
	_, err = ExportSources(ctx, w.Accounts, []pipeline.CompanyIDs{{VAT: pipelinetest.CraneCo.VATNumber}}, w.Finder, nil, func(string) {})
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
	w := pipelinetest.NewWorld()
	ctx := context.Background()
	for _, acct := range []*pipelinetest.FakeService{w.Crane, w.Acme} {
		if _, err := acct.CreatePlan(ctx, pipeline.NewPlan{Name: "P", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2027-08-31")}); err != nil {
			t.Fatal(err)
		}
	}
	sources := []ExportSource{
		{account: w.Accounts[0], company: pipeline.CompanyIDs{VAT: pipelinetest.AcmeCo.VATNumber}, name: pipelinetest.AcmeCo.TradingName},
		{account: w.Accounts[1]},
	}
	var got []ExportedStored
	read, err := ReadExport(ctx, sources, ExportQuery{Concurrency: 2, Each: func(p ExportedStored, cat *pipeline.Catalog) error {
		if cat == nil {
			t.Error("no served catalog with the first plan")
		}
		got = append(got, p)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Account != "acme" || got[0].CompanyName != pipelinetest.AcmeCo.TradingName || got[0].Plan.Company.VAT != pipelinetest.AcmeCo.VATNumber ||
		got[1].Account != "bluecrane" || got[1].Plan.Account != "bluecrane" || read.Catalog == nil {
		t.Errorf("read %+v (catalog %v), want acme's plan then bluecrane's", got, read.Catalog)
	}

	one := []ExportSource{{account: pipeline.Account{Name: "default", Service: w.Acme}}}
	got = nil
	read, err = ReadExport(ctx, one, ExportQuery{Concurrency: 1, PlanIDs: []int64{999, got0ID(t, w.Acme)}, Each: func(p ExportedStored, _ *pipeline.Catalog) error {
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

func got0ID(t *testing.T, s *pipelinetest.FakeService) int64 {
	t.Helper()
	ps, err := s.ListPlans(context.Background())
	if err != nil || len(ps) == 0 {
		t.Fatalf("list: %v", err)
	}
	return ps[0].ID
}
