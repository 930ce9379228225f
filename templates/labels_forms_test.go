package templates

import "testing"

// TestFormsVocabulary: the words of the forms (EEA2, EEA4, EEA9, EEA13),
// the gazette and HR systems read as their keys, exactly.
func TestFormsVocabulary(t *testing.T) {
	m := NewMatcher(nil)
	for in, want := range map[string]string{
		"Top Management/ Executives":  "top_managers",
		"Top management / executives": "top_managers",
		"1. Top management":           "top_managers",
		"2) Senior management":        "senior_managers",
		"a) Professionally qualified and experienced specialists and mid-management": "middle_managers",
		"(b) Skilled technical":                     "junior_managers",
		"iv. Semi-skilled":                          "semi_skilled_employees",
		"Top management (1)":                        "top_managers",
		"Unskilled and defined decision making [2]": "unskilled_employees",
		"5 Unskilled":                               "unskilled_employees",
		"TOTAL PERMANENT (3)":                       "total_permanent_employees",
	} {
		if got, ok := m.Level(in); !ok || got != want {
			t.Errorf("Level(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"(1)", "1.", "Legislators, senior officials and managers", "Professionals", "Clerks", "F", "D Upper", "C3"} {
		if got, ok := m.Level(in); ok {
			t.Errorf("Level(%q) = %q, want none", in, got)
		}
	}
	for in, want := range map[string]string{"Indian/Asian": "indian", "Asian": "indian", "Asian/Indian": "indian", "Indian (1)": "indian", "Foreign nationals (2)": "foreign"} {
		if got, ok := m.Race(in); !ok || got != want {
			t.Errorf("Race(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string][2]string{
		"MA": {"african", "male"}, "MC": {"coloured", "male"}, "MI": {"indian", "male"}, "MW": {"white", "male"},
		"FA": {"african", "female"}, "FC": {"coloured", "female"}, "FI": {"indian", "female"}, "FW": {"white", "female"},
		"FNM": {"foreign", "male"}, "FNF": {"foreign", "female"}, "AM": {"african", "male"}, "WF": {"white", "female"},
		"Asian male": {"indian", "male"}, "African female (1)": {"african", "female"},
	} {
		r, g, ok := m.RaceGender(in)
		if !ok || r != want[0] || g != want[1] {
			t.Errorf("RaceGender(%q) = %q, %q, %v; want %v", in, r, g, ok, want)
		}
	}
	for _, in := range []string{"FN", "MF", "AW", "FNX", "ABC", "MAM"} {
		if r, g, ok := m.RaceGender(in); ok {
			t.Errorf("RaceGender(%q) = %q, %q; want none", in, r, g)
		}
	}
}

// TestTaught: a taught spelling reads where its kind is read, and the
// matcher NewMatcher hands out learns nothing.
func TestTaught(t *testing.T) {
	m := NewMatcher(nil).Taught(Spellings{
		Levels: map[string]string{"Exco": "top_managers", "F": "top_managers", "Band D": "middle_managers"},
		Races:  map[string]string{"Asian (incl. Indian)": "indian"},
	})
	for in, want := range map[string]string{"EXCO": "top_managers", "f": "top_managers", "band-d": "middle_managers", "The Exco": "top_managers"} {
		if got, ok := m.Level(in); !ok || got != want {
			t.Errorf("taught Level(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if g, ok := m.Gender("F"); !ok || g != "female" {
		t.Errorf("a level spelling F changed the gender F: %q, %v", g, ok)
	}
	if r, g, ok := m.RaceGender("Asian (incl. Indian) female"); !ok || r != "indian" || g != "female" {
		t.Errorf("taught race with a gender: %q %q %v", r, g, ok)
	}
	if _, ok := NewMatcher(nil).Level("Exco"); ok {
		t.Error("the shared matcher learnt a taught spelling")
	}
}

// FuzzMatcher reads arbitrary labels: never a panic; a level read from a
// numbered label is the level its bare text reads as; a combined code is
// a race and a gender of the catalog.
func FuzzMatcher(f *testing.F) {
	for _, s := range []string{"1. Top management", "a) Senior", "Top management (1)", "FNM", "MA", "Indian/Asian", "(1)", "4.1 ", "iv. Unskilled*", "¹"} {
		f.Add(s)
	}
	m := NewMatcher(nil)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 200 {
			return
		}
		if bare := Unnumbered(text); bare != text {
			if k, ok := m.Level(bare); ok {
				if got, ok2 := m.Level(text); !ok2 || got != k {
					t.Fatalf("%q reads %q, %v; its bare text %q reads %q", text, got, ok2, bare, k)
				}
			}
		}
		if r, g, ok := m.RaceGender(text); ok && (r == "" || g == "") {
			t.Fatalf("%q: race %q gender %q", text, r, g)
		}
		IsJobGrade(text)
		IsOccupationalCategory(text)
	})
}
