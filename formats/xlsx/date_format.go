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
