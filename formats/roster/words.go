package roster

import (
	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline/profile"
	"github.com/eepipe/eepipe/templates"
)

// Words returns the vocabulary of a roster's cells: a mapping file's
// spellings first (m may be nil), then the grid vocabulary of the default
// catalog (templates.Matcher: "African", "A", "Black African", "Indian/Asian",
// "M", "Female", the EEA wording and eepipe's labels of the levels).
func Words(m *mapping.File) profile.Vocabulary {
	return words{m: m, match: templates.NewMatcher(nil)}
}

type words struct {
	m     *mapping.File
	match *templates.Matcher
}

func (w words) Race(s string) (string, bool) {
	if r, ok := w.m.Race(s); ok {
		return r, true
	}
	return w.match.Race(s)
}

func (w words) Gender(s string) (string, bool) {
	if g, ok := w.m.Gender(s); ok {
		return g, true
	}
	return w.match.Gender(s)
}

func (w words) Level(s string) (string, bool) {
	if l, ok := w.m.Level(s); ok {
		return l, true
	}
	return w.match.Level(s)
}

func (w words) Grade(s string) (string, bool) { return w.m.Grade(s) }

func (w words) Fold(s string) string { return templates.Normalize(s) }
