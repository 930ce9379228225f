package reports_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
)

// TestSummaryCountsSheetsInNoPlan: a grid sheet whose start date has an
// error forms no plan; validate's summary says so rather than "0 plans" of
// a workbook that plainly holds one, and counts one sheet however many
// grids it has.
func TestSummaryCountsSheetsInNoPlan(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.xlsx")
	plan := &pipeline.InputPlan{Name: "Acme", StartDate: sample.Date("2025-09-01"), EndDate: sample.Date("2027-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 2})},
			{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3})},
		}}
	if err := books.WriteGrid(path, []*pipeline.InputPlan{plan}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sheet := f.GetSheetList()[1] // after the Overview
	cell := ""
	rows, _ := f.GetRows(sheet)
	for i, r := range rows {
		if len(r) > 0 && r[0] == "Start date" {
			cell = "B" + itoa(i+1)
		}
	}
	if cell == "" {
		t.Fatalf("no Start date label on %q", sheet)
	}
	if err := f.SetCellStr(sheet, cell, "2025-13-01"); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.UnplacedSheets != 1 || b.UnplacedRows != 0 || len(b.Plans) != 0 {
		t.Fatalf("%d plans, %d sheets and %d rows in no plan; want 0, 1, 0", len(b.Plans), b.UnplacedSheets, b.UnplacedRows)
	}
	var out strings.Builder
	if err := reports.WriteProblemsText(&out, b); err != nil {
		t.Fatal(err)
	}
	if want := "1 file, 0 plans (1 plan sheet is in no plan yet: fix its plan_id, plan_name or start_date), 0 targets"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q in\n%s", want, out.String())
	}
}
