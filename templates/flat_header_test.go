package templates

import "testing"

// TestIsFlatHeaderCell pins the one rule of a flat header cell: target_type
// in any letter case; the spaces around it, and a byte order mark before
// it, are ignored (a user who typed " Target_Type " means the header);
// anything more or less is no header.
func TestIsFlatHeaderCell(t *testing.T) {
	for text, want := range map[string]bool{
		"target_type":         true,
		"TARGET_TYPE":         true,
		" Target_Type ":       true,
		"\ttarget_type\u00a0": true,
		"\ufefftarget_type":   true,
		"\ufeff target_type":  true,
		"target type":         false,
		"target_types":        false,
		"target_type:":        false,
		"my target_type":      false,
		"":                    false,
	} {
		if got := IsFlatHeaderCell(text); got != want {
			t.Errorf("IsFlatHeaderCell(%q) = %v, want %v", text, got, want)
		}
	}
}
