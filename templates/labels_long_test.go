package templates_test

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/templates"
)

// TestRaceGenderLongText: a cell of thousands of words (a pasted
// paragraph, a 32,767-character plan name) is no race and gender, found
// without trying every split of its words (which joined the words again
// for each split: quadratic, seconds per cell). Measured in allocations,
// not time.
func TestRaceGenderLongText(t *testing.T) {
	m := templates.NewMatcher(nil)
	long := strings.Repeat("african ", 5000) + "male"
	if _, _, ok := m.RaceGender(long); ok {
		t.Fatal("a paragraph read as a race and gender")
	}
	if n := testing.AllocsPerRun(1, func() { m.RaceGender(long) }); n > 50 {
		t.Errorf("RaceGender of %d words: %.0f allocations, want a handful", 5001, n)
	}
	if r, g, ok := m.RaceGender("African male"); !ok || r == "" || g == "" {
		t.Errorf("RaceGender(African male) = %q, %q, %v", r, g, ok)
	}
}
