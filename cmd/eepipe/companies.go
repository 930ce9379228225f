package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// companiesOptions are the options of `eepipe companies`.
type companiesOptions struct {
	Args         []string
	VAT          string
	Registration string
	IDNumber     string
	JSON         bool
	Conn         connFlags
	HTTPClient   *http.Client // tests
}

// NewCmdCompanies returns `eepipe companies`. runF replaces the command's run function in tests.
func NewCmdCompanies(f *Factory, runF func(*companiesOptions) error) *cobra.Command {
	opts := &companiesOptions{}
	cmd := &cobra.Command{
		Use:   "companies --vat X | --registration Y | --id-number Z",
		Short: "Look companies up by VAT, registration or ID number",
		Long: `Search the company lookup service. A record is returned when any one of the
identifiers given matches (OR); when the records belong to more than one
company, apply would refuse a plan with these identifiers as ambiguous,
and this command says so. A number is matched as apply matches the
identifiers of a workbook, by its letters and digits: --registration
2015-123456-07 finds the company that 2015/123456/07 finds. A VAT or ID
number shorter than such numbers are gets a hint that a leading zero was
lost.

Prints a table (or the records as JSON with --json) on stdout. Exit status
0 when a company matches, 1 when none does, 2 invalid usage or
configuration, 3 fatal (the lookup did not answer: unreachable, credentials
refused, or an error status such as 422 or 500).`,
		Example: `  eepipe companies --vat 4012345678
  eepipe companies --registration 2009/012345/07 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return runCompanies(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.VAT, "vat", "", "VAT number")
	fl.StringVar(&opts.Registration, "registration", "", "company registration number, such as 2009/012345/07")
	fl.StringVar(&opts.IDNumber, "id-number", "", "ID number (sole proprietors)")
	fl.BoolVar(&opts.JSON, "json", false, "print the records as JSON")
	opts.Conn.register(cmd)
	_ = cmd.Flags().MarkHidden("base-url") // not used by this command
	return cmd
}

func runCompanies(cmd *cobra.Command, f *Factory, opts *companiesOptions) error {
	q := apiclient.CompanyQuery{VATNumber: strings.TrimSpace(opts.VAT), RegistrationNumber: strings.TrimSpace(opts.Registration),
		IDNumber: strings.TrimSpace(opts.IDNumber)}
	if q == (apiclient.CompanyQuery{}) {
		return usageErrorf(cmd, "companies needs a number to look up: give at least one of --vat, --registration and --id-number (for example: eepipe companies --vat 4012345678)")
	}
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Lookup: true})
	if err != nil {
		return err
	}
	log := f.Logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	c, err := apiclient.New(apiclient.Options{LookupURL: cfg.Lookup.URL, LookupUsername: cfg.Lookup.Username,
		LookupPassword: cfg.Lookup.Password, HTTPClient: opts.HTTPClient, Logger: log.With(zap.String("service", "lookup"))})
	if err != nil {
		return exitf(ExitInvalid, "company lookup: %v", err)
	}
	ids := pipeline.CompanyIDs{VAT: q.VATNumber, Registration: q.RegistrationNumber, IDNumber: q.IDNumber}
	recs, found, err := run.LookupCompany(cmd.Context(), ids, func(ctx context.Context, ids pipeline.CompanyIDs) ([]apiclient.Company, error) {
		return c.SearchCompanies(ctx, apiclient.CompanyQuery{VATNumber: ids.VAT, RegistrationNumber: ids.Registration, IDNumber: ids.IDNumber})
	})
	if err != nil {
		// Exit 1 means "no company matches"; a lookup that did not answer
		// (refused, 4xx, 5xx, unreachable) tells nothing about matches.
		return exitf(ExitFatal, "company lookup: %v%s", err, lookupCredentialsHint(err))
	}
	if found != ids {
		fmt.Fprintf(f.IO.ErrOut, "Found as %s, the spelling the lookup holds (apply matches identifiers by their letters and digits).\n", found)
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(recs); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	} else if len(recs) > 0 {
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTRADING NAME\tVAT NUMBER\tREGISTRATION NUMBER\tID NUMBER\tCOMMODITY\tREGION")
		for _, r := range recs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.TradingName, dash(r.VATNumber), dash(deref(r.RegistrationNumber)),
				dash(deref(r.IdentificationNumber)), dash(r.Commodity), dash(r.Region))
		}
		if err := tw.Flush(); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	}
	if len(recs) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "No company matches %s.\n", ids)
		if c, ok := registrationForm(q.RegistrationNumber); ok && c != q.RegistrationNumber {
			fmt.Fprintf(f.IO.ErrOut, "Registration numbers are held as YYYY/NNNNNN/NN, with the slashes and the leading zeros: try --registration %s\n", c)
		}
		for _, id := range []struct{ col, flag, name, value string }{
			{pipeline.ColCompanyVAT, "--vat", "VAT numbers", q.VATNumber},
			{pipeline.ColCompanyIDNumber, "--id-number", "ID numbers", q.IDNumber},
		} {
			if want, lost := assemble.LostLeadingZero(id.col, id.value); lost {
				fmt.Fprintf(f.IO.ErrOut, "%s have %d digits, and %s has %d: a leading zero may have been lost (a spreadsheet drops them from numbers): try %s %s%s\n",
					id.name, want, id.value, len(id.value), id.flag, strings.Repeat("0", want-len(id.value)), id.value)
			}
		}
		return silentExit(ExitDiff)
	}
	domain := make([]pipeline.Company, len(recs))
	for i, r := range recs {
		domain[i] = pipeline.Company{ID: r.ID, TradingName: r.TradingName, VATNumber: r.VATNumber,
			RegistrationNumber: deref(r.RegistrationNumber), IdentificationNumber: deref(r.IdentificationNumber)}
	}
	one, err := pipeline.ResolveCompany(ids, domain)
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "Note: apply would refuse a plan with these identifiers: %v\n", err)
		return nil
	}
	fmt.Fprintf(f.IO.ErrOut, "One company: %s (id %s). %s\n", one.TradingName, one.ID, accountOf(cfg, one.ID))
	return nil
}

// accountOf says which configured account a company's plans go to.
func accountOf(cfg *Config, companyID string) string {
	known := false
	for _, a := range cfg.Accounts {
		if a.CompanyID == companyID {
			return fmt.Sprintf("Plans with these identifiers go to the account %s.", a.Name)
		}
		known = known || a.CompanyID != ""
	}
	switch {
	case known:
		return fmt.Sprintf("No configured account has company_id %s: apply would fail plans with these identifiers.", companyID)
	case len(cfg.Accounts) == 1:
		return fmt.Sprintf("The one configured account (%s) has no company_id, so apply cannot check that it is this company's.", cfg.Accounts[0].Name)
	}
	return fmt.Sprintf("Plans with these identifiers go to the account with company_id %s.", companyID)
}

// lookupCredentialsHint names the settings of the lookup's credentials
// when the lookup refused them (401), "" otherwise.
func lookupCredentialsHint(err error) string {
	var ae *apiclient.APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		return ""
	}
	return fmt.Sprintf("; the username and password come from %s and %s, or lookup.username and lookup.password_env or lookup.password_file in the configuration",
		envLookupUsername, envLookupPassword)
}

// registrationForm writes a company registration number as the lookup
// holds them (docs/formats.md, company identifiers: 2009/012345/07): a number typed without
// its slashes (200901234507), with other separators, or without the
// leading zeros of its parts (2009/12345/7). ok is false when s is not
// read as one unambiguously: then no hint is given.
func registrationForm(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '-' || r == ' ' || r == '.' })
	for _, p := range parts {
		for _, r := range p {
			if r < '0' || r > '9' {
				return "", false
			}
		}
	}
	var year, mid, suffix string
	switch {
	case len(parts) == 3 && len(parts[0]) == 4 && len(parts[1]) <= 6 && len(parts[2]) <= 2:
		year, mid, suffix = parts[0], parts[1], parts[2]
	case len(parts) == 1 && len(parts[0]) >= 10 && len(parts[0]) <= 12:
		// Digits only: the year's four and the type's two are fixed, so the
		// middle is what lies between (its leading zeros may be missing).
		d := parts[0]
		year, mid, suffix = d[:4], d[4:len(d)-2], d[len(d)-2:]
	default:
		return "", false
	}
	return fmt.Sprintf("%s/%06s/%02s", year, mid, suffix), true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
