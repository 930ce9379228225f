package templates

import "testing"

func TestRefusedRowLabels(t *testing.T) {
	for _, in := range []string{"Legislators, senior officials and managers", "Legislators, Senior Officials & Managers", "Professionals", "Clerks",
		"3. Technicians and associate professionals", "Elementary occupations", "Craft and related trades workers"} {
		if !IsOccupationalCategory(in) {
			t.Errorf("%q: not a category", in)
		}
		if _, ok := NewMatcher(nil).Level(in); ok {
			t.Errorf("%q: read as a level", in)
		}
	}
	for _, in := range []string{"Top management", "Senior management", "Professionally qualified"} {
		if IsOccupationalCategory(in) {
			t.Errorf("%q: read as a category", in)
		}
	}
	for _, in := range []string{"F", "E", "D Upper", "d lower", "C3", "C-3", "B1", "P10", "Grade 12", "Band D", "Paterson F"} {
		if !IsJobGrade(in) {
			t.Errorf("%q: not a job grade", in)
		}
	}
	for _, in := range []string{"12", "Top", "Senior", "Grand total", "Female", "G", ""} {
		if IsJobGrade(in) {
			t.Errorf("%q: read as a job grade", in)
		}
	}
	if !IsLevelColumnName("Occupational level") || !IsLevelColumnName("occupational_levels") || IsLevelColumnName("Top management") {
		t.Error("IsLevelColumnName")
	}
}
