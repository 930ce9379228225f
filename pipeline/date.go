package pipeline

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Date is a calendar date without a time of day or zone.
// The zero Date means "not given".
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// EarliestStart is the earliest start date the service accepts for a plan.
var EarliestStart = Date{2025, time.September, 1}

// LatestEnd is the date the service clamps post_2025 plan end dates to.
var LatestEnd = Date{2030, time.August, 31}

// ParseDate parses an ISO 8601 calendar date (YYYY-MM-DD) and rejects
// impossible dates such as 2026-02-30. A day/month date such as 31/08/2029
// is refused with the ISO form in the message (ambiguous ones, 03/04/2026,
// as ambiguous).
func ParseDate(s string) (Date, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		if m := ambiguousDatePattern.FindStringSubmatch(s); m != nil {
			// 31/08/2029: say which date it is and how to write it.
			return Date{}, dayMonthError(s, m)
		}
		return Date{}, fmt.Errorf("%q is not a date in the form YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// Time returns midnight UTC of d.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// String formats d as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// after reports whether d is after e.
func (d Date) After(e Date) bool { return d.Compare(e) > 0 }

// compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.Year != e.Year:
		return sign(d.Year - e.Year)
	case d.Month != e.Month:
		return sign(int(d.Month) - int(e.Month))
	default:
		return sign(d.Day - e.Day)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// MarshalText implements encoding.TextMarshaler.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; empty text is the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// FinancialYear is a financial year from 1 September of Start to 31 August
// of Start+1, written "2026/27".
type FinancialYear int

// FinancialYearOf returns the financial year that contains d.
func FinancialYearOf(d Date) FinancialYear {
	if d.Month >= time.September {
		return FinancialYear(d.Year)
	}
	return FinancialYear(d.Year - 1)
}

// Start returns 1 September of the financial year.
func (fy FinancialYear) Start() Date { return Date{int(fy), time.September, 1} }

// End returns 31 August of the year after the financial year starts.
func (fy FinancialYear) End() Date { return Date{int(fy) + 1, time.August, 31} }

// String formats the financial year as "2026/27".
func (fy FinancialYear) String() string { return fmt.Sprintf("%d/%02d", int(fy), (int(fy)+1)%100) }

// PlanYears returns the financial years a plan from start to end overlaps,
// in order; year_number i (1-based) is element i-1. The end date is taken as
// given: callers clamp it first when they need the service's view.
func PlanYears(start, end Date) []FinancialYear {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return nil
	}
	var out []FinancialYear
	for fy := FinancialYearOf(start); fy <= FinancialYearOf(end); fy++ {
		out = append(out, fy)
	}
	return out
}

// ClampEnd returns end clamped to LatestEnd, as the service does for
// post_2025 plans.
func ClampEnd(end Date) Date {
	if end.After(LatestEnd) {
		return LatestEnd
	}
	return end
}

var (
	isoDatePattern       = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$`)
	ambiguousDatePattern = regexp.MustCompile(`^(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{2}|\d{4})$`)
	yearFirstPattern     = regexp.MustCompile(`^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$`)
	// dayMonthNamePattern is a date with its month written out, day first:
	// "1 September 2026", "01 Sep 2026", "1-Sep-2026", "1st Sept. 2026".
	dayMonthNamePattern = regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th)?(?:\s+|\s*-\s*)(\pL+)\.?,?(?:\s+|\s*-\s*)(\d{4})$`)
	// monthNameDayPattern is the same, month first: "September 1, 2026".
	monthNameDayPattern = regexp.MustCompile(`^(\pL+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$`)
)

// dayMonthError explains why a date written NN/NN/YYYY is refused. When
// both numbers could be the month (03/04/2026) the date is ambiguous. When
// only one can (31/08/2029: 31 is no month; 08/31/2029), the date is clear
// but not ISO: the message says so and shows the ISO form.
func dayMonthError(t string, m []string) error {
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	y, _ := strconv.Atoi(m[3])
	if len(m[3]) == 2 {
		y += 2000
	}
	var day, month int
	var order string
	switch {
	case a == b || (a > 12 && b >= 1 && b <= 12):
		day, month, order = a, b, "day/month/year"
	case b > 12 && a >= 1 && a <= 12:
		day, month, order = b, a, "month/day/year"
	case a > 12 && b > 12:
		return fmt.Errorf("%q is not a date: neither %d nor %d is a month; write dates as YYYY-MM-DD, for example 2026-03-01 for 1 March 2026", t, a, b)
	default:
		dm, err1 := makeDate(t, y, b, a)
		md, err2 := makeDate(t, y, a, b)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%q is ambiguous: it could be day/month or month/day; write dates as YYYY-MM-DD, for example 2026-03-01 for 1 March 2026", t)
		}
		return fmt.Errorf("%q is ambiguous: it could be day/month or month/day; write dates as YYYY-MM-DD: %s if it is day/month, %s if it is month/day", t, dm, md)
	}
	d, err := makeDate(t, y, month, day)
	if err != nil {
		return err
	}
	why := fmt.Sprintf("%d is no month", max(a, b))
	if a == b {
		why = "day and month are the same"
	}
	return fmt.Errorf("%q is not written as YYYY-MM-DD: it can only be %s (%s), but the format requires ISO dates to rule out day/month mix-ups; write it as %s", t, order, why, d)
}

func makeDate(text string, y, m, d int) (Date, error) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return Date{}, fmt.Errorf("%q is not a real date; write dates as YYYY-MM-DD", Excerpt(text))
	}
	tm := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if tm.Day() != d || int(tm.Month()) != m {
		return Date{}, fmt.Errorf("%q is not a real date (%s has no day %d)", Excerpt(text), time.Month(m), d)
	}
	return Date{y, time.Month(m), d}, nil
}
