package reports_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// styledInputs: a workbook written by openpyxl with styled cells (colours
// spelled "00RRGGBB", a border without a colour, a theme colour), made by
// testdata/acceptance/make_statutory.py. Marking its cells used to write
// the colours "FF00000000" and "FF", which openpyxl refuses to open.
// lo_styled_input.xlsx is the same workbook re-saved by LibreOffice.
var styledInputs = []string{filepath.Join(acceptanceDir, "op_styled_input.xlsx"), filepath.Join(acceptanceDir, "lo_styled_input.xlsx")}

// TestAnnotateOpenpyxlInputOpensEverywhere: validate --annotate over a
// workbook written by openpyxl writes a workbook that passes the strict
// check, with each marked cell keeping its font, border and number format.
func TestAnnotateOpenpyxlInputOpensEverywhere(t *testing.T) {
	for _, styledInput := range styledInputs {
		t.Run(filepath.Base(styledInput), func(t *testing.T) { testAnnotateOpensEverywhere(t, styledInput) })
	}
}

func testAnnotateOpensEverywhere(t *testing.T, styledInput string) {
	if ps := xlsxtest.StrictProblems(styledInput); len(ps) > 0 {
		t.Fatalf("the openpyxl fixture itself fails the strict check: %q", ps)
	}
	b, err := formats.ReadFiles([]string{styledInput}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sample.CheckProblems(t, b.Problems, []sample.Problem{
		sample.Err("Targets!F2", "negative"),
		sample.Err("Targets!G3", "not a whole number"),
	})
	dst := filepath.Join(t.TempDir(), "checked.xlsx")
	marked, err := reports.AnnotateWorkbook(styledInput, dst, b.Problems)
	if err != nil || marked != 2 {
		t.Fatalf("marked %d cells, %v; want 2", marked, err)
	}
	xlsxtest.CheckStrict(t, dst)
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idx, _ := f.GetCellStyle("Targets", "F2")
	st, err := f.GetStyle(idx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Font == nil || !st.Font.Bold || st.Font.Family != "Arial" || xlsx.StyleRGB(st.Font.Color) != "333399" {
		t.Errorf("F2 lost its font: %+v", st.Font)
	}
	if fill := reports.RawFillColor(f, idx); fill != "FFC7CE" { // the error's light red
		t.Errorf("F2 fill %q, want FFC7CE", fill)
	}
	borders := xlsx.RawBorderColors(f, idx)
	if borders["right"] != "FF0000" || borders["top"] != "0000FF" || borders["left"] != "000000" {
		t.Errorf("F2 borders %v, want right FF0000, top 0000FF, left 000000", borders)
	}
	if st.NumFmt != 3 && (st.CustomNumFmt == nil || *st.CustomNumFmt != "#,##0") { // 3 is the built-in #,##0
		t.Errorf("F2 lost its number format: %d, %v", st.NumFmt, st.CustomNumFmt)
	}
}

// TestReconcileXLSXOpenpyxlInputOpensEverywhere: the XLSX reconcile
// report over a workbook written by openpyxl passes the strict check.
func TestReconcileXLSXOpenpyxlInputOpensEverywhere(t *testing.T) {
	for _, styledInput := range styledInputs {
		t.Run(filepath.Base(styledInput), func(t *testing.T) { testReconcileXLSXOpensEverywhere(t, styledInput) })
	}
}

func testReconcileXLSXOpensEverywhere(t *testing.T, styledInput string) {
	o := func(cell string, row, col int) pipeline.Origin {
		return pipeline.Origin{File: styledInput, Sheet: "Targets", Cell: cell, Row: row, Column: col}
	}
	rec := &diff.Reconciliation{
		Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{styledInput}, Complete: true,
		Plans: []diff.ReconciledPlan{
			{Presence: diff.PresencePresent, Account: "acme", PlanID: 17, PlanName: "Acme 2026", Origin: o("", 2, 0),
				// The field's cell, as the reader keeps it (InputPlan.FieldOrigins).
				Fields: []diff.FieldDifference{{Field: "name", Workbook: "Acme 2026", Server: "Acme",
					Location: &diff.Location{File: styledInput, Sheet: "Targets", Cell: "B2"}}},
				Targets: []diff.TargetDifference{{YearNumber: 1, TargetType: pipeline.TargetAll,
					Counters: []diff.CounterDifference{
						{Counter: "number_of_african_male_top_managers", Workbook: 1, Server: 7, Origin: o("F2", 2, 6)},
						{Counter: "number_of_african_female_top_managers", Workbook: 2, Server: 1, Origin: o("G3", 3, 7)},
					}}}},
			{Presence: diff.PresenceMissing, Account: "acme", PlanName: "Acme 2027", Origin: o("", 3, 0),
				Reason: "the service holds no plan \"Acme 2027\""},
		},
	}
	dst := filepath.Join(t.TempDir(), "report.xlsx")
	if _, err := reports.WriteReconcileXLSX(dst, styledInput, rec); err != nil {
		t.Fatal(err)
	}
	xlsxtest.CheckStrict(t, dst)
	reports.CheckOneTabSelected(t, dst, reports.SummarySheet)
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for cell, want := range map[string]string{"F2": templates.DiffFill, "G3": templates.DiffFill, "A3": templates.PlanFill, "B2": templates.PlanFill} {
		idx, _ := f.GetCellStyle("Targets", cell)
		if fill := reports.RawFillColor(f, idx); fill != want {
			t.Errorf("%s filled %q, want %s", cell, fill, want)
		}
	}
}

// TestEveryWorkbookWrittenIsStrict: the workbooks eepipe writes of its own
// (template, grid and flat exports, problem, sector and run reports, a
// reconcile summary) pass the strict check.
func TestEveryWorkbookWrittenIsStrict(t *testing.T) {
	dir := t.TempDir()
	write := map[string]func(string) error{
		"template-grid.xlsx": func(p string) error {
			f, err := templates.New(templates.Options{Start: sample.Date("2026-09-01")})
			if err != nil {
				return err
			}
			defer f.Close()
			return xlsx.WriteWorkbook(p, f)
		},
		"template-flat.xlsx": func(p string) error {
			f, err := templates.New(templates.Options{Layout: templates.LayoutFlat})
			if err != nil {
				return err
			}
			defer f.Close()
			return xlsx.WriteWorkbook(p, f)
		},
		"grid.xlsx": func(p string) error {
			return books.WriteGrid(p, []*pipeline.InputPlan{sample.Plan()}, nil)
		},
		"flat.xlsx": func(p string) error {
			return books.WriteFlat(p, []*pipeline.InputPlan{sample.Plan()}, nil)
		},
		"export.xlsx": func(p string) error {
			return books.WriteExport(p, books.ExportPlans(), export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)})
		},
		"export-flat.xlsx": func(p string) error { return export.WriteFlatXLSX(p, books.ExportPlans(), export.Options{}) },
		"problems.xlsx": func(p string) error {
			b := &pipeline.Batch{Files: []string{"a.csv"}}
			b.Problems.Errorf(pipeline.Origin{File: "a.csv", Row: 2, Column: 4}, "-2", "negative")
			return reports.WriteProblemReport(p, b)
		},
		"sector.xlsx":    func(p string) error { return reports.WriteSectorReport(p, sample.SectorReport(t)) },
		"run.xlsx":       func(p string) error { return reports.WriteRunReport(p, reports.SampleRunReport()) },
		"reconcile.xlsx": func(p string) error { return writeReconcileXLSX(p, "", sample.Reconciliation("client.csv")) },
	}
	for name, w := range write {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := w(p); err != nil {
				t.Fatal(err)
			}
			xlsxtest.CheckStrict(t, p)
		})
	}
}
