package formats

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// sectorCounters returns every default counter at zero, then set (keys
// without the number_of_ prefix).
func sectorCounters(t *testing.T, set map[string]int64) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, n := range pipeline.DefaultCatalog().Names() {
		m[n] = 0
	}
	for k, v := range set {
		if !pipeline.DefaultCatalog().Has(pipeline.CounterPrefix + k) {
			t.Fatalf("unknown counter %s", k)
		}
		m[pipeline.CounterPrefix+k] = v
	}
	return m
}

// sectorTestReport is a hand-made report: a Manufacturing plan short in
// its first year and meeting the targets in its final year, a plan with no
// sector, and an Education plan short in its final year with a blank
// counter at one level.
func sectorTestReport(t *testing.T) *sector.SectorCheckReport {
	t.Helper()
	// Manufacturing: top 24.1/25.0, senior 32.4/33.6, middle 40.4/37.7, junior 49.8/39.6.
	year1 := sectorCounters(t, map[string]int64{
		"african_male_top_managers": 1, "white_male_top_managers": 3, // 25% male designated, 0% female: short
		"african_male_senior_managers": 4, "african_female_senior_managers": 4, "white_male_senior_managers": 2,
		"indian_male_middle_managers": 9, "coloured_female_middle_managers": 8, "foreign_male_middle_managers": 3,
		"african_male_junior_managers": 50, "white_female_junior_managers": 40, "white_male_junior_managers": 10,
		"african_male_semi_skilled_employees": 400, "african_female_unskilled_employees": 300,
	})
	year2 := sectorCounters(t, map[string]int64{
		"african_male_top_managers": 1, "white_female_top_managers": 1, "white_male_top_managers": 2,
		"african_male_senior_managers": 4, "african_female_senior_managers": 4, "white_male_senior_managers": 2,
		"indian_male_middle_managers": 9, "coloured_female_middle_managers": 8, "foreign_male_middle_managers": 3,
		"african_male_junior_managers": 50, "white_female_junior_managers": 40, "white_male_junior_managers": 10,
		"african_male_semi_skilled_employees": 400, "african_female_unskilled_employees": 300,
	})
	dis := sectorCounters(t, map[string]int64{"african_male_semi_skilled_employees": 30})
	manufacturing := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "plans.xlsx"},
		PlanID: 12, Name: "Acme 2025-2027", Sector: "Manufacturing",
		Company:   pipeline.CompanyIDs{VAT: "4012345678"},
		StartDate: date("2025-09-01"), EndDate: date("2027-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year1)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
			{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year2)},
			{YearNumber: 2, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
		},
	}
	noSector := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "plans.xlsx"}, Name: "No sector",
		StartDate: date("2025-09-01"), EndDate: date("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year1)}},
	}
	blank := sectorCounters(t, map[string]int64{"african_male_junior_managers": 10, "white_male_junior_managers": 10})
	delete(blank, "number_of_indian_female_top_managers")
	education := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "more.csv"}, Name: "Blue Crane", Sector: "Education",
		StartDate: date("2026-09-01"), EndDate: date("2027-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(blank)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(sectorCounters(t, nil))},
		},
	}
	return sector.CheckSector([]*pipeline.InputPlan{manufacturing, noSector, education}, nil, sector.DefaultSectorTargets())
}

func TestSectorReportModel(t *testing.T) {
	r := sectorTestReport(t)
	if got := r.Summary(); got != (sector.SectorSummary{Plans: 3, Met: 1, Short: 1, NotAssessable: 1}) {
		t.Fatalf("summary %+v", got)
	}
}

func TestWriteSectorJSONGolden(t *testing.T) {
	var b bytes.Buffer
	if err := reports.WriteSectorJSON(&b, sectorTestReport(t)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sector", "report.json")
	if sectorUpdating() {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestWriteSectorJSONGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("JSON differs from %s (rerun with -update if the change is intended):\n%s", golden, b.String())
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["notice"] != sector.SectorNotice || back["targets_source"] != sector.EmbeddedSectorTargetsSource ||
		!strings.Contains(back["caveat"].(string), "checked against the gazette") {
		t.Fatalf("provenance missing: %v %v %v", back["notice"], back["targets_source"], back["caveat"])
	}
}

// The -update flag is shared with the package's other golden tests,
// whichever file defines it first.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata")
	}
	return true
}()

func sectorUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestWriteSectorCSV(t *testing.T) {
	var b bytes.Buffer
	if err := reports.WriteSectorCSV(&b, sectorTestReport(t)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(sectorCSVHeader, ",") {
		t.Fatalf("header %v", rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	// Plan 12: 2 years x (4 levels x 2 + 1); no-sector plan: 1 row; Education: 1 year x 9.
	if got := len(rows) - 1; got != 18+1+9 {
		t.Fatalf("%d rows", got)
	}
	find := func(plan, year, level, measure string) []string {
		for _, r := range rows[1:] {
			if r[col["plan_name"]] == plan && r[col["year_number"]] == year && r[col["level"]] == level && r[col["measure"]] == measure {
				return r
			}
		}
		t.Fatalf("no row %s %s %s %s", plan, year, level, measure)
		return nil
	}
	r := find("Acme 2025-2027", "1", "top_managers", "designated_female")
	if r[col["status"]] != "short" || r[col["headcount"]] != "4" || r[col["count"]] != "0" || r[col["target_pct"]] != "25" ||
		r[col["short_people"]] != "1" || r[col["short_points"]] != "25.00" || r[col["final_year"]] != "false" {
		t.Fatalf("row %v", r)
	}
	r = find("Acme 2025-2027", "2", "top_managers", "designated_female")
	if r[col["status"]] != "met" || r[col["actual_pct"]] != "25.00" || r[col["final_year"]] != "true" || r[col["financial_year"]] != "2026/27" {
		t.Fatalf("row %v", r)
	}
	r = find("Acme 2025-2027", "2", "all_levels", "disabled")
	if r[col["status"]] != "met" || r[col["headcount"]] != "834" || r[col["count"]] != "30" || r[col["target_pct"]] != "3" {
		t.Fatalf("row %v", r)
	}
	r = find("No sector", "", "", "")
	if r[col["status"]] != "not_assessable" || !strings.Contains(r[col["reason"]], "no sector") {
		t.Fatalf("row %v", r)
	}
	r = find("Blue Crane", "1", "top_managers", "designated_male")
	if r[col["status"]] != "not_assessable" || !strings.Contains(r[col["reason"]], "number_of_indian_female_top_managers") || r[col["target_pct"]] != "27.6" {
		t.Fatalf("row %v", r)
	}
	for _, r := range rows[1:] {
		if !strings.Contains(r[col["targets_notice"]], sector.SectorNotice) || !strings.Contains(r[col["targets_notice"]], "gazette") ||
			r[col["targets_file"]] != sector.EmbeddedSectorTargetsSource {
			t.Fatalf("provenance %v", r)
		}
	}
}

func TestWriteSectorText(t *testing.T) {
	var b bytes.Buffer
	if err := reports.WriteSectorText(&b, sectorTestReport(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`Plan 12 "Acme 2025-2027" | Manufacturing | 2025-09-01 to 2027-08-31 | company VAT 4012345678 | plans.xlsx`,
		`Plan "Blue Crane" | Education | 2026-09-01 to 2027-08-31 | more.csv`,
		"25.0% (24.1%)             25.0% (25.0%)",
		"Final year 2026/27: MEETS every target (5 figures measured).",
		"2025/26        top management     4",
		"SHORT: female -25.0 pts, 1 person",
		"2026/27 final",
		"NOTHING COULD BE ASSESSED: the plan has no sector",
		"FALLS SHORT",
		"left blank (unknown): number_of_indian_female_top_managers",
		"3 plans: 1 meets every final-year target, 1 falls short, 0 meet only the targets that could be assessed, 1 could not be assessed at all.",
		sector.SectorNotice, sector.EmbeddedSectorTargetsSource, "checked against the gazette",
		"30 = 3.6% (3.0%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestWriteSectorXLSX(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.xlsx")
	r := sectorTestReport(t)
	if err := reports.WriteSectorReport(path, r); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 2 || got[0] != reports.CheckPrintSheet || got[1] != reports.SectorSheetName {
		t.Fatalf("sheets %v", got)
	}
	rows, err := f.GetRows(reports.SectorSheetName)
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Join(rows[1], " ") + strings.Join(rows[2], " ")
	if !strings.Contains(note, sector.SectorNotice) || !strings.Contains(note, sector.EmbeddedSectorTargetsSource) || !strings.Contains(note, "checked against the gazette") {
		t.Fatalf("sheet note %q", note)
	}
	if strings.Join(rows[4][:24], "|") != strings.Join(sectorSheetHeader, "|") {
		t.Fatalf("header %v", rows[4])
	}
	// Data rows: plan 12: 2 years x 5 rows; no sector: 1; Education: 5.
	data := 0
	var short, met []string
	for _, row := range rows[5:] {
		if len(row) < 18 || row[0] == "" {
			continue
		}
		data++
		if row[17] == "short" {
			short = append(short, row[1]+" "+row[3])
		}
		if row[17] == "met" {
			met = append(met, row[1]+" "+row[3])
		}
	}
	if data != 16 {
		t.Fatalf("%d data rows", data)
	}
	if strings.Join(short, ",") != "1 top management,1 junior management" {
		t.Fatalf("short rows %v", short)
	}
	if len(met) != 9 {
		t.Fatalf("met rows %v", met)
	}
	// Values: plan 12 year 1 top management female: 0% of 25% target, 25 points, 1 person.
	for cell, want := range map[string]string{"E6": "4", "J6": "0.0", "K6": "25.0", "L6": "25.00", "M6": "1", "F6": "25.0", "I6": "0", "T10": "", "T11": "yes"} {
		if got, _ := f.GetCellValue(reports.SectorSheetName, cell); got != want {
			t.Errorf("%s = %q, want %q", cell, got, want)
		}
	}
	cf, err := f.GetConditionalFormats(reports.SectorSheetName)
	if err != nil {
		t.Fatal(err)
	}
	if got := cf["R6:R21"]; len(got) != 2 || got[0].Type != "formula" || !strings.Contains(got[0].Criteria, `"met"`) {
		t.Fatalf("conditional formats %+v", cf)
	}
	for _, rng := range []string{"F6:F21", "J6:J21", "N6:N21"} {
		if len(cf[rng]) != 2 {
			t.Fatalf("no conditional format on %s: %+v", rng, cf)
		}
	}
	// One chart per plan with a sector.
	if n := countCharts(t, path); n != 2 {
		t.Fatalf("%d charts, want 2", n)
	}
	// The chart data of plan 12: top management designated female per year and its target.
	for cell, want := range map[string]string{"AA7": "Level and group", "AB7": "2025/26", "AC7": "2026/27", "AD7": "Target",
		"AA9": "top management: designated female", "AB9": "0", "AC9": "25", "AD9": "25"} {
		if got, _ := f.GetCellValue(reports.SectorSheetName, cell); got != want {
			t.Errorf("%s = %q, want %q", cell, got, want)
		}
	}
}

func countCharts(t *testing.T, path string) int {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	n := 0
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "xl/charts/chart") && strings.HasSuffix(f.Name, ".xml") {
			n++
		}
	}
	return n
}

func TestAddSectorSheetToExistingWorkbook(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	if _, err := f.NewSheet("Targets"); err != nil {
		t.Fatal(err)
	}
	r := sectorTestReport(t)
	if err := reports.AddSectorSheet(f, r.Plans, "corrected.csv"); err != nil {
		t.Fatal(err)
	}
	if err := reports.AddSectorSheet(f, r.Plans, "corrected.csv"); err == nil {
		t.Fatal("a second Sector targets sheet was added")
	}
	v, _ := f.GetCellValue(reports.SectorSheetName, "A2")
	if !strings.Contains(v, "corrected.csv") {
		t.Fatalf("A2 %q", v)
	}
	path := filepath.Join(t.TempDir(), "export.xlsx")
	if err := xlsx.WriteWorkbook(path, f); err != nil {
		t.Fatal(err)
	}
	if n := countCharts(t, path); n != 2 {
		t.Fatalf("%d charts", n)
	}
}

func TestWriteSectorReportBadExtension(t *testing.T) {
	err := reports.WriteSectorReport(filepath.Join(t.TempDir(), "r.txt"), sectorTestReport(t))
	if err == nil || !strings.Contains(err.Error(), ".json, .csv or .xlsx") {
		t.Fatal(err)
	}
}

// TestWriteSectorTextPartlyAssessedSingular: a final year with one
// assessed figure says "the one that could is met", never "the 1 that
// could are met"; several say "the 3 that could are met".
func TestWriteSectorTextPartlyAssessedSingular(t *testing.T) {
	for _, tc := range []struct {
		assessed, not int
		want          string
	}{
		{1, 4, "NOT FULLY ASSESSED: 4 of 5 figures could not be assessed (see the reasons below); the one that could is met.\n"},
		{3, 1, "NOT FULLY ASSESSED: 1 of 4 figures could not be assessed (see the reasons below); the 3 that could are met.\n"},
	} {
		r := &sector.SectorCheckReport{Plans: []sector.SectorPlanCheck{{
			Status: sector.SectorPartlyMet, Assessed: tc.assessed, NotAssessed: tc.not,
			Years: []sector.SectorYearCheck{{YearNumber: 1, FinancialYear: pipeline.FinancialYear(2025), Final: true}},
		}}}
		var b strings.Builder
		if err := reports.WriteSectorText(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%d assessed, %d not: want %q in\n%s", tc.assessed, tc.not, tc.want, b.String())
		}
	}
}

// sectorCSVHeader is the sector check CSV's header, as users' tools read
// it.
var sectorCSVHeader = []string{
	"source", "account", "plan_id", "plan_name", "company_vat_number", "company_registration_number", "company_id_number",
	"sector", "year_number", "financial_year", "final_year", "level", "measure", "status",
	"headcount", "count", "actual_pct", "target_pct", "short_points", "short_people", "reason",
	"targets_notice", "targets_file",
}

// sectorSheetHeader is the header of the Sector targets sheet's table.
var sectorSheetHeader = []string{
	"Plan", "Year", "Financial year", "Level", "Headcount",
	"Designated male %", "Male target %", "Male gap (points)", "Male short (people)",
	"Designated female %", "Female target %", "Female gap (points)", "Female short (people)",
	"With disabilities %", "Disability target %", "Disability gap (points)", "Disability short (people)",
	"Result", "Reason / note", "Final year", "Plan ID", "Account / file", "Company", "Sector",
}
