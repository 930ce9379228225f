package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sameIdentifier is the one rule by which eepipe compares company
// identifiers (VAT, registration and ID numbers): by their letters and
// digits only, letter case ignored, so that "2009/012345/07",
// "2009-012345-07" and "2009 012345 07" agree, and " 4012345678" is
// 4012345678. Leading zeros count. An identifier with no letter or digit
// (blank, "/", "-") identifies nothing and equals nothing, not even itself.
//
// Apply (ResolveCompany, routing), export (--company, the configured
// identifiers) and every other comparison use it.
//
// Rows are grouped into plans by it too (the assembler keys a plan by
// IdentifierKey), so validate, diff and apply count the same plans.
func SameIdentifier(a, b string) bool {
	na := IdentifierKey(a)
	return na != "" && na == IdentifierKey(b)
}

// IdentifierKey is the form of an identifier that sameIdentifier compares:
// its letters (upper-cased) and digits, in order. Two identifiers are the
// same when their keys are equal and not empty; use it to key maps by
// identifier. "" means the text identifies nothing.
func IdentifierKey(s string) string {
	var buf [32]byte
	k := AppendIdentifierKey(buf[:0], s)
	if string(k) == s {
		return s // already a key ("4012345678"): no copy
	}
	return string(k)
}

// appendIdentifierKey appends IdentifierKey(s) to b without allocating.
func AppendIdentifierKey(b []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			if 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
				b = append(b, byte(r))
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b = utf8.AppendRune(b, unicode.ToUpper(r))
		}
	}
	return b
}

// standardSpelling returns ids as South African records spell them where
// an identifier's digits allow one spelling only: a registration number of
// 12 digits as CIPC writes it (2009/012345/07), a VAT number of 10 digits
// and an ID number of 13 digits as their digits alone. Any other
// identifier is kept as given. Apply looks a company up by it when the
// file's spelling finds nothing (the lookup matches spellings exactly).
func StandardSpelling(ids CompanyIDs) CompanyIDs {
	digits := func(s string, n int) (string, bool) {
		k := IdentifierKey(s)
		if len(k) != n || strings.Trim(k, "0123456789") != "" {
			return "", false
		}
		return k, true
	}
	if k, ok := digits(ids.Registration, 12); ok {
		ids.Registration = k[:4] + "/" + k[4:10] + "/" + k[10:]
	}
	if k, ok := digits(ids.VAT, 10); ok {
		ids.VAT = k
	}
	if k, ok := digits(ids.IDNumber, 13); ok {
		ids.IDNumber = k
	}
	return ids
}

// companyKey is ids keyed as sameIdentifier compares them, for maps:
// two sets of identifiers whose every kind agrees (or is absent from both)
// have the same key.
func CompanyKey(ids CompanyIDs) CompanyIDs {
	return CompanyIDs{VAT: IdentifierKey(ids.VAT), Registration: IdentifierKey(ids.Registration), IDNumber: IdentifierKey(ids.IDNumber)}
}

// companyHas reports whether the company record c holds the identifier q
// as its VAT, registration or ID number (sameIdentifier).
func CompanyHas(c Company, q string) bool {
	return SameIdentifier(q, c.VATNumber) || SameIdentifier(q, c.RegistrationNumber) || SameIdentifier(q, c.IdentificationNumber)
}

// sameCompanyIDs reports whether two sets of identifiers name the same
// company: some kind of identifier is given in both and agrees
// (sameIdentifier), and no kind given in both disagrees.
func SameCompanyIDs(a, b CompanyIDs) bool {
	agree := false
	for _, f := range [][2]string{{a.VAT, b.VAT}, {a.Registration, b.Registration}, {a.IDNumber, b.IDNumber}} {
		if IdentifierKey(f[0]) == "" || IdentifierKey(f[1]) == "" {
			continue
		}
		if !SameIdentifier(f[0], f[1]) {
			return false
		}
		agree = true
	}
	return agree
}

// companiesWith returns the distinct companies of records (a lookup's
// answer, OR semantics) that hold q as their VAT, registration or ID
// number (companyHas).
func CompaniesWith(records []Company, q string) []Company {
	var out []Company
	for _, r := range records {
		if CompanyHas(r, q) && !slices.ContainsFunc(out, func(c Company) bool { return c.ID == r.ID }) {
			out = append(out, r)
		}
	}
	return out
}

// accountOfCompany picks the configured account a company's plans are
// read from: the account whose company_id is the company's, else an
// account without company_id whose configured identifiers (configured,
// by account; sameCompanyIDs) are the company's, else a single account
// without company_id and without identifiers (with a warning: that it
// belongs to the company cannot be checked). Anything else is an error.
func AccountOfCompany(c Company, accounts []Account, configured []CompanyIDs) (idx int, warning string, err error) {
	ids := CompanyIDs{VAT: c.VATNumber, Registration: c.RegistrationNumber, IDNumber: c.IdentificationNumber}
	if idx = slices.IndexFunc(accounts, func(a Account) bool { return a.CompanyID == c.ID }); idx >= 0 {
		return idx, "", nil
	}
	idx = slices.IndexFunc(configured, func(cfg CompanyIDs) bool { return SameCompanyIDs(cfg, ids) })
	if idx >= 0 && idx < len(accounts) && accounts[idx].CompanyID == "" {
		return idx, "", nil
	}
	if len(accounts) == 1 && accounts[0].CompanyID == "" {
		if len(configured) > 0 && !configured[0].IsZero() {
			return -1, "", fmt.Errorf("it is %s (id %s), but the configured account's company identifiers (%s) are another company's",
				c.TradingName, c.ID, configured[0])
		}
		return 0, fmt.Sprintf("the configured account names no company_id, so it cannot be checked that it belongs to %s (id %s); "+
			"its plans are exported with that company's identifiers", c.TradingName, c.ID), nil
	}
	return -1, "", fmt.Errorf("it is %s (id %s), but no configured account belongs to it; add an account with company_id %s",
		c.TradingName, c.ID, c.ID)
}

// checkConfiguredCompany looks up the identifiers an account's
// configuration gives (ids): they must name one company, the account's own
// when it has a company_id (else an export would not re-import onto it).
// It returns that company's record, which completes the identifiers and
// gives the trading name, and a warning when the account names no
// company_id (then that the account belongs to the company cannot be
// checked). When the lookup cannot be reached the record is nil, and so is
// the error: the configured identifiers are kept as they are, with a
// warning (none when ctx is done). The error names the configuration's
// identifiers.
func CheckConfiguredCompany(ctx context.Context, finder CompanyFinder, account Account, ids CompanyIDs) (c *Company, warning string, err error) {
	where := "the identifiers of account " + account.Name + " in the configuration (" + ids.String() + ")"
	if account.Name == "default" {
		where = "the account's company identifiers (" + ids.String() + ")"
	}
	recs, err := finder.FindCompanies(ctx, ids)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", nil
		}
		return nil, fmt.Sprintf("%s could not be checked through the company lookup (%v); they are written as configured", where, err), nil
	}
	c, err = ResolveCompany(ids, recs)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	if account.CompanyID != "" && c.ID != account.CompanyID {
		return nil, "", fmt.Errorf("%s belong to %s (id %s), but the account's company_id is %s; correct them",
			where, c.TradingName, c.ID, account.CompanyID)
	}
	if account.CompanyID == "" {
		warning = fmt.Sprintf("%s name %s (id %s), but the account names no company_id, so it cannot be checked that the account belongs to that company; "+
			"add company_id to check it", where, c.TradingName, c.ID)
	}
	return c, warning, nil
}

// errCompanyNotFound is the failure of a plan whose company identifiers
// match no company record.
var ErrCompanyNotFound = errors.New("company not found")

// ambiguousCompanyError is the failure of a plan whose company identifiers
// match several companies (the lookup returns a record when any one
// identifier matches), or one company whose record contradicts another
// identifier given.
type AmbiguousCompanyError struct {
	iDs        CompanyIDs
	candidates []Company
	detail     string // for a contradiction: which identifier disagrees
}

func (e *AmbiguousCompanyError) Error() string {
	if e.detail != "" {
		return fmt.Sprintf("ambiguous company: %s: %s", e.iDs, e.detail)
	}
	names := make([]string, len(e.candidates))
	for i, c := range e.candidates {
		names[i] = DescribeCompany(c)
	}
	return fmt.Sprintf("ambiguous company: %s match %d different companies: %s; give the identifiers of one company only",
		e.iDs, len(e.candidates), strings.Join(names, "; "))
}

// describeCompany formats a company record for messages.
func DescribeCompany(c Company) string {
	parts := []string{"id " + c.ID}
	if c.VATNumber != "" {
		parts = append(parts, "VAT "+c.VATNumber)
	}
	if c.RegistrationNumber != "" {
		parts = append(parts, "registration "+c.RegistrationNumber)
	}
	if c.IdentificationNumber != "" {
		parts = append(parts, "ID "+c.IdentificationNumber)
	}
	return fmt.Sprintf("%s (%s)", c.TradingName, strings.Join(parts, ", "))
}

// ResolveCompany picks the one company that records (the lookup's answer
// for ids, with OR semantics) describe. Several distinct company ids are an
// *ambiguousCompanyError listing the candidates; no record is
// errCompanyNotFound; a single company whose record holds a different value
// for an identifier the file gives is an *ambiguousCompanyError too (the
// identifiers point at different companies, one of which is not known).
func ResolveCompany(ids CompanyIDs, records []Company) (*Company, error) {
	var distinct []Company
	for _, c := range records {
		if !slices.ContainsFunc(distinct, func(d Company) bool { return d.ID == c.ID }) {
			distinct = append(distinct, c)
		}
	}
	switch len(distinct) {
	case 0:
		return nil, fmt.Errorf("%w: no company has %s", ErrCompanyNotFound, ids)
	case 1:
	default:
		return nil, &AmbiguousCompanyError{iDs: ids, candidates: distinct}
	}
	c := distinct[0]
	for _, f := range []struct{ label, given, held string }{
		{"VAT number", ids.VAT, c.VATNumber},
		{"registration number", ids.Registration, c.RegistrationNumber},
		{"ID number", ids.IDNumber, c.IdentificationNumber},
	} {
		if f.given != "" && !SameIdentifier(f.given, f.held) {
			held := f.held
			if held == "" {
				held = "none"
			}
			return nil, &AmbiguousCompanyError{iDs: ids, candidates: distinct, detail: fmt.Sprintf(
				"the other identifiers belong to %s, whose %s is %s, not %s; correct the company columns",
				DescribeCompany(c), f.label, held, f.given)}
		}
	}
	return &c, nil
}
