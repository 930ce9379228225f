package pipeline

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxExactInteger is the largest integer a float64 (and a spreadsheet
// number) holds exactly.
const MaxExactInteger = 1 << 53

// parseCounter parses a counter written as text: a whole number >= 0 such as
// "12", "12.0" or " 12 ", or with its thousands grouped by a space, a
// no-break space (U+00A0), a narrow no-break space (U+202F) or a thin space
// (U+2009), as South African settings and the EEA2 report write them
// ("1 234"). A comma is read only where it can only be a decimal comma
// followed by zeros (commaNumber): "1,234" is 1234 with comma grouping
// but 1.234 with the decimal comma of South African settings, so it is an
// error, as is "1 234,5". The error says in plain words what is wrong.
func parseCounter(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if n, ok := PlainDigits(t); ok {
		return n, nil
	}
	if t == "" {
		return 0, errors.New("the counter is empty")
	}
	if n, ok := groupedDigits(t); ok {
		return n, nil
	}
	if n, msg, isComma := commaNumber(t); isComma {
		if msg != "" {
			return 0, errors.New(msg)
		}
		return n, nil
	}
	f, ok := parseDecimal(t)
	if !ok {
		return 0, fmt.Errorf("%q is not a number; a counter must be a whole number of 0 or more", Excerpt(t))
	}
	return counterFromFloat(f)
}

// IsNumberText reports whether s (trimmed) is written as a number: what
// parseCounter reads, a signed or fractional decimal, or digits with a
// decimal comma. Such text in a column a reader does not read could be a
// counter, where a word is a note.
func IsNumberText(s string) bool {
	t := strings.TrimSpace(s)
	if _, err := parseCounter(t); err == nil {
		return true
	}
	if _, ok := parseDecimal(t); ok {
		return true
	}
	_, _, isComma := commaNumber(t)
	return isComma
}

// isGroupSpace reports whether r separates groups of thousands: a
// space, a no-break space, a narrow no-break space or a thin space.
func isGroupSpace(r rune) bool {
	return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\u2009'
}

// groupedDigits parses digits grouped by thousands with spaces
// (isGroupSpace): one to three digits, then groups of exactly three,
// each after one separator ("1 234", "12 345 678"). Any other spacing
// ("12 34", "1  234") is not a number.
func groupedDigits(t string) (int64, bool) {
	var n int64
	group, groups, sep := 0, 0, false
	for _, r := range t {
		switch {
		case r >= '0' && r <= '9':
			group++
			n = n*10 + int64(r-'0')
			if n > MaxExactInteger {
				return 0, false
			}
			sep = false
		case isGroupSpace(r) && !sep && group > 0 && (groups == 0 && group <= 3 || group == 3):
			groups++
			group, sep = 0, true
		default:
			return 0, false
		}
	}
	return n, groups > 0 && group == 3
}

// commaDecimal is digits with one comma in them, grouped by spaces or
// not.
var commaDecimal = regexp.MustCompile(`^[0-9][0-9 \x{00a0}\x{202f}\x{2009}]*,[0-9]+$`)

// commaNumber reads a whole number written with a comma where the
// comma can only be the decimal comma of South African settings: after
// thousands grouped by spaces ("1 234,00"), or before other than three
// digits ("12,0"), and only zeros after it. Otherwise msg says why it is
// not read: "1,234" is ambiguous (1234 with comma grouping, 1.234 with a
// decimal comma), "1 234,5" is not a whole number. isComma is false for
// text of another shape.
func commaNumber(t string) (n int64, msg string, isComma bool) {
	if !commaDecimal.MatchString(t) {
		return 0, "", false
	}
	whole, frac, _ := strings.Cut(t, ",")
	grouped := strings.ContainsFunc(whole, isGroupSpace)
	n, ok := groupedDigits(whole)
	if !grouped {
		n, ok = PlainDigits(whole)
	}
	if !ok {
		return 0, fmt.Sprintf("%q is not a number; a counter must be a whole number of 0 or more", Excerpt(t)), true
	}
	if !grouped && len(frac) == 3 {
		return 0, fmt.Sprintf("%q is ambiguous: with a comma grouping thousands it is %s%s, with the decimal comma of South African settings it is %s.%s; write the counter without the comma, or group its thousands with a space", Excerpt(t), whole, frac, whole, frac), true
	}
	if strings.Trim(frac, "0") != "" {
		return 0, fmt.Sprintf("%q is not a whole number (the comma is a decimal comma); a counter counts people, so it must be a whole number of 0 or more", Excerpt(t)), true
	}
	return n, "", true
}

func counterFromFloat(f float64) (int64, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("a counter must be a whole number of 0 or more")
	case f < 0 && f != math.Trunc(f):
		return 0, fmt.Errorf("%s is negative and not a whole number; a counter must be a whole number of 0 or more", fmtNumber(f))
	case f < 0:
		return 0, fmt.Errorf("%s is negative; a counter must be a whole number of 0 or more", fmtNumber(f))
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%s is not a whole number; a counter counts people, so it must be a whole number of 0 or more", fmtNumber(f))
	case f > MaxExactInteger:
		return 0, fmt.Errorf("%s is too large for a counter", fmtNumber(f))
	}
	return int64(f), nil
}

func fmtNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// maxPlainDigits is the longest run of digits plainDigits parses:
// every number of 15 digits is below maxExactInteger, so it is exactly
// what parsing it as a decimal number gives.
const maxPlainDigits = 15

// PlainDigits parses s when it is nothing but ASCII digits (at most
// maxPlainDigits of them): the common case of a counter, a year number
// or an id, which then needs neither the pattern nor float parsing. The
// result is the one parseDecimal gives for such a string.
func PlainDigits(s string) (int64, bool) {
	if len(s) == 0 || len(s) > maxPlainDigits {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// decimalPattern is a plain decimal number, optionally signed, with an
// optional exponent: what a person or a spreadsheet writes as a number.
var decimalPattern = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// parseDecimal parses a plain decimal number; hexadecimal, Inf, NaN and
// digit separators are not numbers here.
func parseDecimal(s string) (float64, bool) {
	if !decimalPattern.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, !math.IsInf(f, 0)
}

// snap rounds a spreadsheet number that is a whole number but for
// floating-point noise (a formula's 12.000000000000002) to that number.
func snap(f float64) float64 {
	if r := math.Round(f); math.Abs(f-r) <= 1e-9*math.Max(1, math.Abs(f)) {
		return r
	}
	return f
}

// CounterValue returns the counter value of a cell: a whole number >= 0
// from a numeric cell, a formula's cached number, or text. ok is false for
// a blank cell (blank means "leave the server's value as it is").
func CounterValue(c Cell) (n int64, ok bool, err error) {
	switch c.Kind {
	case CellBlank:
		return 0, false, nil
	case CellNumber:
		if err := unitError(c.Text, true); err != nil {
			return 0, false, err
		}
		n, err = counterFromFloat(snap(c.Number))
		return n, err == nil, err
	case CellText:
		t := strings.TrimSpace(c.Text)
		if n, ok := PlainDigits(t); ok {
			return n, true, nil
		}
		if t == "" {
			return 0, false, nil
		}
		if err := unitError(t, false); err != nil {
			return 0, false, err
		}
		if msg, isErr := SpreadsheetError(t); isErr {
			return 0, false, errors.New(msg)
		}
		n, err = parseCounter(t)
		return n, err == nil, err
	}
	return 0, false, kindError(c, "a whole number of 0 or more")
}

// unitError refuses a counter shown as a percentage or an amount of
// money: a number cell whose format shows it so (formatted true: the
// reader keeps the format's unit in its text, "100%", "R 1234"), or text
// written so ("45%"). A counter is a number of employees; a 1 in a cell
// formatted 0% shows 100%, and is never read as 1 employee.
func unitError(t string, formatted bool) error {
	if t == "" {
		return nil
	}
	how := "the cell holds"
	if formatted {
		how = "the cell is formatted as"
	}
	switch {
	case t[len(t)-1] == '%':
		return fmt.Errorf("%s a percentage (it shows %s): a counter is a number of employees, never a share; format the cell as a number and type the headcount", how, Excerpt(t))
	case formatted && (t[0] < '0' || t[0] > '9') && t[0] != '-':
		return fmt.Errorf("%s an amount of money (it shows %s): a counter is a number of employees, not Rand (remuneration belongs on form EEA4, which is no plan); format the cell as a number and type the headcount", how, Excerpt(t))
	}
	return nil
}

// kindError explains why a cell of the wrong kind cannot hold what is wanted.
func kindError(c Cell, want string) error {
	switch c.Kind {
	case CellDate:
		return fmt.Errorf("the cell holds a date, but it should hold %s", want)
	case CellBool:
		return fmt.Errorf("the cell holds TRUE/FALSE, but it should hold %s", want)
	case CellError:
		if c.Reason != "" {
			return errors.New(c.Reason)
		}
		msg, ok := SpreadsheetError(c.Text)
		if !ok {
			msg = fmt.Sprintf("the cell holds the error value %s and cannot be read", Excerpt(c.Text))
		}
		return errors.New(msg)
	case CellFormulaNoValue:
		if c.Reason != "" {
			return errors.New(c.Reason)
		}
		return errors.New("the cell holds a formula that has no saved result; open the workbook in Excel or LibreOffice, let it calculate and save it, or type the value instead of the formula")
	case CellNumber:
		return fmt.Errorf("the cell holds the number %s, but it should hold %s", c.Text, want)
	}
	return fmt.Errorf("the cell should hold %s", want)
}

var errorValues = []string{"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA", "#SPILL!", "#CALC!", "#FIELD!", "#BLOCKED!", "#UNKNOWN!", "#CONNECT!", "#BUSY!", "#PYTHON!"}

// IsErrorValue reports whether s is a spreadsheet error value such as
// #REF! (as text, as some exports write it).
func IsErrorValue(s string) bool {
	_, ok := SpreadsheetError(s)
	return ok
}

// SpreadsheetError recognises a spreadsheet error value such as #REF!.
func SpreadsheetError(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '#' {
		return "", false // every error value starts with #
	}
	t = strings.ToUpper(t)
	for _, e := range errorValues {
		if t == e {
			return fmt.Sprintf("the cell holds the error value %s (a broken formula); fix the formula or type the value", e), true
		}
	}
	return "", false
}

// monthNames maps the English and Afrikaans month names, and their
// three-letter abbreviations (with "Sept"), folded to lower case, to the
// month.
var monthNames = func() map[string]time.Month {
	out := map[string]time.Month{"sept": time.September}
	afrikaans := []string{"januarie", "februarie", "maart", "april", "mei", "junie", "julie", "augustus", "september", "oktober", "november", "desember"}
	for m := time.January; m <= time.December; m++ {
		en := strings.ToLower(m.String())
		out[en], out[en[:3]], out[afrikaans[m-1]] = m, m, m
		if af := afrikaans[m-1][:3]; out[af] == 0 {
			out[af] = m // "mrt" aside, the Afrikaans abbreviations: mei, okt, des
		}
	}
	out["mrt"] = time.March
	return out
}()

// parseDateText parses a date written as text: YYYY-MM-DD (a time of day
// after it, as some exporters add, is ignored), YYYY/MM/DD (the Windows
// short date on South African settings) or YYYY.MM.DD, or with the month
// written out in English or Afrikaans ("1 September 2026", "01 Sep 2026",
// "1-Sep-2026", "September 1, 2026"). Other spellings are rejected with a
// message that says how to write the date; day/month orders such as
// 03/04/2026 are rejected as ambiguous.
func parseDateText(s string) (Date, error) {
	t := strings.TrimSpace(s)
	if y, mo, d, ok := plainISODate(t); ok {
		return makeDate(t, y, mo, d)
	}
	if m := isoDatePattern.FindStringSubmatch(t); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		return makeDate(t, y, mo, d)
	}
	if m := ambiguousDatePattern.FindStringSubmatch(t); m != nil {
		return Date{}, dayMonthError(t, m)
	}
	if m := yearFirstPattern.FindStringSubmatch(t); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		return makeDate(t, y, mo, d)
	}
	dayText, monthText, yearText := "", "", ""
	if m := dayMonthNamePattern.FindStringSubmatch(t); m != nil {
		dayText, monthText, yearText = m[1], m[2], m[3]
	} else if m := monthNameDayPattern.FindStringSubmatch(t); m != nil {
		dayText, monthText, yearText = m[2], m[1], m[3]
	}
	if monthText != "" {
		mo, known := monthNames[strings.ToLower(monthText)]
		if !known {
			return Date{}, fmt.Errorf("%q is not a date: %q is not the name of a month; write dates as YYYY-MM-DD (for example 2026-03-01) or use a date cell", Excerpt(t), Excerpt(monthText))
		}
		y, _ := strconv.Atoi(yearText)
		d, _ := strconv.Atoi(dayText)
		return makeDate(t, y, int(mo), d)
	}
	if t == "" {
		return Date{}, errors.New("the date is empty")
	}
	return Date{}, fmt.Errorf("%q is not a date; write dates as YYYY-MM-DD (for example 2026-03-01) or use a date cell", Excerpt(t))
}

// DateRangeFinancialYear returns the financial year whose dates a range
// such as "01/09/2026" to "31/08/2027" gives (a grid title's "Year 1
// (01/09/2026 – 31/08/2027)"): both dates in one financial year, the
// first not after the second. The dates are read as parseDateText reads
// them, and a pair written day/month or month/day (which parseDateText
// refuses alone) is read both ways round: the range is read when the
// readings in which both are real dates in order agree on the year
// ("31/08/2027" rules out month/day). Otherwise the error says why.
func DateRangeFinancialYear(from, to string) (FinancialYear, error) {
	readings := func(s string) []Date {
		t := strings.TrimSpace(s)
		if d, err := parseDateText(t); err == nil {
			return []Date{d}
		}
		m := ambiguousDatePattern.FindStringSubmatch(t)
		if m == nil || len(m[3]) != 4 {
			return nil
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		var out []Date
		if d, err := makeDate(t, y, b, a); err == nil {
			out = append(out, d) // day/month
		}
		if d, err := makeDate(t, y, a, b); err == nil && a != b {
			out = append(out, d) // month/day
		}
		return out
	}
	starts, ends := readings(from), readings(to)
	if len(starts) == 0 {
		_, err := parseDateText(from)
		return 0, err
	}
	if len(ends) == 0 {
		_, err := parseDateText(to)
		return 0, err
	}
	var years []FinancialYear
	for i, s := range starts {
		for j, e := range ends {
			if len(starts) == 2 && len(ends) == 2 && i != j {
				continue // both written the same way round
			}
			if fy := FinancialYearOf(s); !e.Before(s) && FinancialYearOf(e) == fy && !slices.Contains(years, fy) {
				years = append(years, fy)
			}
		}
	}
	switch len(years) {
	case 1:
		return years[0], nil
	case 0:
		return 0, fmt.Errorf("the dates %s to %s are not within one financial year (1 September to 31 August); write the financial year, such as 2026/27", Excerpt(strings.TrimSpace(from)), Excerpt(strings.TrimSpace(to)))
	}
	return 0, fmt.Errorf("the dates %s to %s are ambiguous: read day/month they are in %s, read month/day in %s; write the dates as YYYY-MM-DD, or write the financial year, such as 2026/27", Excerpt(strings.TrimSpace(from)), Excerpt(strings.TrimSpace(to)), years[0], years[1])
}

// plainISODate splits the common spelling YYYY-MM-DD without the
// pattern; other spellings are left to the patterns of parseDateText.
func plainISODate(t string) (y, m, d int, ok bool) {
	if len(t) != 10 || t[4] != '-' || t[7] != '-' {
		return 0, 0, 0, false
	}
	yy, okY := PlainDigits(t[:4])
	mm, okM := PlainDigits(t[5:7])
	dd, okD := PlainDigits(t[8:])
	return int(yy), int(mm), int(dd), okY && okM && okD
}

// DateValue reads a date cell as the plan's dates are read: a date cell,
// or text such as 2026-09-01; ok is false for a blank cell.
func DateValue(c Cell) (d Date, ok bool, err error) {
	switch c.Kind {
	case CellBlank:
		return Date{}, false, nil
	case CellDate:
		if c.Date.IsZero() || c.Date.Year < 1900 {
			return Date{}, false, fmt.Errorf("the date cell does not hold a valid date (%s)", c.Text)
		}
		return c.Date, true, nil
	case CellText:
		if strings.TrimSpace(c.Text) == "" {
			return Date{}, false, nil
		}
		if msg, isErr := SpreadsheetError(c.Text); isErr {
			return Date{}, false, errors.New(msg)
		}
		d, err = parseDateText(c.Text)
		return d, err == nil, err
	case CellNumber:
		return Date{}, false, fmt.Errorf("the cell holds the plain number %s, not a date; format the cell as a date or type the date as YYYY-MM-DD", c.Text)
	}
	return Date{}, false, kindError(c, "a date (YYYY-MM-DD)")
}

// integerValue returns a whole number from a numeric or text cell (plan_id,
// year_number). ok is false for a blank cell.
func IntegerValue(c Cell) (n int64, ok bool, err error) {
	switch c.Kind {
	case CellBlank:
		return 0, false, nil
	case CellNumber:
		if c.Number != math.Trunc(c.Number) || math.Abs(c.Number) > MaxExactInteger {
			return 0, false, fmt.Errorf("%s is not a whole number", fmtNumber(c.Number))
		}
		return int64(c.Number), true, nil
	case CellText:
		t := strings.TrimSpace(c.Text)
		if n, ok := PlainDigits(t); ok {
			return n, true, nil
		}
		if t == "" {
			return 0, false, nil
		}
		if msg, isErr := SpreadsheetError(t); isErr {
			return 0, false, errors.New(msg)
		}
		f, isNum := parseDecimal(t)
		if !isNum {
			return 0, false, fmt.Errorf("%q is not a number", Excerpt(t))
		}
		if f != math.Trunc(f) || math.Abs(f) > MaxExactInteger {
			return 0, false, fmt.Errorf("%q is not a whole number", Excerpt(t))
		}
		return int64(f), true, nil
	}
	return 0, false, kindError(c, "a whole number")
}

// checkNameText is the one rule for text that reaches the service as a
// plan's name or scorecard id, wherever it is read: a workbook cell (flat,
// long or grid, CSV or XLSX: the Assembler) and a saved change set (diff
// -o refuses to write it, apply SET to apply it). The text may hold no
// character that hides or moves text where it is shown (hiddenRune), nor
// start as a spreadsheet runs a formula (formulaLike): exported, or shown
// in a report, it would run or read as other text (docs/formats.md,
// "Values").
func CheckNameText(v string) error {
	if r, what, ok := hiddenRune(v); ok {
		return fmt.Errorf("%q holds %s (U+%04X), which hides or moves text where it is shown; retype the text without it", Excerpt(v), what, r)
	}
	if formulaLike(v) {
		return fmt.Errorf("%q starts like a spreadsheet formula (=, +, -, @), which a spreadsheet opening an export or report of it would run; rename it to start with another character", Excerpt(v))
	}
	return nil
}

// hiddenRune returns the first character of v that hides or moves text
// where it is shown, and what it is: a control character (ESC, CR, tab,
// ...), a bidirectional control (U+202E, which shows the text after it
// right to left, and the other embeddings, overrides, isolates and marks)
// or a line or paragraph separator.
func hiddenRune(v string) (r rune, what string, ok bool) {
	for _, r := range v {
		switch {
		case unicode.IsControl(r):
			return r, "a control character", true
		case unicode.Is(unicode.Bidi_Control, r):
			return r, "a bidirectional text control", true
		case unicode.In(r, unicode.Zl, unicode.Zp):
			return r, "a line or paragraph separator", true
		}
	}
	return 0, "", false
}

// formulaLike reports whether a spreadsheet would take v for a formula:
// after any leading single quotes, it starts with =, +, - or @.
func formulaLike(v string) bool {
	t := strings.TrimLeft(v, "'")
	return t != "" && strings.ContainsRune("=+-@", rune(t[0]))
}

// textValue returns the trimmed text of a cell for identifiers and names:
// text as written, numbers as displayed (so a VAT number typed as a number
// keeps its digits and zero padding). ok is false for a blank cell.
func TextValue(c Cell) (s string, ok bool, err error) {
	switch c.Kind {
	case CellBlank:
		return "", false, nil
	case CellText, CellNumber:
		s = strings.TrimSpace(c.Text)
		if s == "" {
			return "", false, nil
		}
		if msg, isErr := SpreadsheetError(s); isErr && c.Kind == CellText {
			return "", false, errors.New(msg)
		}
		if !utf8.ValidString(s) {
			// The service would store U+FFFD instead: the name would never
			// match again, and every run would send it anew.
			return "", false, errors.New("the text holds bytes that are not UTF-8 characters (a damaged or mis-encoded cell); retype it")
		}
		return s, true, nil
	}
	return "", false, kindError(c, "text")
}

var (
	financialYearPattern = regexp.MustCompile(`^(\d{4})\s*/\s*(\d{2}|\d{4})$`)
	// fyEndPattern is a financial year named by the year it ends in:
	// "FY2028", "FY 2028", "FY28".
	fyEndPattern = regexp.MustCompile(`^(?i:fy)\s*'?(\d{4}|\d{2})$`)
	// fyPrefixPattern is "FY" before a financial year written in full:
	// "FY2027/28", "FY 2027/2028".
	fyPrefixPattern = regexp.MustCompile(`^(?i:fy)\s*(\d{4}\s*/\s*(?:\d{2}|\d{4}))$`)
	yearOnlyPattern = regexp.MustCompile(`^\d{4}$`)
	// financialYearDashPattern is a financial year with a dash ("2027-28").
	financialYearDashPattern = regexp.MustCompile(`^(\d{4})\s*[-–—]\s*(\d{2}|\d{4})$`)
)

// ParseFinancialYear parses "2026/27" or "2026/2027": the financial year
// from 1 September 2026 to 31 August 2027; "FY2028" (or "FY28") is the
// financial year that ends in 2028, 2027/28. A year alone ("2028") is
// refused: it could be the year a financial year starts or ends in, and
// the message names both.
func ParseFinancialYear(s string) (FinancialYear, error) {
	t := strings.TrimSpace(s)
	firstText, secondText, ok := plainFinancialYear(t)
	if !ok {
		if m := fyEndPattern.FindStringSubmatch(t); m != nil {
			end, _ := strconv.Atoi(m[1])
			if len(m[1]) == 2 {
				end += 2000
			}
			if end < 1001 || end > 9999 {
				return 0, fmt.Errorf("%q is not a plausible financial year", Excerpt(t))
			}
			return FinancialYear(end - 1), nil
		}
		if m := fyPrefixPattern.FindStringSubmatch(t); m != nil {
			t = m[1]
		}
		m := financialYearPattern.FindStringSubmatch(t)
		if m == nil {
			if yearOnlyPattern.MatchString(t) {
				y, _ := strconv.Atoi(t)
				return 0, fmt.Errorf("%q is not a financial year: write %d/%02d for the one that ends in %d (1 September %d to 31 August %d, also written FY%d), or %d/%02d for the one that starts in %d", t, y-1, y%100, y, y-1, y, y, y, (y+1)%100, y)
			}
			if m := financialYearDashPattern.FindStringSubmatch(t); m != nil {
				if fy, err := ParseFinancialYear(m[1] + "/" + m[2]); err == nil {
					return 0, fmt.Errorf("%q is not a financial year as the format writes it; write it as %s", Excerpt(t), fy)
				}
			}
			return 0, fmt.Errorf("%q is not a financial year; write it as the years it spans, such as 2027/28 (1 September 2027 to 31 August 2028), or as FY2028, the financial year that ends in 2028", Excerpt(t))
		}
		firstText, secondText = m[1], m[2]
	}
	first, _ := strconv.Atoi(firstText)
	second, _ := strconv.Atoi(secondText)
	want := first + 1
	if len(secondText) == 2 {
		want %= 100
	}
	if second != want {
		end := second
		if len(secondText) == 2 {
			end += first - first%100
		}
		if end > first+1 {
			return 0, fmt.Errorf("%q is not a financial year: the second year must follow the first; write %d/%02d for the year that starts in %d, or %d/%02d for the one that ends in %d", Excerpt(t), first, (first+1)%100, first, end-1, end%100, end)
		}
		return 0, fmt.Errorf("%q is not a financial year: the second year must follow the first (write %d/%02d)", Excerpt(t), first, (first+1)%100)
	}
	if first < 1000 || first > 9998 {
		return 0, fmt.Errorf("%q is not a plausible financial year", Excerpt(t))
	}
	return FinancialYear(first), nil
}

// plainFinancialYear splits the common spellings 2026/27 and 2026/2027
// (no spaces) without the pattern, as financialYearPattern would.
func plainFinancialYear(t string) (first, second string, ok bool) {
	if (len(t) != 7 && len(t) != 9) || t[4] != '/' {
		return "", "", false
	}
	_, okF := PlainDigits(t[:4])
	_, okS := PlainDigits(t[5:])
	return t[:4], t[5:], okF && okS
}

// financialYearValue returns the financial year of a cell. ok is false for a
// blank cell.
func FinancialYearValue(c Cell) (fy FinancialYear, ok bool, err error) {
	switch c.Kind {
	case CellBlank:
		return 0, false, nil
	case CellText:
		if strings.TrimSpace(c.Text) == "" {
			return 0, false, nil
		}
		fy, err = ParseFinancialYear(c.Text)
		return fy, err == nil, err
	case CellNumber:
		return 0, false, fmt.Errorf("the cell holds the number %s; write the financial year as text such as 2026/27", c.Text)
	}
	return 0, false, kindError(c, "a financial year such as 2026/27")
}

// normalizeTargetType matches s case-insensitively against TargetTypes and
// returns the exact spelling, or the closest target types as suggestions.
func NormalizeTargetType(s string) (string, []string, bool) {
	return matchFold(s, TargetTypes, 2)
}

// normalizeSector matches s case-insensitively (and ignoring repeated
// spaces) against Sectors and returns the exact spelling, or the closest
// sectors as suggestions. A spelling of the gazette or of form EEA17
// (SectorValue) is not one of them: callers that accept those use
// SectorValue.
func normalizeSector(s string) (string, []string, bool) {
	return matchFold(s, Sectors, 3)
}

// SectorValue is the one rule by which a sector's name is read, in a
// workbook's sector cell and in a sector-targets file alike: the service's
// value (Sectors) as normalizeSector matches it, or a spelling of the
// gazette of the sectoral targets (GN 6124) or of form EEA17, which follow
// the SIC's wording ("Transportation and Storage", "Human Health and
// Social Work Activities", "Agriculture, Forestry and Fishing"): those
// read as the service's value with gazette true, for a warning naming the
// spelling. Punctuation, "&" for "and", and a closing "Activities" the
// service's value lacks are not told apart. ok is false for a name of no
// sector, with the closest sectors as suggestions.
func SectorValue(s string) (value string, gazette bool, suggestions []string, ok bool) {
	v, suggestions, found := normalizeSector(s)
	if found {
		return v, false, nil, true
	}
	key := sectorKey(s)
	if v, found := sectorAliases[key]; found {
		return v, true, nil, true
	}
	for _, v := range Sectors {
		if sectorKey(v) == key {
			return v, true, nil, true
		}
	}
	return "", false, suggestions, false
}

// sectorAliases are the gazette's and EEA17's spellings (as sectorKey
// folds them) whose words differ from the service's value.
var sectorAliases = map[string]string{
	"transportation and storage":          "Transport and Storage",
	"administrative and support service":  "Administrative and Support Activities",
	"administrative and support services": "Administrative and Support Activities",
	"accommodation and food services":     "Accommodation and Food Service Activities",
	"information and communications":      "Information and Communication",
}

// sectorKey folds a sector's name for SectorValue: lower case, "&" read
// as "and", every run of other characters than letters and digits one
// space, and a closing "activities" dropped.
func sectorKey(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(strings.ReplaceAll(s, "&", " and ")) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return strings.TrimSuffix(strings.TrimSuffix(b.String(), "activities"), " ")
}

func matchFold(s string, list []string, n int) (string, []string, bool) {
	// The usual case, a value written exactly as listed, without folding
	// (no two values of a list are equal under folding).
	for _, v := range list {
		if v == s {
			return v, nil, true
		}
	}
	t := s
	if !singleSpaced(s) {
		t = strings.Join(strings.Fields(s), " ")
	}
	for _, v := range list {
		if strings.EqualFold(v, t) {
			return v, nil, true
		}
	}
	return "", Closest(t, list, n), false
}

// singleSpaced reports whether s is ASCII with words separated by
// single spaces and no space at either end: what strings.Fields and a
// join with " " would give back unchanged.
func singleSpaced(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && s[i+1] == ' ':
			return false
		}
	}
	return true
}

// utf8RuneSelf is utf8.RuneSelf: bytes below it are ASCII characters.
const utf8RuneSelf = 0x80
