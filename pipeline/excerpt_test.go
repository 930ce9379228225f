package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for _, tc := range []struct {
		in, want string
	}{
		{"", ""},
		{"short", "short"},
		{strings.Repeat("a", maxQuoted), strings.Repeat("a", maxQuoted)},
		{strings.Repeat("a", maxQuoted+1), strings.Repeat("a", maxQuoted) + "… (121 characters in all)"},
		{long, strings.Repeat("é", maxQuoted) + "… (5000 characters in all)"},
	} {
		got := Excerpt(tc.in)
		if got != tc.want {
			t.Errorf("Excerpt(%d chars) = %q, want %q", len(tc.in), got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("invalid UTF-8 %q", got)
		}
		if Excerpt(got) != got {
			t.Errorf("Excerpt is not idempotent on %q", got)
		}
	}
	var ps Problems
	ps.Errorf(Origin{File: "f"}, long, "m")
	if len(ps[0].Value) > 4*maxQuoted+64 || !strings.Contains(ps[0].String(), "5000 characters in all") {
		t.Errorf("problem %q", ps[0].String())
	}
}
