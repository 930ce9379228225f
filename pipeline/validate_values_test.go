package pipeline

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestParseCounter(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string // substring of the message; "" = accepted
	}{
		{"12", 12, ""},
		{"12.0", 12, ""},
		{" 12 ", 12, ""},
		{"0", 0, ""},
		{"+7", 7, ""},
		{"1e2", 100, ""},
		{"0012", 12, ""},
		{"-3", 0, "negative"},
		{"-0.5", 0, "negative and not a whole number"},
		{"2.5", 0, "not a whole number"},
		{"twelve", 0, "not a number"},
		{"1,200", 0, "is ambiguous: with a comma grouping thousands it is 1200, with the decimal comma of South African settings it is 1.200"},
		{"1 234", 1234, ""},
		{"1\u00a0234", 1234, ""},
		{"2\u202f345", 2345, ""},
		{"12\u2009000", 12000, ""},
		{"\u00a01 234 567\u00a0", 1234567, ""},
		{"1 234,00", 1234, ""},
		{"12,0", 12, ""},
		{"1 234,5", 0, "is not a whole number (the comma is a decimal comma)"},
		{"1\u00a0234,5", 0, "is not a whole number (the comma is a decimal comma)"},
		{"12,5", 0, "not a whole number"},
		{"12 34", 0, "not a number"},
		{"1  234", 0, "not a number"},
		{"1234 567", 0, "not a number"},
		{"1 2345", 0, "not a number"},
		{"1 234 56", 0, "not a number"},
		{"-1 234", 0, "not a number"},
		{"0x10", 0, "not a number"},
		{"NaN", 0, "not a number"},
		{"Inf", 0, "not a number"},
		{"1e400", 0, "not a number"},
		{"1e17", 0, "too large"},
		{"", 0, "empty"},
	}
	for _, tt := range tests {
		got, err := parseCounter(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("parseCounter(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseCounter(%q) error = %v; want one containing %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestCounterValueKinds(t *testing.T) {
	tests := []struct {
		name    string
		cell    Cell
		want    int64
		set     bool
		wantErr string
	}{
		{"blank", Cell{Kind: CellBlank}, 0, false, ""},
		{"spaces", Cell{Kind: CellText, Text: "  "}, 0, false, ""},
		{"number", Cell{Kind: CellNumber, Number: 5, Text: "5"}, 5, true, ""},
		{"number fraction", Cell{Kind: CellNumber, Number: 5.5, Text: "5.5"}, 0, false, "not a whole number"},
		{"formula float noise", Cell{Kind: CellNumber, Number: 12.000000000000002, Text: "12.000000000000002"}, 12, true, ""},
		{"small fraction is still a fraction", Cell{Kind: CellNumber, Number: 12.001, Text: "12.001"}, 0, false, "not a whole number"},
		{"negative number", Cell{Kind: CellNumber, Number: -1, Text: "-1"}, 0, false, "negative"},
		{"text", Cell{Kind: CellText, Text: "12.0"}, 12, true, ""},
		{"error cell", Cell{Kind: CellError, Text: "#DIV/0!"}, 0, false, "#DIV/0!"},
		{"error text", Cell{Kind: CellText, Text: "#REF!"}, 0, false, "#REF!"},
		{"formula without value", Cell{Kind: CellFormulaNoValue, Text: "=A1"}, 0, false, "no saved result"},
		{"date", Cell{Kind: CellDate, Date: mustDate("2026-01-01")}, 0, false, "holds a date"},
		{"bool", Cell{Kind: CellBool, Text: "TRUE"}, 0, false, "TRUE/FALSE"},
	}
	for _, tt := range tests {
		got, set, err := CounterValue(tt.cell)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error = %v; want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want || set != tt.set {
			t.Errorf("%s: = %d, %v, %v; want %d, %v", tt.name, got, set, err, tt.want, tt.set)
		}
	}
}

func TestParseDateText(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"2026-03-01", "2026-03-01", ""},
		{" 2026-3-1 ", "2026-03-01", ""},
		{"2026-03-01T00:00:00", "2026-03-01", ""},
		{"2026-03-01 00:00:00", "2026-03-01", ""},
		{"2026-03-01T00:00:00Z", "2026-03-01", ""},
		{"2028-02-29", "2028-02-29", ""},
		{"2026-02-29", "", "not a real date"},
		{"2026-13-01", "", "not a real date"},
		{"03/04/2026", "", "ambiguous"},
		{"3.4.26", "", "ambiguous"},
		{"03-04-2026", "", "ambiguous"},
		{"31/08/2029", "", "can only be day/month/year (31 is no month), but the format requires ISO dates to rule out day/month mix-ups; write it as 2029-08-31"},
		{"08/31/2029", "", "can only be month/day/year (31 is no month)"},
		{"08/31/2029", "", "write it as 2029-08-31"},
		{"31.8.29", "", "write it as 2029-08-31"},
		{"05/05/2027", "", "write it as 2027-05-05"},
		{"31/02/2029", "", "not a real date"},
		{"31/13/2029", "", "neither 31 nor 13 is a month"},
		{"2026/03/01", "2026-03-01", ""},
		{"2026/09/01", "2026-09-01", ""},
		{"2026.9.1", "2026-09-01", ""},
		{"2026/02/30", "", "not a real date"},
		{"2026/13/01", "", "not a real date"},
		{"1 March 2026", "2026-03-01", ""},
		{"1 September 2026", "2026-09-01", ""},
		{"01 Sep 2026", "2026-09-01", ""},
		{"1 Sept. 2026", "2026-09-01", ""},
		{"31-Aug-2029", "2029-08-31", ""},
		{"1st September 2026", "2026-09-01", ""},
		{"September 1, 2026", "2026-09-01", ""},
		{"31 Augustus 2029", "2029-08-31", ""},
		{"1 Okt 2026", "2026-10-01", ""},
		{"31 September 2026", "", "not a real date"},
		{"1 Smarch 2026", "", `"Smarch" is not the name of a month`},
		{"1 September 26", "", "YYYY-MM-DD"},
		{"46082", "", "YYYY-MM-DD"},
		{"", "", "empty"},
	}
	for _, tt := range tests {
		got, err := parseDateText(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseDateText(%q) error = %v; want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("parseDateText(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestParseFinancialYearAdvice checks that the fix a refused financial
// year suggests names the right year: "2028" is 2027/28 or 2028/29, never
// an example that, followed, files the targets under another year.
func TestParseFinancialYearAdvice(t *testing.T) {
	for in, want := range map[string]string{
		"2028":      `"2028" is not a financial year: write 2027/28 for the one that ends in 2028 (1 September 2027 to 31 August 2028, also written FY2028), or 2028/29 for the one that starts in 2028`,
		"Year 3":    `"Year 3" is not a financial year; write it as the years it spans, such as 2027/28 (1 September 2027 to 31 August 2028), or as FY2028, the financial year that ends in 2028`,
		"2027/29":   `"2027/29" is not a financial year: the second year must follow the first; write 2027/28 for the year that starts in 2027, or 2028/29 for the one that ends in 2029`,
		"2026/2028": `"2026/2028" is not a financial year: the second year must follow the first; write 2026/27 for the year that starts in 2026, or 2027/28 for the one that ends in 2028`,
		"2027/26":   `"2027/26" is not a financial year: the second year must follow the first (write 2027/28)`,
		"2027-28":   `"2027-28" is not a financial year as the format writes it; write it as 2027/28`,
	} {
		_, err := ParseFinancialYear(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseFinancialYear(%q) error = %v\nwant %s", in, err, want)
		}
	}
}

func TestDateValueKinds(t *testing.T) {
	d, ok, err := DateValue(Cell{Kind: CellDate, Date: mustDate("2026-09-01"), Number: 46266})
	if err != nil || !ok || d != mustDate("2026-09-01") {
		t.Errorf("date cell: %v %v %v", d, ok, err)
	}
	if _, _, err := DateValue(Cell{Kind: CellNumber, Number: 46266, Text: "46266"}); err == nil || !strings.Contains(err.Error(), "plain number") {
		t.Errorf("plain number as date: %v", err)
	}
	if _, ok, err := DateValue(Cell{Kind: CellBlank}); ok || err != nil {
		t.Errorf("blank: %v %v", ok, err)
	}
	if _, _, err := DateValue(Cell{Kind: CellError, Text: "#VALUE!"}); err == nil || !strings.Contains(err.Error(), "#VALUE!") {
		t.Errorf("error cell: %v", err)
	}
}

func TestParseFinancialYear(t *testing.T) {
	for in, want := range map[string]FinancialYear{"2026/27": 2026, "2026/2027": 2026, " 2099/00 ": 2099, "2099/2100": 2099, "2026 / 27": 2026,
		"FY2028": 2027, "fy 2028": 2027, "FY28": 2027, "FY2027/28": 2027, "FY 2027/2028": 2027} {
		got, err := ParseFinancialYear(in)
		if err != nil || got != want {
			t.Errorf("ParseFinancialYear(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"2026/28", "2026/2028", "2026", "FY2027/29", "FY", "FY202", "2026-27", "26/27", ""} {
		if _, err := ParseFinancialYear(in); err == nil {
			t.Errorf("ParseFinancialYear(%q) accepted", in)
		}
	}
}

func TestNormalize(t *testing.T) {
	if s, _, ok := normalizeSector("  mining and   QUARRYING "); !ok || s != "Mining and Quarrying" {
		t.Errorf("sector = %q %v", s, ok)
	}
	if _, sugg, ok := normalizeSector("Manufacturng"); ok || len(sugg) == 0 || sugg[0] != "Manufacturing" {
		t.Errorf("suggestions = %v", sugg)
	}
	if s, _, ok := NormalizeTargetType("Disabled_Employees"); !ok || s != TargetDisabled {
		t.Errorf("target type = %q", s)
	}
	if _, sugg, ok := NormalizeTargetType("all_employes"); ok || len(sugg) == 0 || sugg[0] != TargetAll {
		t.Errorf("suggestions = %v", sugg)
	}
}

func TestIntegerAndTextValue(t *testing.T) {
	if n, ok, err := IntegerValue(Cell{Kind: CellText, Text: " 42.0 "}); n != 42 || !ok || err != nil {
		t.Errorf("integerValue = %d %v %v", n, ok, err)
	}
	if _, _, err := IntegerValue(Cell{Kind: CellNumber, Number: 4.2, Text: "4.2"}); err == nil {
		t.Error("4.2 accepted as an integer")
	}
	if s, ok, err := TextValue(Cell{Kind: CellNumber, Number: 412345678, Text: "0412345678"}); s != "0412345678" || !ok || err != nil {
		t.Errorf("textValue keeps the displayed digits: %q %v %v", s, ok, err)
	}
	if _, _, err := TextValue(Cell{Kind: CellError, Text: "#N/A"}); err == nil {
		t.Error("error value accepted as text")
	}
}

// FuzzParseCounter checks that parseCounter never panics, accepts only
// whole numbers >= 0, and reads back what it accepted.
func FuzzParseCounter(f *testing.F) {
	for _, s := range []string{"12", "12.0", " 12 ", "-3", "2.5", "1e2", "1,200", "1 234", "1\u00a0234,5", "1\u202f234,000", "0x10", "NaN", "+0", "-0", "9007199254740993", "1e400", ".5", "5.", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseCounter(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if n < 0 || n > MaxExactInteger {
			t.Fatalf("parseCounter(%q) = %d", s, n)
		}
		back, err := parseCounter(strconv.FormatInt(n, 10))
		if err != nil || back != n {
			t.Fatalf("round trip of %d: %d, %v", n, back, err)
		}
	})
}

// FuzzParseDate checks that parseDateText never panics, returns only real
// dates, and that an accepted date reads back from its ISO form.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-03-01", "03/04/2026", "2026-02-29", "2026/03/01", "2026-03-01T10:00:00Z", "0000-01-01", "1 September 2026", "01 Sep 2026", "September 1, 2026", "9999-12-31", "2026-1-1", "31.12.2026", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDateText(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		tm := d.Time()
		if tm.Year() != d.Year || tm.Month() != d.Month || tm.Day() != d.Day || d.Month < time.January || d.Month > time.December {
			t.Fatalf("parseDateText(%q) = %v: not a real date", s, d)
		}
		back, err := parseDateText(d.String())
		if err != nil || back != d {
			t.Fatalf("round trip of %v: %v, %v", d, back, err)
		}
	})
}

// FuzzParseFinancialYear checks the financial-year parser the same way.
func FuzzParseFinancialYear(f *testing.F) {
	for _, s := range []string{"2026/27", "2026/2027", "2099/00", "2026/28", "x", "FY2028", "FY28", "fy 2027/28", "2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fy, err := ParseFinancialYear(s)
		if err != nil {
			return
		}
		back, err := ParseFinancialYear(fy.String())
		if err != nil || back != fy {
			t.Fatalf("round trip of %v: %v, %v", fy, back, err)
		}
	})
}

// FuzzDateRangeFinancialYear checks that the dates of a grid title never
// make the parser panic, and that a year it gives holds both dates when
// they read alone.
func FuzzDateRangeFinancialYear(f *testing.F) {
	for _, p := range [][2]string{{"01/09/2026", "31/08/2027"}, {"10/01/2026", "12/08/2026"}, {"2026-09-01", "31 August 2027"},
		{"01/09/2026", "31/08/2028"}, {"x", "31/08/2027"}, {"99/99/2026", "01/01/0000"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		fy, err := DateRangeFinancialYear(from, to)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		a, errA := parseDateText(from)
		b, errB := parseDateText(to)
		if errA == nil && errB == nil && (FinancialYearOf(a) != fy || FinancialYearOf(b) != fy || b.Before(a)) {
			t.Fatalf("%q to %q: year %v", from, to, fy)
		}
	})
}

// TestGroupedCounterProperty: a whole number with its thousands grouped by
// any of the spaces South African settings write reads as that number.
func TestGroupedCounterProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(1000, MaxExactInteger).Draw(t, "n")
		digits := strconv.FormatInt(n, 10)
		var b strings.Builder
		for i, r := range digits {
			if i > 0 && (len(digits)-i)%3 == 0 {
				b.WriteString(rapid.SampledFrom([]string{" ", "\u00a0", "\u202f", "\u2009"}).Draw(t, "sep"))
			}
			b.WriteRune(r)
		}
		got, err := parseCounter(b.String())
		if err != nil || got != n {
			t.Fatalf("parseCounter(%q) = %d, %v; want %d", b.String(), got, err, n)
		}
	})
}

// TestValueParsersProperty: every way a person or a spreadsheet writes a
// whole number >= 0 or an ISO date reads back as that value.
func TestValueParsersProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(0, MaxExactInteger).Draw(t, "n")
		s := strconv.FormatInt(n, 10)
		s = rapid.SampledFrom([]string{"", "+", "00"}).Draw(t, "prefix") + s
		s += rapid.SampledFrom([]string{"", ".0", ".", ".000"}).Draw(t, "suffix")
		s = rapid.StringMatching(`[ \t]{0,2}`).Draw(t, "lead") + s + rapid.StringMatching(`[ \t]{0,2}`).Draw(t, "trail")
		got, err := parseCounter(s)
		if err != nil || got != n {
			t.Fatalf("parseCounter(%q) = %d, %v; want %d", s, got, err, n)
		}
		if _, err := parseCounter("-" + strconv.FormatInt(n+1, 10)); err == nil {
			t.Fatalf("negative %d accepted", -(n + 1))
		}

		d := Date{rapid.IntRange(1900, 2200).Draw(t, "y"), time.Month(rapid.IntRange(1, 12).Draw(t, "m")), 1}
		d.Day = rapid.IntRange(1, time.Date(d.Year, d.Month+1, 0, 0, 0, 0, 0, time.UTC).Day()).Draw(t, "d")
		text := d.String() + rapid.SampledFrom([]string{"", "T00:00:00", " 00:00:00", "T00:00:00Z"}).Draw(t, "time")
		if got, err := parseDateText(text); err != nil || got != d {
			t.Fatalf("parseDateText(%q) = %v, %v; want %v", text, got, err, d)
		}
		fy := FinancialYearOf(d)
		if got, err := ParseFinancialYear(fy.String()); err != nil || got != fy {
			t.Fatalf("ParseFinancialYear(%q) = %v, %v", fy.String(), got, err)
		}
	})
}

// TestFastPathsMatchPatterns checks the shortcuts the value parsers take for
// the common spellings (plain digits, YYYY-MM-DD, 2026/27, single-spaced
// names, text that is no error value) against the general code they skip:
// whenever a shortcut answers, the general code gives the same answer.
func TestFastPathsMatchPatterns(t *testing.T) {
	// Strings made of the characters that matter to the parsers.
	text := rapid.StringOfN(rapid.SampledFrom([]rune("0123456789 -/.+eE#\tAaxé\u00a0")), 0, 18, -1)
	rapid.Check(t, func(t *rapid.T) {
		s := text.Draw(t, "s")
		if n, ok := ValPlainDigits(s); ok {
			f, isNum := valParseDecimal(s)
			want, err := valCounterFromFloat(f)
			if !isNum || err != nil || want != n {
				t.Fatalf("valPlainDigits(%q) = %d; the general parse gives %v, %d, %v", s, n, isNum, want, err)
			}
		}
		if y, m, d, ok := valPlainISODate(s); ok {
			g := isoDatePattern.FindStringSubmatch(s)
			if g == nil || g[1] != s[:4] || g[2] != s[5:7] || g[3] != s[8:] || y != atoiOrFail(t, g[1]) || m != atoiOrFail(t, g[2]) || d != atoiOrFail(t, g[3]) {
				t.Fatalf("valPlainISODate(%q) = %d %d %d; the pattern gives %q", s, y, m, d, g)
			}
		}
		if first, second, ok := valPlainFinancialYear(s); ok {
			g := financialYearPattern.FindStringSubmatch(s)
			if g == nil || g[1] != first || g[2] != second {
				t.Fatalf("valPlainFinancialYear(%q) = %q %q; the pattern gives %q", s, first, second, g)
			}
		}
		if valSingleSpaced(s) && strings.Join(strings.Fields(s), " ") != s {
			t.Fatalf("valSingleSpaced(%q), but strings.Fields changes it", s)
		}
	})
	// The error values all start with #, the only text valErrorMessage
	// looks at; written in any case, with spaces, they are still found.
	for _, e := range valErrorValues {
		if e[0] != '#' {
			t.Fatalf("error value %s does not start with #", e)
		}
		if _, isErr := ValErrorMessage(" \t" + strings.ToLower(e) + " "); !isErr {
			t.Errorf("valErrorMessage misses %s", e)
		}
	}
}

func atoiOrFail(t *rapid.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestParseDateDayMonth: the strict ISO parser (flags such as template
// --start) refuses a day/month date but shows its ISO form when it is
// clear, and calls 03/04/2026 ambiguous.
func TestParseDateDayMonth(t *testing.T) {
	for in, want := range map[string]string{
		"31/08/2029": "write it as 2029-08-31",
		"03/04/2026": "ambiguous",
		"1 May 2026": "not a date in the form YYYY-MM-DD",
	} {
		if _, err := ParseDate(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDate(%q) = %v; want %q", in, err, want)
		}
	}
}

// TestSectorValue: the service's values read as themselves; the gazette's
// and EEA17's spellings read as the service's value, marked as such; the
// sector-targets file reads a sector by the same rule.
func TestSectorValue(t *testing.T) {
	for in, want := range map[string]struct {
		v       string
		gazette bool
	}{
		"Transport and Storage":                                                {"Transport and Storage", false},
		"transport  and storage":                                               {"Transport and Storage", false},
		"Transportation and Storage":                                           {"Transport and Storage", true},
		"Human Health and Social Work Activities":                              {"Human Health and Social Work", true},
		"Agriculture, Forestry and Fishing":                                    {"Agriculture, Forestry & Fishing", true},
		"Electricity, Gas, Steam and Air Conditioning Supply":                  {"Electricity, Gas Steam and Air Conditioning Supply", true},
		"Professional, Scientific and Technical Activities":                    {"Professional Scientific and Technical", true},
		"Water Supply; Sewerage, Waste Management and Remediation Activities":  {"Water Supply, Sewerage, Waste Management and Remediation Activities", true},
		"Administrative and Support Service Activities":                        {"Administrative and Support Activities", true},
		"Wholesale and Retail Trade, Repair of Motor Vehicles and Motorcycles": {"Wholesale and Retail Trade; Repair of Motor Vehicles and Motorcycles", true},
	} {
		v, gazette, _, ok := SectorValue(in)
		if !ok || v != want.v || gazette != want.gazette {
			t.Errorf("SectorValue(%q) = %q, %v, %v; want %q, %v", in, v, gazette, ok, want.v, want.gazette)
		}
	}
	for _, in := range []string{"Transport", "Health", "Mining", "Other service activities", ""} {
		if v, _, _, ok := SectorValue(in); ok {
			t.Errorf("SectorValue(%q) = %q, want none", in, v)
		}
	}
}
