package templates

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestLevelWordings: the official occupational-level wordings of the EE
// forms and the variants consultants type (slashes or commas between the
// parts, "and" or "&", "mid-" or "middle management", plurals) name their
// level; labels of no level are refused.
func TestLevelWordings(t *testing.T) {
	m := NewMatcher(nil)
	for _, tc := range []struct{ text, want string }{
		{"Top management", "top_managers"},
		{"TOP MANAGEMENT", "top_managers"},
		{"Senior Management", "senior_managers"},
		{"Professionally qualified and experienced specialists and mid-management", "middle_managers"},
		{"Professionally qualified, experienced specialists and middle management", "middle_managers"},
		{"Professionally qualified & experienced specialists & mid management", "middle_managers"},
		{"Professionally qualified / experienced specialists / mid-management", "middle_managers"},
		{"Professionally Qualified and Experienced Specialist and Mid-Management", "middle_managers"},
		{"Experienced specialists and middle management", "middle_managers"},
		{"Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents", "junior_managers"},
		{"Skilled technical and academically qualified workers, junior management, supervisors, foremen and superintendents", "junior_managers"},
		{"Skilled technical and academically qualified workers/junior management/supervisors/foremen/superintendents", "junior_managers"},
		{"Skilled technical and academically qualified workers / junior management / supervisors / foremen / superintendents", "junior_managers"},
		{"Junior management, supervisors, foremen and superintendents", "junior_managers"},
		{"Junior management/supervisors/foreman/superintendent", "junior_managers"},
		{"Skilled technical and academically qualified workers, junior managers, supervisors, foremen and superintendents", "junior_managers"},
		{"Professionally qualified and experienced specialists and middle managers", "middle_managers"},
		{"Professionally qualified and experienced specialists, and mid-management", "middle_managers"},
		{"Senior managers", "senior_managers"},
		{"Top mgmt", "top_managers"},
		{"Semi-skilled and discretionary decision-making", "semi_skilled_employees"},
		{"Semiskilled and discretionary decision making", "semi_skilled_employees"},
		{"Unskilled and defined decision-making", "unskilled_employees"},
		{"TOTAL PERMANENT", "total_permanent_employees"},
		{"Temporary employees", "temporary_employees"},
		{"GRAND TOTAL", "grand_total_employees"},
		{"middle_managers", "middle_managers"},
		{"Executives", ""},
		{"Total", ""},
		{"Management", ""},
	} {
		got, ok := m.Level(tc.text)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Level(%q) = %q, %v; want %q", tc.text, got, ok, tc.want)
		}
	}
}

// TestLevelSuggestionsAlways: an unknown level label always gets the
// closest levels, a long slash-separated variant and a far-off word alike.
func TestLevelSuggestionsAlways(t *testing.T) {
	m := NewMatcher(nil)
	for _, tc := range []struct{ text, first string }{
		{"Top managment", "Top management"},
		{"Skilled technical/academically qualified/junior mgmt/supervisors", "Skilled technical / junior management"},
		{"Professionally qualified specialists / mid-level managers and experienced staff", "Professionally qualified / middle management"},
		{"Semi-skilled, discretionary decisions", "Semi-skilled"},
		{"Xyzzy", ""},
		{"", ""},
	} {
		got := m.SuggestLevel(tc.text)
		if len(got) == 0 || (tc.first != "" && got[0] != tc.first) {
			t.Errorf("SuggestLevel(%q) = %q; want %q first (and never none)", tc.text, got, tc.first)
		}
	}
}

// TestRaceGenderCodes: the two-letter codes (AM, CF, ...) and the single
// race letters name a race and gender.
func TestRaceGenderCodes(t *testing.T) {
	m := NewMatcher(nil)
	for _, tc := range []struct{ text, race, gender string }{
		{"AM", "african", "male"}, {"cf", "coloured", "female"}, {"IM", "indian", "male"}, {"WF", "white", "female"},
		{"A male", "african", "male"}, {"Female W", "white", "female"}, {"FN Male", "foreign", "male"},
		{"Foreign nationals female", "foreign", "female"},
		{"AX", "", ""}, {"FM", "", ""}, {"M", "", ""},
	} {
		r, g, ok := m.RaceGender(tc.text)
		if r != tc.race || g != tc.gender || ok != (tc.race != "") {
			t.Errorf("RaceGender(%q) = %q, %q, %v; want %q, %q", tc.text, r, g, ok, tc.race, tc.gender)
		}
	}
}

// FuzzLevel: any label: no panic; a label Level accepts reads the same
// after LevelWords; suggestions are never empty for the default catalog.
func FuzzLevel(f *testing.F) {
	for _, s := range []string{"Top management", "Skilled technical/junior management/supervisors/foremen",
		"Professionally qualified, experienced specialists and middle management", "x", "", "ss s sss"} {
		f.Add(s)
	}
	m := NewMatcher(nil)
	levels := pipeline.DefaultCatalog().Levels()
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 500 {
			return
		}
		if k, ok := m.Level(text); ok {
			found := false
			for _, l := range levels {
				found = found || l == k
			}
			if !found {
				t.Fatalf("Level(%q) = %q, no level of the catalog", text, k)
			}
		}
		if s := m.SuggestLevel(text); len(s) == 0 {
			t.Fatalf("SuggestLevel(%q) is empty", text)
		}
		if w := LevelWords(text); strings.Contains(w, "  ") {
			t.Fatalf("LevelWords(%q) = %q", text, w)
		}
	})
}

// TestBlackAfrican checks that "Black African" (the Stats SA wording) names
// African, and that "Black" (African, Coloured and Indian together in
// B-BBEE) never does, alone or with a gender.
func TestBlackAfrican(t *testing.T) {
	m := NewMatcher(nil)
	for _, s := range []string{"Black African", "black africans", "BLACK AFRICAN", "Black-African"} {
		if k, ok := m.Race(s); !ok || k != "african" {
			t.Errorf("Race(%q) = %q, %v; want african", s, k, ok)
		}
		if m.IsBlackGroup(s) {
			t.Errorf("IsBlackGroup(%q) = true", s)
		}
	}
	if r, g, ok := m.RaceGender("Black African male"); !ok || r != "african" || g != "male" {
		t.Errorf("RaceGender(Black African male) = %q %q %v", r, g, ok)
	}
	for _, s := range []string{"Black", "BLACK", "Blacks", "Black male", "Female black", "black people"} {
		if _, ok := m.Race(s); ok {
			t.Errorf("Race(%q) read as a race", s)
		}
		if _, _, ok := m.RaceGender(s); ok {
			t.Errorf("RaceGender(%q) read as a race and gender", s)
		}
		if !m.IsBlackGroup(s) {
			t.Errorf("IsBlackGroup(%q) = false", s)
		}
	}
}
