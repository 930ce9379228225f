package grid

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestGridLabels: label spellings the reader accepts, and the ones it does not.
func TestGridLabels(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
		year int
		fy   string
		tt   string
	}{
		{"Year 1 — 2026/27 — All employees", true, 1, "2026/27", pipeline.TargetAll},
		{"year 2 - 2027/2028 - employees with disabilities", true, 2, "2027/2028", pipeline.TargetDisabled},
		{"YEAR3 ALL EMPLOYEES", true, 3, "", pipeline.TargetAll},
		{"2026-27 disabled_employees", true, 0, "2026/27", pipeline.TargetDisabled},
		{"Year no. 4: all_employees", true, 4, "", pipeline.TargetAll},
		{"Year 1", false, 0, "", ""},
		{"All employees", false, 0, "", ""},
		{"Financial year 2026 all employees", false, 0, "", ""},
		{"Plan name", false, 0, "", ""},
	}
	for _, tc := range tests {
		g, ok := parseGridLabel(tc.text)
		if ok != tc.ok || (ok && (g.yearNumber != tc.year || g.fy != tc.fy || g.targetType != tc.tt)) {
			t.Errorf("parseGridLabel(%q) = %+v, %v", tc.text, g, ok)
		}
	}
}

// TestGridTitleDates checks how grid titles give their financial year:
// written out, as FY and the year it ends in, or as the dates of the year,
// and the error when the dates do not give one.
func TestGridTitleDates(t *testing.T) {
	tests := []struct {
		title, fy, tt string
		year          int
		rangeErr      string
	}{
		{"Year 1 (01/09/2026 – 31/08/2027): all employees", "2026/27", pipeline.TargetAll, 1, ""},
		{"Year 2 (2027-09-01 to 2028-08-31) Employees with disabilities", "2027/28", pipeline.TargetDisabled, 2, ""},
		{"Year 1 (1 September 2026 - 31 August 2027) All employees", "2026/27", pipeline.TargetAll, 1, ""},
		{"Year 1 (01/10/2026 – 31/08/2027): all employees", "2026/27", pipeline.TargetAll, 1, ""},
		{"FY2028 All employees", "FY2028", pipeline.TargetAll, 0, ""},
		{"FY2027/28 All employees", "2027/28", pipeline.TargetAll, 0, ""},
		{"Employees with disabilities (all sites) - Year 3", "", pipeline.TargetDisabled, 3, ""},
		{"All employees, all branches - Year 2", "", pipeline.TargetAll, 2, ""},
		{"Year 1 (01/09/2026 – 31/08/2028): all employees", "", pipeline.TargetAll, 1, "not within one financial year"},
		{"Year 1 (01/09/2026 – 01/08/2027): all employees", "2026/27", pipeline.TargetAll, 1, ""}, // month/day spans two years
		{"Year 1 (10/01/2026 – 12/08/2026): all employees", "", pipeline.TargetAll, 1, "ambiguous: read day/month they are in 2025/26, read month/day in 2026/27"},
		{"Year 1 2027/28 (01/09/2026 – 31/08/2027): all employees", "", pipeline.TargetAll, 1, "names the financial year 2027/28, but its dates are in 2026/27"},
	}
	for _, tt := range tests {
		g, ok := parseGridLabel(tt.title)
		if !ok {
			t.Errorf("%q: not a label", tt.title)
			continue
		}
		if tt.rangeErr != "" {
			if !strings.Contains(g.rangeErr, tt.rangeErr) {
				t.Errorf("%q: range error %q, want %q", tt.title, g.rangeErr, tt.rangeErr)
			}
			continue
		}
		if g.fy != tt.fy || g.targetType != tt.tt || g.yearNumber != tt.year || g.unclear || g.rangeErr != "" {
			t.Errorf("%q: read %+v, want fy %q, %s, year %d", tt.title, g, tt.fy, tt.tt, tt.year)
		}
	}
}
