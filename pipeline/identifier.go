package pipeline

import (
	"strings"
	"unicode"
)

// SameIdentifier is the one rule by which eepipe compares company
// identifiers (VAT, registration and ID numbers): by their letters and
// digits only, letter case ignored, so that "2009/012345/07",
// "2009-012345-07" and "2009 012345 07" agree, and " 4012345678" is
// 4012345678. Leading zeros count. An identifier with no letter or digit
// (blank, "/", "-") identifies nothing and equals nothing, not even itself.
//
// Apply (ResolveCompany, routing), export (--company, the configured
// identifiers) and every other comparison use it.
func SameIdentifier(a, b string) bool {
	na := normIdentifier(a)
	return na != "" && na == normIdentifier(b)
}

// normIdentifier keeps the letters (upper-cased) and digits of s.
func normIdentifier(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToUpper(r)
		}
		return -1
	}, s)
}

// CompanyHas reports whether the company record c holds the identifier q
// as its VAT, registration or ID number (SameIdentifier).
func CompanyHas(c Company, q string) bool {
	return SameIdentifier(q, c.VATNumber) || SameIdentifier(q, c.RegistrationNumber) || SameIdentifier(q, c.IdentificationNumber)
}

// SameCompanyIDs reports whether two sets of identifiers name the same
// company: some kind of identifier is given in both and agrees
// (SameIdentifier), and no kind given in both disagrees.
func SameCompanyIDs(a, b CompanyIDs) bool {
	agree := false
	for _, f := range [][2]string{{a.VAT, b.VAT}, {a.Registration, b.Registration}, {a.IDNumber, b.IDNumber}} {
		if normIdentifier(f[0]) == "" || normIdentifier(f[1]) == "" {
			continue
		}
		if !SameIdentifier(f[0], f[1]) {
			return false
		}
		agree = true
	}
	return agree
}
