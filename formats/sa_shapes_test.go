package formats

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/sample"
)

// TestSouthAfricanShapes reads the fixtures of testdata/acceptance/make_sa.py
// (openpyxl, XlsxWriter, LibreOffice, an Excel CSV on South African
// settings) and checks the plans and counters read, exactly, and every
// problem by its cell and cause (a problem not listed fails the test).
func TestSouthAfricanShapes(t *testing.T) {
	const c1 = "number_of_african_male_top_managers"
	const c2 = "number_of_white_female_unskilled_employees"
	// The counter of level l, race r, gender g in make_sa.py's grids.
	value := func(l, r, g int) int { return 1 + l + 2*r + g }
	blackErrors := []sample.Problem{sample.Err("Plan!B9", `"Black" is not a race of the counter catalog: in B-BBEE "Black" means African, Coloured and Indian together, so its counters cannot be filed under one race`)}
	for row := 11; row <= 19; row++ {
		for _, col := range "BC" {
			blackErrors = append(blackErrors, sample.Err(fmt.Sprintf("Plan!%c%d", col, row), "is not read: the header of its column is reported"))
		}
	}
	stale := "the cell holds a formula that has no saved result: the workbook asks to be recalculated when it is opened (as files written by XlsxWriter"
	cases := []struct {
		file           string
		plans, targets int
		counters       []string // plan|year|target type|counter=value
		fields         []string // plan|field=value
		problems       []sample.Problem
	}{
		// A hidden check column (text results) and a visible notes column
		// beside the grid: one warning each; a number there is an error.
		{file: "sa_lo_check_column.xlsx", plans: 1, targets: 1,
			counters: []string{"Check column plan|1|all_employees|" + c1 + "=1", fmt.Sprintf("Check column plan|1|all_employees|%s=%d", c2, value(5, 3, 1))},
			problems: []sample.Problem{
				sample.Warn("Plan!M11", `column M, which the sheet hides, has no header and holds text beside the grid ("ok" in 9 cells of rows 11 to 19), so it is read as notes, not counters`),
				sample.Warn("Plan!N12", `column N has no header and holds text beside the grid ("see note" in 2 cells of rows 12 to 14)`),
				sample.Err("Plan!O15", `"7" is in a column this grid does not read: the column has no header;`),
			}},
		// The same template by XlsxWriter: the check column's results are
		// placeholders declared as text; a counter formula has no result.
		{file: "sa_xw_grid.xlsx", plans: 1, targets: 1,
			counters: []string{"XlsxWriter plan|1|all_employees|" + c1 + "=1", fmt.Sprintf("XlsxWriter plan|1|all_employees|%s=%d", c2, value(5, 3, 1))},
			problems: []sample.Problem{
				sample.Warn("Plan!M11", `column M, which the sheet hides, has no header and holds text beside the grid ("ok" in 9 cells of rows 11 to 19)`),
				sample.Err("Plan!B13", stale),
			}},
		// XlsxWriter stores 0 as each formula's result and asks for a
		// recalculation on load: no formula result is read.
		{file: "sa_xw_stale.xlsx", plans: 1, targets: 2,
			counters: []string{"Stale plan|1|all_employees|" + c1 + "=3", "Stale plan|2|all_employees|" + c2 + "=4"},
			problems: []sample.Problem{sample.Err("Targets!H2", stale), sample.Err("Targets!G3", stale)}},
		// The same file after LibreOffice calculated and saved it.
		{file: "sa_lo_stale.xlsx", plans: 1, targets: 2,
			counters: []string{"Stale plan|1|all_employees|" + c1 + "=3", "Stale plan|1|all_employees|" + c2 + "=5",
				"Stale plan|2|all_employees|" + c1 + "=8", "Stale plan|2|all_employees|" + c2 + "=4"}},
		{file: "sa_op_black_african.xlsx", plans: 1, targets: 1,
			counters: []string{"Black African plan|1|all_employees|" + c1 + "=1",
				fmt.Sprintf("Black African plan|1|all_employees|number_of_african_female_senior_managers=%d", value(1, 0, 1)),
				fmt.Sprintf("Black African plan|1|all_employees|number_of_coloured_male_top_managers=%d", value(0, 1, 0))}},
		{file: "sa_op_black.xlsx", plans: 1, targets: 1,
			counters: []string{fmt.Sprintf("Black plan|1|all_employees|number_of_coloured_male_top_managers=%d", value(0, 1, 0))},
			problems: blackErrors},
		// yyyy/mm/dd and written-out dates, titles with date ranges, a
		// qualifier and FY2028, grouped thousands, a counter "12 " typed
		// as text under a Total that disagrees.
		{file: "sa_op_forms.xlsx", plans: 1, targets: 4,
			counters: []string{
				"SA forms plan|1|all_employees|" + c1 + "=1234",
				"SA forms plan|1|all_employees|number_of_african_female_top_managers=1234",
				"SA forms plan|1|all_employees|number_of_coloured_male_top_managers=2345",
				"SA forms plan|1|all_employees|number_of_coloured_female_top_managers=12000",
				"SA forms plan|1|disabled_employees|number_of_african_male_senior_managers=12",
				"SA forms plan|2|all_employees|" + c1 + "=1",
				fmt.Sprintf("SA forms plan|2|disabled_employees|%s=%d", c2, value(5, 3, 1)),
			},
			fields: []string{"SA forms plan|start=2026-09-01", "SA forms plan|end=2029-08-31"},
			problems: []sample.Problem{
				sample.Warn("SA plan!L11", "the Total column says 55, but the 10 counters of this row add up to 16858"),
				sample.Warn("SA plan!B17", "is 21, but the six occupational levels for african male add up to 1254"),
				sample.Warn("SA plan!C17", "is 27, but the six occupational levels for african female add up to 1259"),
				sample.Warn("SA plan!D17", "is 33, but the six occupational levels for coloured male add up to 2375"),
				sample.Warn("SA plan!E17", "is 39, but the six occupational levels for coloured female add up to 12035"),
				sample.Warn("SA plan!B26", "for disabled_employees (12) is above the same counter for all_employees (2"),
				sample.Warn("SA plan!L26", "the Total column says 65, but the 10 counters of this row add up to 75"),
				sample.Warn("SA plan!B31", "is 21, but the six occupational levels for african male add up to 31"),
			}},
		// Excel on South African settings: BOM, CRLF, ';', no-break-space
		// grouping, yyyy/mm/dd; "1,234" is ambiguous, "1 234,5" fractional.
		{file: "sa_excel.csv", plans: 3, targets: 5,
			counters: []string{"SA CSV plan|1|all_employees|" + c1 + "=1234", "SA CSV plan|1|all_employees|" + c2 + "=7",
				"Written plan|1|all_employees|" + c1 + "=5", "Short plan|1|all_employees|" + c2 + "=6"},
			fields: []string{"SA CSV plan|start=2026-09-01", "SA CSV plan|end=2029-08-31",
				"Written plan|start=2026-09-01", "Written plan|end=2029-08-31",
				"Short plan|start=2026-09-01", "Short plan|end=2029-08-31"},
			problems: []sample.Problem{
				sample.Err("line 3, column 7", `"1,234" is ambiguous: with a comma grouping thousands it is 1234, with the decimal comma of South African settings it is 1.234`),
				sample.Err("line 4, column 7", `is not a whole number (the comma is a decimal comma)`),
			}},
		{file: "sa_xw_table_totals.xlsx", plans: 1, targets: 3,
			counters: []string{"Table plan|3|all_employees|" + c1 + "=6", "Table plan|3|all_employees|" + c2 + "=6"},
			problems: []sample.Problem{sample.Warn("Targets row 5", `row 5 is the Total Row of the Excel table "Table1" (A1:H5), not a plan row, so it is not read`)}},
		{file: "sa_op_table_totals.xlsx", plans: 1, targets: 3,
			counters: []string{"Table plan|1|all_employees|" + c1 + "=4", "Table plan|2|all_employees|" + c2 + "=4"},
			problems: []sample.Problem{sample.Warn("Targets row 5", `row 5 is the Total Row of the Excel table "Table1" (A1:H5), not a plan row, so it is not read`)}},
		{file: "sa_op_hidden_only.xlsx",
			problems: []sample.Problem{sample.Err("", `the plans of this workbook are on hidden sheets ("Plan 2026"), and hidden sheets are never read: unhide the sheet that holds the plans to apply (in Excel right-click a sheet tab and choose Unhide; in LibreOffice choose Sheet > Show Sheet)`)}},
		{file: "sa_op_hidden_versions.xlsx", plans: 1, targets: 1,
			counters: []string{"Current plan|1|all_employees|" + c1 + "=1"},
			problems: []sample.Problem{sample.Warn("", `the hidden sheets "Plan v1", "Plan v2" hold plan targets and are not read, as hidden sheets never are`)}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			b, err := ReadFiles([]string{filepath.Join(acceptanceDir, tc.file)}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			targets := 0
			for _, p := range b.Plans {
				targets += len(p.Targets)
			}
			if len(b.Plans) != tc.plans || targets != tc.targets {
				t.Errorf("read %d plans, %d targets; want %d, %d", len(b.Plans), targets, tc.plans, tc.targets)
			}
			for _, want := range tc.counters {
				checkAcceptanceCounter(t, b.Plans, want)
			}
			for _, want := range tc.fields {
				checkAcceptanceField(t, b.Plans, want)
			}
			sample.CheckProblems(t, b.Problems, tc.problems)
		})
	}
}
