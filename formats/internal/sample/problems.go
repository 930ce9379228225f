package sample

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// Problem is one expected problem (CheckProblems): severity, location (Origin.Ref, such
// as "Targets!M4" or "line 5, column 4"; "" for a whole file; "sheet:NAME"
// for anywhere on that sheet) and a piece of its message.
type Problem struct {
	Severity pipeline.Severity
	Ref      string
	Text     string
}

// Err is an expected error at ref whose message contains text.
func Err(ref, text string) Problem { return Problem{pipeline.Error, ref, text} }

// Warn is an expected warning at ref whose message contains text.
func Warn(ref, text string) Problem { return Problem{pipeline.Warning, ref, text} }

// CheckProblems matches problems and expectations one to one.
func CheckProblems(t testing.TB, got pipeline.Problems, want []Problem) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, p := range got {
			at := p.Origin.Ref() == w.Ref
			if sheet, ok := strings.CutPrefix(w.Ref, "sheet:"); ok {
				at = p.Origin.Sheet == sheet // anywhere on that sheet
			}
			if !used[i] && p.Severity == w.Severity && at && strings.Contains(p.Message, w.Text) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing %s at %q containing %q", w.Severity, w.Ref, w.Text)
		}
	}
	for i, p := range got {
		if !used[i] {
			t.Errorf("unexpected problem: %s", p)
		}
	}
}
