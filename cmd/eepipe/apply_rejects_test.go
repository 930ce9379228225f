package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/pipeline/run"
)

// errorTexts reads files as apply does and returns their errors' messages
// (with the column's header and the value), sorted: what a fix must
// address, wherever the cells are.
func errorTexts(t *testing.T, files ...string) []string {
	t.Helper()
	b, err := formats.ReadFiles(files, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return problemTexts(b.Problems)
}

func problemTexts(ps pipeline.Problems) []string {
	var out []string
	for _, p := range ps {
		if p.Severity == pipeline.Error {
			out = append(out, p.Origin.Header+" | "+p.Value+" | "+p.Message)
		}
	}
	slices.Sort(out)
	return out
}

// rejectsOf returns the errors of the plans --skip-invalid sets aside from
// files.
func rejectsOf(t *testing.T, files ...string) []string {
	t.Helper()
	b, err := formats.ReadFiles(files, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, rej := assemble.SplitInvalid(b)
	return problemTexts(rej.Problems)
}

// runReportSummary reads the summary of a JSON run report.
func runReportSummary(t *testing.T, path string) run.RunSummary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary run.RunSummary `json:"summary"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Summary
}

// threePlans are three single-account plans; the second gets a bad cell.
func threePlans() []row {
	var rows []row
	for _, n := range []string{"Skip One", "Skip Two", "Skip Three"} {
		for y := 1; y <= 2; y++ {
			rows = append(rows, row{vat: vatAcme, name: n, start: "2025-09-01", end: "2030-08-31", year: y, typ: pipeline.TargetAll,
				counters: counters(cAMT, y, cWFS, 2)})
		}
	}
	return rows
}

// TestApplySkipInvalidCSV: apply --skip-invalid sends the valid plans of a
// CSV file and none of the plan with an error; the rejects CSV holds that
// plan's rows (and only them) with the errors in eepipe_errors, and reads
// back with the same errors; the summaries count both sides; exit 1.
// Without the flag nothing is sent (exit 2).
func TestApplySkipInvalidCSV(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "plans.csv"), threePlans())
	b, _ := os.ReadFile(file)
	lines := strings.Split(string(b), "\n")
	lines[4] = strings.Replace(lines[4], "all_employees,2,2", "all_employees,-1,2", 1) // Skip Two, year 2: a negative counter
	writeFile(t, file, strings.Join(lines, "\n"), 0o644)

	if r := e.run("apply", file); r.code != ExitInvalid || len(e.srv.Sandbox.Plans("acme")) != 0 {
		t.Fatalf("without --skip-invalid: exit %d, %d plans\n%s", r.code, len(e.srv.Sandbox.Plans("acme")), r.err)
	}
	rejects, report := filepath.Join(e.dir, "out", "rejects.csv"), filepath.Join(e.dir, "run.json")
	if err := os.Mkdir(filepath.Dir(rejects), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.run("apply", file, "--skip-invalid", "--rejects", rejects, "--report", report, "--no-recalc")
	if r.code != ExitDiff || !strings.Contains(r.err, "1 plan with 1 error set aside") || !strings.Contains(r.err, "Rejected: 1 plan not sent") {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	var names []string
	for _, p := range e.srv.Sandbox.Plans("acme") {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Skip One", "Skip Three"}) {
		t.Errorf("plans sent: %v", names)
	}
	if s := runReportSummary(t, report); s.PlansCreated != 2 || s.PlansRejected != 1 {
		t.Errorf("run report summary %+v", s)
	}
	got, _ := os.ReadFile(rejects)
	out := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(out) != 3 || !strings.HasPrefix(out[0], lines[0]+",eepipe_errors") || !strings.Contains(out[1], "Skip Two") ||
		!strings.Contains(out[2], "-1") || !strings.Contains(out[2], "error number_of_african_male_top_managers") {
		t.Fatalf("rejects file:\n%s", got)
	}
	if want, have := rejectsOf(t, file), errorTexts(t, rejects); !slices.Equal(want, have) || len(want) != 1 {
		t.Errorf("the rejects read back with errors\n%v\nwant\n%v", have, want)
	}
	// Fixed, the rejects apply alone.
	writeFile(t, rejects, strings.Replace(string(got), ",-1,", ",1,", 1), 0o644)
	if r := e.run("apply", rejects, "--no-recalc"); r.code != 0 {
		t.Fatalf("fixed rejects: exit %d\n%s", r.code, r.err)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 3 {
		t.Errorf("%d plans after the fixed rejects", n)
	}
}

// TestApplySkipInvalidGrid: a grid workbook's plan with an error keeps its
// grid sheet in the rejects workbook, copied whole and marked (a comment
// at the cell), which reads back with the same errors; the other plan is
// applied.
func TestApplySkipInvalidGrid(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := filepath.Join(e.dir, "grid.xlsx")
	var plans []*pipeline.InputPlan
	for _, n := range []string{"Grid Good", "Grid Bad"} {
		plans = append(plans, &pipeline.InputPlan{Name: n, Company: pipeline.CompanyIDs{VAT: vatAcme}, StartDate: mustDate("2025-09-01"),
			EndDate: mustDate("2027-08-31"), Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll,
				Counters: pipeline.CountersOf(map[string]int64{cAMT: 4})}}})
	}
	if err := writeGridXLSX(file, plans); err != nil {
		t.Fatal(err)
	}
	breakGridCell(t, file, "Grid Bad", "4", "-4")
	rejects := filepath.Join(e.dir, "rejects.xlsx")
	r := e.run("apply", file, "--skip-invalid", "--rejects", rejects, "--no-recalc")
	if r.code != ExitDiff {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	if ps := e.srv.Sandbox.Plans("acme"); len(ps) != 1 || ps[0].Name != "Grid Good" {
		t.Fatalf("plans sent: %v", ps)
	}
	if want, have := rejectsOf(t, file), errorTexts(t, rejects); !slices.Equal(want, have) || len(want) == 0 {
		t.Errorf("the rejects read back with errors\n%v\nwant\n%v", have, want)
	}
	f, err := excelize.OpenFile(rejects)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	comments, _ := f.GetComments(sheets[0])
	if len(sheets) != 2 || sheets[1] != "eepipe problems" || len(comments) == 0 {
		t.Errorf("rejects sheets %v, %d comments", sheets, len(comments))
	}
	b, err := formats.ReadFiles([]string{rejects}, formats.ReadOptions{})
	if err != nil || len(b.Plans) != 1 || b.Plans[0].Name != "Grid Bad" {
		t.Errorf("rejects plans: %v %v", b, err)
	}
}

// breakGridCell sets the first cell reading old on the sheet holding the
// plan named plan to value.
func breakGridCell(t *testing.T, file, plan, old, value string) {
	t.Helper()
	f, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, sh := range f.GetSheetList() {
		rows, _ := f.GetRows(sh)
		if !slices.ContainsFunc(rows, func(r []string) bool { return slices.Contains(r, plan) }) {
			continue
		}
		for ri, row := range rows {
			for ci, v := range row {
				if v == old {
					ref, _ := excelize.CoordinatesToCellName(ci+1, ri+1)
					n, _ := strconv.Atoi(value)
					if err := f.SetCellInt(sh, ref, int64(n)); err != nil {
						t.Fatal(err)
					}
					if err := f.Save(); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
	}
	t.Fatalf("no cell %q on the sheet of %s", old, plan)
}

// TestApplySkipInvalidFlatXLSX: rows of a workbook's flat table go to an
// .xlsx rejects table, cells copied with their types (a date stays a
// date), and read back with the same errors; a file whose header has an
// error is rejected whole; a .csv rejects file cannot take workbook rows
// (exit 2, nothing sent).
func TestApplySkipInvalidFlatXLSX(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := filepath.Join(e.dir, "flat.xlsx")
	f := excelize.NewFile()
	head := []any{"company_vat_number", "plan_name", "start_date", "end_date", "year_number", "target_type", cAMT}
	_ = f.SetSheetRow("Sheet1", "A1", &head)
	dateStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	for i, r := range [][]any{
		{vatAcme, "Flat Good", 45901, "2030-08-31", 1, "all_employees", 3},
		{vatAcme, "Flat Bad", 45901, "2030-08-31", 1, "all_employees", "three"},
		{vatAcme, "Flat Bad", 45901, "2030-08-31", 2, "all_employees", 3},
	} {
		ref := "A" + strconv.Itoa(i+2)
		_ = f.SetSheetRow("Sheet1", ref, &r)
		_ = f.SetCellStyle("Sheet1", "C"+strconv.Itoa(i+2), "C"+strconv.Itoa(i+2), dateStyle)
	}
	if err := f.SaveAs(file); err != nil {
		t.Fatal(err)
	}
	f.Close()
	header := writeCSV(t, filepath.Join(e.dir, "header.csv"), threePlans())
	b, _ := os.ReadFile(header)
	writeFile(t, header, strings.Replace(string(b), cAMT, "number_of_african_male_top_managerz", 1), 0o644)

	if r := e.run("apply", file, "--skip-invalid", "--rejects", filepath.Join(e.dir, "r.csv")); r.code != ExitInvalid ||
		!strings.Contains(r.err, "give --rejects a .xlsx name") || len(e.srv.Sandbox.Plans("acme")) != 0 {
		t.Fatalf("workbook rows into a .csv: exit %d\n%s", r.code, r.err)
	}
	rejects := filepath.Join(e.dir, "rejects.xlsx")
	r := e.run("apply", file, header, "--skip-invalid", "--rejects", rejects, "--no-recalc")
	if r.code != ExitDiff || !strings.Contains(r.err, "header.csv is rejected whole") {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	if ps := e.srv.Sandbox.Plans("acme"); len(ps) != 1 || ps[0].Name != "Flat Good" {
		t.Fatalf("plans sent: %d", len(ps))
	}
	if want, have := rejectsOf(t, file, header), errorTexts(t, rejects); !slices.Equal(want, have) {
		t.Errorf("the rejects read back with errors\n%v\nwant\n%v", have, want)
	}
	rb, err := formats.ReadFiles([]string{rejects}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range rb.Plans {
		names = append(names, p.Name+" "+p.StartDate.String())
	}
	slices.Sort(names)
	if want := []string{"Flat Bad 2025-09-01", "Skip One 2025-09-01", "Skip Three 2025-09-01", "Skip Two 2025-09-01"}; !slices.Equal(names, want) {
		t.Errorf("rejects plans %v, want %v", names, want)
	}
}

// TestApplyRejectsUsage: --rejects needs --skip-invalid, a .xlsx or .csv
// name, an existing folder, and is never an input.
func TestApplyRejectsUsage(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "plans.csv"), threePlans())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rejects", "r.xlsx"}, "give --skip-invalid too"},
		{[]string{"--skip-invalid", "--rejects", "r.txt"}, "use a .xlsx or .csv file name"},
		{[]string{"--skip-invalid", "--rejects", filepath.Join(e.dir, "no", "r.xlsx")}, "does not exist"},
		{[]string{"--skip-invalid", "--rejects", file}, "not over the input"},
	} {
		r := e.run(append([]string{"apply", file}, tc.args...)...)
		if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, r.code, r.err)
		}
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 0 {
		t.Errorf("%d plans sent", n)
	}
	// Valid input with --skip-invalid: as without (exit 0, no rejects file).
	rejects := filepath.Join(e.dir, "r.xlsx")
	if r := e.run("apply", file, "--skip-invalid", "--rejects", rejects, "--no-recalc"); r.code != 0 {
		t.Fatalf("valid input: exit %d\n%s", r.code, r.err)
	}
	if _, err := os.Stat(rejects); !os.IsNotExist(err) {
		t.Errorf("a rejects file for valid input: %v", err)
	}
}

// TestApplySkipInvalidMixedLayouts: flat rows and grid sheets rejected in
// one run go to two workbooks (one flat table; the grid sheets in
// NAME-grid.xlsx), under UTC-stamped names in --output-dir; together they
// read back with the errors of what was set aside.
func TestApplySkipInvalidMixedLayouts(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	csvFile := writeCSV(t, filepath.Join(e.dir, "plans.csv"), threePlans())
	b, _ := os.ReadFile(csvFile)
	writeFile(t, csvFile, strings.Replace(string(b), "all_employees,2,2", "all_employees,x,2", 1), 0o644)
	gridFile := filepath.Join(e.dir, "grid.xlsx")
	plan := &pipeline.InputPlan{Name: "Mixed Grid", Company: pipeline.CompanyIDs{VAT: vatAcme}, StartDate: mustDate("2025-09-01"),
		EndDate: mustDate("2027-08-31"), Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll,
			Counters: pipeline.CountersOf(map[string]int64{cAMT: 4})}}}
	if err := writeGridXLSX(gridFile, []*pipeline.InputPlan{plan}); err != nil {
		t.Fatal(err)
	}
	breakGridCell(t, gridFile, "Mixed Grid", "4", "-4")
	out := filepath.Join(e.dir, "runs")
	r := e.run("apply", csvFile, gridFile, "--skip-invalid", "--rejects", "rejects.xlsx", "--output-dir", out, "--no-recalc")
	if r.code != ExitDiff {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	flat, _ := filepath.Glob(filepath.Join(out, "rejects-2*Z.xlsx"))
	grid, _ := filepath.Glob(filepath.Join(out, "rejects-grid-*Z.xlsx"))
	if len(flat) != 1 || len(grid) != 1 {
		entries, _ := os.ReadDir(out)
		t.Fatalf("rejects files %v %v in %v\n%s", flat, grid, entries, r.err)
	}
	if want, have := rejectsOf(t, csvFile, gridFile), errorTexts(t, flat[0], grid[0]); !slices.Equal(want, have) || len(want) < 2 {
		t.Errorf("the rejects read back with errors\n%v\nwant\n%v", have, want)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 2 {
		t.Errorf("%d plans sent, want the two valid ones", n)
	}
	if !strings.Contains(r.err, "handed back in "+flat[0]+" and "+grid[0]) {
		t.Errorf("the summary does not name both rejects files:\n%s", r.err)
	}
}
