package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// ExportSource is one account an export reads, and what is known of its
// company: the identifiers its exported plans carry and its trading name.
type ExportSource struct {
	account pipeline.Account
	company pipeline.CompanyIDs
	name    string // the company's trading name, when known
}

// CompanyLookupError is the failure of the company lookup asked for the
// company of query.
type CompanyLookupError struct {
	query string
	err   error
}

func (e *CompanyLookupError) Error() string {
	return "company lookup for " + e.query + ": " + e.err.Error()
}

func (e *CompanyLookupError) Unwrap() error { return e.err }

// ExportCompanyError says that a company asked for by identifier (query)
// names no single company of an account: the identifier is blank (query
// ""), the lookup knows none, knows several (several), or no account
// holds it (err).
type ExportCompanyError struct {
	query   string
	several []pipeline.Company
	err     error
}

func (e *ExportCompanyError) Error() string {
	if e.query == "" {
		return "needs a VAT, registration or ID number"
	}
	if len(e.several) > 1 {
		var names []string
		for _, c := range e.several {
			names = append(names, fmt.Sprintf("%s (id %s)", c.TradingName, c.ID))
		}
		return e.query + " matches several companies: " + strings.Join(names, "; ") + "; give an identifier of one company only"
	}
	return e.query + ": " + e.err.Error()
}

func (e *ExportCompanyError) Unwrap() error { return e.err }

var errNoCompanyKnown = errors.New("the company lookup knows no company with that VAT, registration or ID number")

// configuredCompanyError is an account's configured identifiers that
// checkConfiguredCompany refused.
type configuredCompanyError struct{ err error }

func (e *configuredCompanyError) Error() string { return e.err.Error() }

func (e *configuredCompanyError) Unwrap() error { return e.err }

// ExportSources picks the accounts an export reads. Without companies:
// every account, with the identifiers its configuration gives
// (configured, by account), checked and completed through the lookup
// (checkConfiguredCompany) when there is one. With companies (each a VAT,
// registration or ID number; a blank one is an error): each is looked up, and the
// account whose company_id it is (accountOfCompany, or the single
// account) is read, once, with the record's identifiers. warn receives
// the warnings to show. Errors are a *CompanyLookupError (the lookup
// failed), an *ExportCompanyError or a *configuredCompanyError.
func ExportSources(ctx context.Context, accounts []pipeline.Account, configured []pipeline.CompanyIDs, finder pipeline.CompanyFinder,
	companies []string, warn func(string)) ([]ExportSource, error) {
	if len(companies) == 0 {
		out := make([]ExportSource, len(accounts))
		for i, a := range accounts {
			out[i] = ExportSource{account: a}
			if i < len(configured) {
				out[i].company = configured[i]
			}
			if out[i].company.IsZero() && a.CompanyID != "" {
				// The lookup is searched by identifier only (VAT,
				// registration, ID number), never by company id.
				warn(fmt.Sprintf("account %s names only its company_id (%s): the company lookup cannot be searched by company id, "+
					"so the export's company columns (the Overview's Company, VAT and registration) stay empty for its plans; "+
					"give the account its vat_number or registration_number in the configuration (the lookup checks it and fills the rest)", a.Name, a.CompanyID))
			}
			if out[i].company.IsZero() || finder == nil {
				continue
			}
			c, warning, err := pipeline.CheckConfiguredCompany(ctx, finder, a, out[i].company)
			if err != nil {
				return nil, &configuredCompanyError{err: err}
			}
			if warning != "" {
				warn(warning)
			}
			if c != nil {
				out[i].name = c.TradingName
				out[i].company = pipeline.CompanyIDs{VAT: c.VATNumber, Registration: c.RegistrationNumber, IDNumber: c.IdentificationNumber}
			}
		}
		return out, nil
	}
	var out []ExportSource
	seen := map[int]bool{}
	for _, q := range companies {
		q = strings.TrimSpace(q)
		if q == "" {
			return nil, &ExportCompanyError{}
		}
		recs, err := finder.FindCompanies(ctx, pipeline.CompanyIDs{VAT: q, Registration: q, IDNumber: q})
		if err != nil {
			return nil, &CompanyLookupError{query: q, err: err}
		}
		found := pipeline.CompaniesWith(recs, q)
		switch len(found) {
		case 0:
			return nil, &ExportCompanyError{query: q, err: errNoCompanyKnown}
		case 1:
		default:
			return nil, &ExportCompanyError{query: q, several: found}
		}
		c := found[0]
		idx, warning, err := pipeline.AccountOfCompany(c, accounts, configured)
		if err != nil {
			return nil, &ExportCompanyError{query: q, err: err}
		}
		if warning != "" {
			warn(warning)
		}
		if seen[idx] {
			continue
		}
		seen[idx] = true
		out = append(out, ExportSource{
			account: accounts[idx], name: c.TradingName,
			company: pipeline.CompanyIDs{VAT: c.VATNumber, Registration: c.RegistrationNumber, IDNumber: c.IdentificationNumber},
		})
	}
	return out, nil
}

// ExportedStored is one stored plan as an export writes it.
type ExportedStored struct {
	// Plan is the plan as a file holds it (exportedPlan), with the
	// source's company identifiers and Account.
	Plan *pipeline.InputPlan
	// Account is the account's name, "" for the single account named
	// "default" (a file without an account column routes to it).
	Account     string
	CompanyName string         // the source's trading name, when known
	Stored      *pipeline.Plan // the plan as the service stores it
}

// ExportQuery is what ReadExport reads and where it hands the plans.
type ExportQuery struct {
	Concurrency int     // requests in flight (RunOptions.Concurrency)
	PlanIDs     []int64 // only these plans (empty: every plan)
	// Each receives every plan, in account order then by plan id, as
	// soon as it and the plans before it have arrived, with the counter
	// catalog the service serves (learnt from the first target read).
	// An error stops the read and is returned.
	Each func(ExportedStored, *pipeline.Catalog) error
}

// ExportRead is what ReadExport read besides the plans.
type ExportRead struct {
	Missing  []int64                         // PlanIDs no account lists
	Vanished []StoredPlan                    // plans deleted while the export read them: left out
	Refused  []*pipeline.AccountRefusedError // accounts whose key pair was refused: their plans left out
	Catalog  *pipeline.Catalog               // the catalog the service serves; nil when no plan tells it
	Requests RequestCounts
}

// ReadExport reads the sources' stored plans through the one door
// (Runner.ReadStored: a gate bounds the requests in flight and stops
// after a fatal error or when ctx is done) and hands each to q.Each as
// the export writes it. The plans of an account whose key pair is refused
// are left out and the others' read (every account refused is an error).
// A read stopped by ctx returns what was read and no error: the caller
// tells the stop by ctx.
func ReadExport(ctx context.Context, sources []ExportSource, q ExportQuery) (*ExportRead, error) {
	accounts := make([]pipeline.Account, len(sources))
	for i, s := range sources {
		accounts[i] = s.account
	}
	runner := NewRunner(accounts, nil, RunOptions{Concurrency: q.Concurrency})
	var (
		served      *pipeline.Catalog
		servedKnown bool
	)
	convert := func(sp StoredPlan) error {
		if !servedKnown {
			// The first target read tells the catalog (the runner keeps
			// it); the writers need it for their header.
			c, err := runner.ServiceCatalog(ctx)
			if err != nil {
				return err
			}
			served, servedKnown = c, true
		}
		s := sources[slices.IndexFunc(sources, func(s ExportSource) bool { return s.account.Name == sp.Account.Name })]
		name := s.account.Name
		if len(sources) == 1 && name == "default" {
			name = ""
		}
		return q.Each(ExportedStored{Plan: exportedPlan(sp.Plan, s.company, name), Account: name, CompanyName: s.name, Stored: sp.Plan}, served)
	}
	stored, err := runner.ReadStored(ctx, StoredQuery{PlanIDs: q.PlanIDs, each: convert, GoOnWhenRefused: true})
	if err != nil {
		if ctx.Err() != nil {
			return &ExportRead{}, nil
		}
		return nil, err
	}
	if !servedKnown {
		if served, err = runner.ServiceCatalog(ctx); err != nil && ctx.Err() == nil {
			return nil, err
		}
	}
	return &ExportRead{Missing: stored.Missing, Vanished: stored.vanished, Refused: stored.Refused, Catalog: served, Requests: runner.requests()}, nil
}
