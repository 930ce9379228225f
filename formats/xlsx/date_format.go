package xlsx

import (
	"strings"
	"time"

	"github.com/xuri/nfp"
)

// isDateFormat reports whether a number format shows a date: the built-in
// date formats, or a custom code with a day, month or year part.
func isDateFormat(id int, code string) bool {
	if code == "" {
		switch {
		case id >= 14 && id <= 17, id == 22, id >= 27 && id <= 36, id >= 50 && id <= 58:
			return true
		}
		return false
	}
	p := nfp.NumberFormatParser()
	for _, section := range p.Parse(code) {
		if section.Type != nfp.TokenSectionPositive {
			continue
		}
		for _, tok := range section.Items {
			if tok.TType != nfp.TokenTypeDateTimes {
				continue
			}
			v := strings.ToLower(tok.TValue)
			if strings.ContainsAny(v, "ydeg") || strings.Contains(v, "mmm") {
				return true
			}
			if strings.Contains(v, "m") && !strings.ContainsAny(strings.ToLower(code), "hs") {
				return true
			}
		}
	}
	return false
}

// parseISOCellDate parses the value of a t="d" cell.
func parseISOCellDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// numberUnit returns what a number format shows a number as, when it is
// no plain count: "%" for a percentage format (built-in 9 and 10, or a
// code with a % sign: 0.45 shows as 45%), the currency symbol of a
// currency format (the built-in currency formats 5 to 8, 42 and 44, or a
// code with a currency: "R #,##0.00", [$R-1C09], "$", "€", "£"), else "".
// The reader keeps the unit in the cell's text as the format displays it,
// so that a counter in such a cell is refused as a share or an amount,
// never read as a headcount (docs/formats.md, values).
func numberUnit(id int, code string) string {
	if code == "" {
		switch id {
		case 9, 10:
			return "%"
		case 5, 6, 7, 8, 42, 44:
			return "R"
		}
		return ""
	}
	p := nfp.NumberFormatParser()
	for _, section := range p.Parse(code) {
		if section.Type != nfp.TokenSectionPositive {
			continue
		}
		for _, tok := range section.Items {
			switch tok.TType {
			case nfp.TokenTypePercent:
				return "%"
			case nfp.TokenTypeCurrencyLanguage:
				if sym := currencySymbol(strings.TrimPrefix(tok.TValue, "$")); sym != "" {
					return sym
				}
			case nfp.TokenTypeLiteral:
				if sym := currencySymbol(tok.TValue); sym != "" {
					return sym
				}
			}
		}
	}
	return ""
}

// currencySymbol returns the currency a format's literal or [$...] part
// names ("R", "R ", "$", "€", "£", "ZAR"), or "".
func currencySymbol(s string) string {
	s = strings.TrimSpace(strings.Trim(s, `"\`))
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s = s[:i] // [$R-1C09]: the symbol, then the locale
	}
	switch s {
	case "R", "$", "€", "£", "ZAR", "US$", "USD", "EUR", "GBP":
		return s
	}
	return ""
}
