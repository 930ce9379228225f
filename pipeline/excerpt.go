package pipeline

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxQuoted is the most characters of a value that a message quotes.
const maxQuoted = 120

const excerptTail = " characters in all)"

// Excerpt returns a value for quoting in a message: the value itself when
// it has at most maxQuoted characters, else its first maxQuoted
// characters followed by "…" and the full length, so that a 50 MB cell is
// never copied into a message, a log line or a report. Every problem's
// value goes through it (Problem.String, Problems.Errorf and Warnf, and
// the report writers).
func Excerpt(s string) string {
	if len(s) <= maxQuoted || (strings.HasSuffix(s, excerptTail) && len(s) <= 4*maxQuoted+64) {
		return s // short, or an excerpt already
	}
	n := 0
	for i := range s {
		if n == maxQuoted {
			return fmt.Sprintf("%s… (%d%s", s[:i], utf8.RuneCountInString(s), excerptTail)
		}
		n++
	}
	return s
}

// Maximum lengths, in characters, of the text fields of a plan, checked
// in validation so that a runaway cell is an error at that cell instead of
// a request the service refuses (docs/configuration.md lists them).
const (
	MaxPlanNameLen   = 200 // plan_name
	MaxIdentifierLen = 64  // company_vat_number, company_registration_number, company_id_number, scorecard_id
	maxSectorLen     = 100 // sector (one of the 18 sector values)
)

// maxTextLen returns the maximum length of a text column.
func MaxTextLen(col string) int {
	switch col {
	case ColPlanName:
		return MaxPlanNameLen
	case ColSector:
		return maxSectorLen
	}
	return MaxIdentifierLen
}
