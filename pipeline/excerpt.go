package pipeline

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxQuoted is the most characters of a value that a message quotes.
const MaxQuoted = 120

const excerptTail = " characters in all)"

// Excerpt returns a value for quoting in a message: the value itself when
// it has at most MaxQuoted characters, else its first MaxQuoted
// characters followed by "…" and the full length, so that a 50 MB cell is
// never copied into a message, a log line or a report. Every problem's
// value goes through it (Problem.String, Problems.Errorf and Warnf, and
// the report writers).
func Excerpt(s string) string {
	if len(s) <= MaxQuoted || (strings.HasSuffix(s, excerptTail) && len(s) <= 4*MaxQuoted+64) {
		return s // short, or an excerpt already
	}
	n := 0
	for i := range s {
		if n == MaxQuoted {
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
	MaxSectorLen     = 100 // sector (one of the 18 sector values)
)

// MaxTextLen returns the maximum length of a text column.
func MaxTextLen(col string) int {
	switch col {
	case ColPlanName:
		return MaxPlanNameLen
	case ColSector:
		return MaxSectorLen
	}
	return MaxIdentifierLen
}
