package templates

import "testing"

// TestInlineTextEscapes: a cell's text keeps every character through XML:
// markup escaped, a literal _xHHHH_ protected, and what XML cannot hold
// (control characters) or LibreOffice drops (a carriage return) written as
// its _xHHHH_ escape, as Excel writes them, never as U+FFFD.
func TestInlineTextEscapes(t *testing.T) {
	tests := []struct {
		in, want string
		preserve bool
	}{
		{"plain", "plain", false},
		{" padded ", " padded ", true},
		{`O'Brien & <Sons> "x"`, "O&#39;Brien &amp; &lt;Sons&gt; &#34;x&#34;", false},
		{"a\nb", "a\nb", false},
		{"tab\there", "tab&#x9;here", false},
		{"CR\r\nLF", "CR_x000D_\nLF", false},
		{"Ctl\x01\x1fX\x7f", "Ctl_x0001__x001F_X\x7f", false},
		{"_x0041_ kept", "_x005F_x0041_ kept", false},
		{"\x01_x0041_", "_x0001__x005F_x0041_", false},
		{"a\uFFFEb", "a_xFFFE_b", false},
	}
	for _, tc := range tests {
		got, preserve := inlineText(tc.in)
		if got != tc.want || preserve != tc.preserve {
			t.Errorf("inlineText(%q) = %q, %v; want %q, %v", tc.in, got, preserve, tc.want, tc.preserve)
		}
	}
}
