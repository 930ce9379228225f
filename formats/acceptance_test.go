package formats

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/pipeline"
)

// acceptanceDir holds files made by other programs than excelize (openpyxl,
// LibreOffice, hand-written CSV and XLSX packages), generated once by
// testdata/acceptance/make_fixtures.py and make_raw.py and committed.
const acceptanceDir = "../testdata/acceptance"

// TestAcceptanceFixtures reads each fixture and checks the plans, targets
// and counters read and every problem (location and kind); a problem not
// listed fails the test, so "every problem in one pass" is checked too.
func TestAcceptanceFixtures(t *testing.T) {
	const c1 = "number_of_african_male_top_managers"
	const c2 = "number_of_white_female_unskilled_employees"
	cases := []struct {
		file    string
		plans   int
		targets int
		// counters: "plan|year|target type|counter=value", plan is its name or #id.
		counters []string
		// fields: "plan|field=value" for Sector, Company, StartDate, EndDate.
		fields   []string
		problems []sample.Problem
		// suggest: the first suggestions of the problem at a location.
		suggest map[string][]string
	}{
		{file: "op_hidden_then_data.xlsx", plans: 1, targets: 3,
			counters: []string{"Acme plan|1|all_employees|" + c1 + "=10", "Acme plan|1|all_employees|" + c2 + "=3",
				"Acme plan|1|disabled_employees|" + c2 + "=0", "Acme plan|2|all_employees|" + c1 + "=12"},
			fields:   []string{"Acme plan|company=VAT 4012345678", "Acme plan|sector=Manufacturing"},
			problems: []sample.Problem{sample.Warn("sheet Old", `the hidden sheet "Old" holds plan targets and is not read, as hidden sheets never are`)}},
		{file: "op_date1904.xlsx", plans: 1, targets: 2,
			counters: []string{"Mac plan|1|all_employees|" + c1 + "=4", "Mac plan|2|all_employees|" + c1 + "=5"},
			fields:   []string{"Mac plan|start=2026-09-01", "Mac plan|end=2029-08-31"}},
		{file: "op_values.xlsx", plans: 1, targets: 5,
			counters: []string{"Values plan|1|all_employees|" + c1 + "=12", "Values plan|1|all_employees|" + c2 + "=12",
				"Values plan|1|disabled_employees|" + c1 + "=12", "Values plan|1|disabled_employees|" + c2 + "=7"},
			fields: []string{"Values plan|sector=Manufacturing", "Values plan|company=VAT 4012345678, registration 2009/012345/07"},
			problems: []sample.Problem{
				sample.Warn("Targets!O1", "not one eepipe knows"),
				sample.Err("Targets!P1", "not a counter of the catalog"),
				sample.Warn("Targets!G2", "clamp"),
				sample.Err("Targets!M4", "negative"),
				sample.Err("Targets!N4", "not a whole number"),
				sample.Err("Targets!M5", "not a number"),
				sample.Err("Targets!N5", "#DIV/0!"),
				sample.Err("Targets!M6", "no saved result"),
			}},
		{file: "op_identifiers.xlsx", plans: 3, targets: 3,
			fields: []string{"Padded|company=VAT 0412345678, registration 2015/123456/07", "Padded|sector=Construction",
				"Texted|company=VAT 0412345678, registration 2015/123456/07"},
			counters: []string{"Texted|1|all_employees|" + c1 + "=1"},
			problems: []sample.Problem{
				sample.Err("Targets!K4", "2026/28"),
				sample.Err("Targets!H5", "not one of the 18 sector values"),
				sample.Err("Targets!F6", "ambiguous"),
			}},
		{file: "op_dup_conflict.xlsx", plans: 1, targets: 2,
			problems: []sample.Problem{
				sample.Err("Targets!H4", "disagrees"),
				sample.Err("Targets row 5", "appears twice"),
			}},
		{file: "lo_formulas.xlsx", plans: 1, targets: 2,
			counters: []string{"#9|1|all_employees|" + c1 + "=12", "#9|2|all_employees|" + c2 + "=12"},
			problems: []sample.Problem{
				sample.Err("Targets!N2", "#DIV/0!"),
				sample.Err("Targets!O2", "#DIV/0!"),
				sample.Err("Targets!M3", "not a whole number"),
				sample.Err("Targets!O3", "negative"),
			}},
		{file: "bom_semicolon_crlf.csv", plans: 1, targets: 3,
			counters: []string{"#7|1|all_employees|" + c1 + "=5", "#7|2|all_employees|" + c1 + "=6"},
			problems: []sample.Problem{sample.Err("line 5, column 4", "negative")}},
		{file: "tab_multiline.csv", plans: 1, targets: 3,
			counters: []string{"#8|1|all_employees|" + c1 + "=5", "#8|3|all_employees|" + c1 + "=7"},
			// The quoted name holds a line break, which a plan name may
			// not (docs/formats.md "Values"); the lines still count.
			problems: []sample.Problem{sample.Err("line 4, column 4", "not a number"), sample.Err("line 2, column 5", "a control character (U+000A)"),
				sample.Err("line 4, column 5", "a control character (U+000A)"), sample.Err("line 6, column 5", "a control character (U+000A)")}},
		{file: "comma_quoted.csv", plans: 1, targets: 2,
			counters: []string{"Quoted, plan|1|all_employees|" + c1 + "=3"},
			fields:   []string{"Quoted, plan|sector=Agriculture, Forestry & Fishing"},
			problems: []sample.Problem{
				sample.Err("line 3, column 6", "not a whole number"),
				sample.Err("line 4, column 4", "outside the plan"),
			}},
		{file: "op_grid.xlsx", plans: 1, targets: 2,
			counters: []string{"Grid plan|1|all_employees|number_of_african_male_top_managers=3",
				"Grid plan|1|all_employees|number_of_african_female_top_managers=2",
				"Grid plan|1|all_employees|number_of_foreign_female_unskilled_employees=4",
				"Grid plan|1|disabled_employees|number_of_african_male_top_managers=1"},
			fields: []string{"Grid plan|company=VAT 0412345678, registration 2009/012345/07", "Grid plan|start=2026-09-01",
				"Grid plan|end=2029-08-31", "Grid plan|sector=Manufacturing"},
			problems: []sample.Problem{sample.Err("Acme 2026!N18", "not an occupational level")}},
		{file: "op_grid_first_race_misspelt.xlsx", plans: 1, targets: 1,
			counters: []string{"#7|2|all_employees|number_of_coloured_male_top_managers=1",
				"#7|2|all_employees|number_of_foreign_female_top_managers=5"},
			// The misspelt header, and the value under it that is not read.
			problems: []sample.Problem{sample.Err("P!B4", "not a race"), sample.Err("P!B6", "is not read: the header of its column is reported")}},
		{file: "op_grid_first_combined_misspelt.xlsx", plans: 1, targets: 1,
			counters: []string{"#7|2|all_employees|number_of_african_female_top_managers=2",
				"#7|2|all_employees|number_of_coloured_male_top_managers=3"},
			problems: []sample.Problem{sample.Err("P!B4", "not a race and gender"), sample.Err("P!B5", "is not read: the header of its column is reported")}},
		{file: "op_number_formats.xlsx", plans: 1, targets: 3,
			// A counter in a percentage-formatted cell (12 shows 1200%,
			// 0.12 shows 12%) is refused as a percentage, never read as 12.
			counters: []string{"#4711|1|all_employees|" + c1 + "=1200",
				"#4711|3|all_employees|" + c1 + "=1234567"},
			fields: []string{"#4711|company=VAT 4012345678, ID 8001015009087"},
			problems: []sample.Problem{
				sample.Err("Targets!G2", "the cell is formatted as a percentage (it shows 1200%)"),
				sample.Err("Targets!H2", "the cell is formatted as a percentage (it shows 12%)"),
				sample.Err("Targets!F3", "date"),
			}},
		{file: "raw_prefixed_norefs.xlsx", plans: 1, targets: 2,
			counters: []string{"Raw plan|2|all_employees|" + c1 + "=7"},
			fields:   []string{"Raw plan|start=2026-09-01", "Raw plan|end=2029-08-31", "Raw plan|company=VAT 0412345678"},
			problems: []sample.Problem{sample.Err("Targets!F2", "TRUE/FALSE")}},
		{file: "raw_1904_true.xlsx", plans: 1, targets: 1,
			counters: []string{"Mac raw|1|all_employees|" + c1 + "=12"},
			fields:   []string{"Mac raw|start=2026-09-01", "Mac raw|end=2030-08-31"}},
		{file: "lo_template_filled.xlsx", plans: 2, targets: 4,
			counters: []string{"Filled plan|1|all_employees|number_of_african_male_top_managers=3",
				"Filled plan|1|all_employees|number_of_african_female_top_managers=2",
				"Filled plan|1|all_employees|number_of_foreign_female_grand_total_employees=40",
				"Filled plan|1|disabled_employees|number_of_african_male_top_managers=1",
				"Second plan|1|all_employees|number_of_african_male_top_managers=5",
				"Second plan|1|all_employees|number_of_african_female_top_managers=7"},
			fields: []string{"Filled plan|company=VAT 0412345678", "Filled plan|sector=Manufacturing",
				"Filled plan|start=2026-09-01", "Second plan|company=VAT 4098765432"},
			problems: []sample.Problem{sample.Err("Blue!D19", "negative")}},
		{file: "op_grid_merged_labels.xlsx", plans: 1, targets: 1,
			counters: []string{"Merged plan|1|all_employees|number_of_african_male_top_managers=6",
				"Merged plan|1|all_employees|number_of_foreign_female_grand_total_employees=11"},
			fields: []string{"Merged plan|company=VAT 0412345678", "Merged plan|start=2026-09-01",
				"Merged plan|end=2029-08-31", "Merged plan|sector=Education"}},
		{file: "cr_only.csv", plans: 1, targets: 3,
			counters: []string{"#7|1|all_employees|" + c1 + "=5", "#7|2|all_employees|" + c1 + "=6"},
			problems: []sample.Problem{sample.Err("line 4, column 4", "negative")}},
		// Headers with spaces or hyphens for the underscores name the
		// counter; "numberof_..." is a misspelt counter (an error).
		{file: "counter_header_variants.csv", plans: 1, targets: 1,
			counters: []string{"#7|1|all_employees|" + c1 + "=5", "#7|1|all_employees|number_of_white_male_top_managers=6"},
			problems: []sample.Problem{sample.Err("line 1, column 6", "not a counter of the catalog")},
			suggest:  map[string][]string{"line 1, column 6": {"number_of_indian_male_top_managers"}}},
		{file: "mixed_flat_and_grid.xlsx", plans: 1, targets: 1,
			counters: []string{"#7|1|all_employees|" + c1 + "=5"},
			problems: []sample.Problem{sample.Warn("Acme 2026!A14", "grid plan targets, but this workbook is read as a flat table (sheet \"Targets\")")}},
		{file: "empty.xlsx", problems: []sample.Problem{sample.Err("", "empty")}},
		{file: "truncated.xlsx", problems: []sample.Problem{sample.Err("", "damaged or truncated")}},
		{file: "xls_renamed.xlsx", problems: []sample.Problem{sample.Err("", ".xls")}},
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
			for ref, want := range tc.suggest {
				for _, p := range b.Problems {
					if p.Origin.Ref() == ref && (len(p.Suggestions) < len(want) || !slices.Equal(p.Suggestions[:len(want)], want)) {
						t.Errorf("%s: suggestions %q, want first %q", ref, p.Suggestions, want)
					}
				}
			}
		})
	}
}

func findAcceptancePlan(plans []*pipeline.InputPlan, name string) *pipeline.InputPlan {
	for _, p := range plans {
		if p.Name == name || (strings.HasPrefix(name, "#") && fmt.Sprint(p.PlanID) == name[1:]) {
			return p
		}
	}
	return nil
}

func checkAcceptanceCounter(t *testing.T, plans []*pipeline.InputPlan, spec string) {
	t.Helper()
	parts := strings.Split(spec, "|")
	name, value, _ := strings.Cut(parts[3], "=")
	p := findAcceptancePlan(plans, parts[0])
	if p == nil {
		t.Errorf("%s: no plan %q read", spec, parts[0])
		return
	}
	for _, tg := range p.Targets {
		y := tg.YearNumber
		if y == 0 && !p.StartDate.IsZero() {
			y = int(tg.FinancialYear) - int(pipeline.FinancialYearOf(p.StartDate)) + 1
		}
		if fmt.Sprint(y) != parts[1] || tg.TargetType != parts[2] {
			continue
		}
		got, ok := tg.Counters.Map()[name]
		if !ok || fmt.Sprint(got) != value {
			t.Errorf("%s: counter read as %d (set: %v)", spec, got, ok)
		}
		return
	}
	t.Errorf("%s: no target for year %s, %s", spec, parts[1], parts[2])
}

func checkAcceptanceField(t *testing.T, plans []*pipeline.InputPlan, spec string) {
	t.Helper()
	planName, kv, _ := strings.Cut(spec, "|")
	field, want, _ := strings.Cut(kv, "=")
	p := findAcceptancePlan(plans, planName)
	if p == nil {
		t.Errorf("%s: no plan %q read", spec, planName)
		return
	}
	var got string
	switch field {
	case "company":
		got = p.Company.String()
	case "sector":
		got = p.Sector
	case "start":
		got = p.StartDate.String()
	case "end":
		got = p.EndDate.String()
	default:
		t.Fatalf("unknown field %q", field)
	}
	if got != want {
		t.Errorf("%s: got %q", spec, got)
	}
}
