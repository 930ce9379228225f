package templates

import (
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestTitleTargetType: a title names people with disabilities as its
// subject, or counts them in with everyone (EEA13), or is unclear.
func TestTitleTargetType(t *testing.T) {
	const all, dis, unclear, none = pipeline.TargetAll, pipeline.TargetDisabled, "unclear", ""
	for _, tc := range []struct{ text, want string }{
		{"Year 1 — 2026/27 — All employees", all},
		{"Year 1 — 2026/27 — All employees, including people with disabilities", all},
		{"all employees, including people with disabilities", all},
		{"All employees (incl. people with disabilities)", all},
		{"All employees incl. PWD", all},
		{"Total workforce including disabled employees", all},
		{"All employees including persons with a disability", all},
		{"Year 2 all", all},
		{"Employees with disabilities", dis},
		{"Disabled employees", dis},
		{"People with disabilities", dis},
		{"Persons with disabilities", dis},
		{"PWD", dis},
		{"Year 2 - Disabled", dis},
		{"All employees with disabilities", dis},
		{"Employees with disabilities, year 4", dis},
		{"Employees with disabilities (all levels)", dis},
		{"Disabled employees, all races", dis},
		{"All employees, all levels", all},
		{"All employees and employees with disabilities", unclear},
		{"All employees / Employees with disabilities", unclear},
		{"All employees excluding people with disabilities", unclear},
		{"Employees without disabilities", unclear},
		{"Non-disabled employees", unclear},
		{"Employees with disabilities, including people with disabilities", unclear},
		{"Employees by level", none},
	} {
		tt, isUnclear, ok := TitleTargetType(tc.text)
		got := tt
		if isUnclear {
			got = unclear
		}
		if !ok {
			got = none
		}
		if got != tc.want || (ok && !isUnclear && tt == "") {
			t.Errorf("TitleTargetType(%q) = %q, unclear %v, ok %v; want %q", tc.text, tt, isUnclear, ok, tc.want)
		}
	}
}

// TestGridLabelReadsBack: every grid label the writer puts on a sheet, and
// the words of each target type in a sentence, read back by
// TitleTargetType as their target type: writer and reader share one
// vocabulary.
func TestGridLabelReadsBack(t *testing.T) {
	for _, tt := range pipeline.TargetTypes {
		for _, text := range []string{GridLabel(1, 2026, tt), GridLabel(3, 0, tt), GridLabel(0, 2030, tt), TargetTypeLabel(tt), TargetTypeWords(tt)} {
			if got, unclear, ok := TitleTargetType(text); got != tt || unclear || !ok {
				t.Errorf("TitleTargetType(%q) = %q, unclear %v, ok %v; want %q", text, got, unclear, ok, tt)
			}
		}
	}
	if got := TargetTypeWords(pipeline.TargetDisabled); got != "employees with disabilities" {
		t.Errorf("TargetTypeWords(disabled) = %q", got)
	}
}
