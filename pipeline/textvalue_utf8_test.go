package pipeline

import (
	"strings"
	"testing"
)

// TestTextValueRefusesInvalidUTF8: every reader's text fields (names,
// identifiers, sector, scorecard id) are checked here, so that no reader
// can pass bytes the service would turn into U+FFFD.
func TestTextValueRefusesInvalidUTF8(t *testing.T) {
	for _, s := range []string{"Plan \xff", "\xc3\x28", "a\xed\xa0\x80b"} {
		if _, _, err := TextValue(Cell{Kind: CellText, Text: s}); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
			t.Errorf("textValue(%q) = %v, want a UTF-8 error", s, err)
		}
	}
	if v, ok, err := TextValue(Cell{Kind: CellText, Text: " Plan \u00e9\U0001F600 "}); err != nil || !ok || v != "Plan \u00e9\U0001F600" {
		t.Errorf("valid UTF-8: %q, %v, %v", v, ok, err)
	}
}
