package grid

import "testing"

// TestGridLabelVariants covers grid labels as consultants type them in
// their own workbooks (other dashes, FY prefixes, short year words).
func TestGridLabelVariants(t *testing.T) {
	for _, tc := range []struct {
		text string
		ok   bool
		year int
		fy   string
		tt   string
	}{
		{"Year 1 – 2026/27 – All Employees", true, 1, "2026/27", "all_employees"},
		{"YEAR 2: 2027/28 - DISABLED EMPLOYEES", true, 2, "2027/28", "disabled_employees"},
		{"FY2026/27 All employees", true, 0, "2026/27", "all_employees"},
		{"fy 2026-27 employees with disabilities", true, 0, "2026/27", "disabled_employees"},
		{"Yr 3 All employees", true, 3, "", "all_employees"},
		{"Y1 all employees", true, 1, "", "all_employees"},
		{"Employees with disabilities, year 4", true, 4, "", "disabled_employees"},
		{"Employees by 2 levels", false, 0, "", ""},
		{"All employees", false, 0, "", ""},
	} {
		g, ok := parseGridLabel(tc.text)
		if ok != tc.ok || (ok && (g.yearNumber != tc.year || g.fy != tc.fy || g.targetType != tc.tt)) {
			t.Errorf("parseGridLabel(%q) = %+v, %v; want year %d, fy %q, %s, %v", tc.text, g, ok, tc.year, tc.fy, tc.tt, tc.ok)
		}
	}
}
