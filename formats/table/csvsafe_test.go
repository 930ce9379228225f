package table

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestCSVSafeField(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"Acme", "Acme"},
		{"", ""},
		{`=HYPERLINK("http://evil","x")`, `'=HYPERLINK("http://evil","x")`},
		{"+27 11 555 0000", "'+27 11 555 0000"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"-2", "-2"}, // a number stays a number
		{"+3.5", "+3.5"},
		{"-1e3", "-1e3"},
		{"'=x", "''=x"}, // a quote before a trigger is kept by one more
		{"'plain", "'plain"},
		{"2025-09-01", "2025-09-01"},
	} {
		if got := CSVSafeField(tc.in); got != tc.out {
			t.Errorf("CSVSafeField(%q) = %q, want %q", tc.in, got, tc.out)
		}
		if back := CSVUnsafeField(tc.out); back != tc.in {
			t.Errorf("CSVUnsafeField(%q) = %q, want %q", tc.out, back, tc.in)
		}
	}
}

// TestCSVSafeFieldRoundTripProperty: reading undoes writing for every text,
// and what is written never starts a formula.
func TestCSVSafeFieldRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringMatching(`'{0,3}[=+\-@\t\r']?[0-9a-z=+\-@'.eE ]{0,6}`)).Draw(t, "s")
		w := CSVSafeField(s)
		if back := CSVUnsafeField(w); back != s {
			t.Fatalf("%q written %q read back %q", s, w, back)
		}
		if w != "" && strings.ContainsRune("=+-@\t\r", rune(w[0])) && !csvPlainNumber.MatchString(w) {
			t.Fatalf("%q written %q starts a formula", s, w)
		}
	})
}
