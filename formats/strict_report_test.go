package formats

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
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

// rewriteZipPart copies the package src to dst with one part's text edited.
func rewriteZipPart(t *testing.T, src, dst, part string, edit func(string) string) {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == part {
			b = []byte(edit(string(b)))
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStrictCheckerFinds: the strict re-reader reports the faults it is
// there for, so that a clean result of the other tests means something.
func TestStrictCheckerFinds(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xlsx")
	f := excelize.NewFile()
	st, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Color: "FF0000"}})
	f.SetCellValue("Sheet1", "A1", 1)
	f.SetCellStyle("Sheet1", "A1", "A1", st)
	if err := f.SaveAs(good); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if ps := strictXLSXProblems(good); len(ps) > 0 {
		t.Fatalf("a plain excelize workbook fails the strict check: %q", ps)
	}
	for _, tc := range []struct {
		name, part string
		edit       func(string) string
		want       string
	}{
		{"colour", "xl/styles.xml", func(s string) string { return strings.Replace(s, `rgb="FFFF0000"`, `rgb="FF00000000"`, 1) }, "6 or 8 hex digits"},
		{"empty colour", "xl/styles.xml", func(s string) string { return strings.Replace(s, `rgb="FFFF0000"`, `rgb="FF"`, 1) }, "6 or 8 hex digits"},
		{"font id", "xl/styles.xml", func(s string) string { return strings.Replace(s, `fontId="1"`, `fontId="9"`, 1) }, "fontId 9 out of range"},
		{"style index", "xl/worksheets/sheet1.xml", func(s string) string { return strings.Replace(s, ` s="1"`, ` s="7"`, 1) }, "no such cell format"},
		{"broken xml", "xl/workbook.xml", func(s string) string { return strings.Replace(s, "</workbook>", "</workbok>", 1) }, "not well-formed"},
		{"lost part", "xl/_rels/workbook.xml.rels", func(s string) string { return strings.Replace(s, "styles.xml", "stiles.xml", 1) }, "lacks"},
	} {
		bad := filepath.Join(dir, tc.name+".xlsx")
		rewriteZipPart(t, good, bad, tc.part, tc.edit)
		ps := strictXLSXProblems(bad)
		if !strings.Contains(strings.Join(ps, "\n"), tc.want) {
			t.Errorf("%s: strict check found %q; want %q", tc.name, ps, tc.want)
		}
	}
}

// TestAnnotateOpenpyxlInputOpensEverywhere: validate --annotate over a
// workbook written by openpyxl writes a workbook that passes the strict
// check, with each marked cell keeping its font, border and number format.
func TestAnnotateOpenpyxlInputOpensEverywhere(t *testing.T) {
	for _, styledInput := range styledInputs {
		t.Run(filepath.Base(styledInput), func(t *testing.T) { testAnnotateOpensEverywhere(t, styledInput) })
	}
}

func testAnnotateOpensEverywhere(t *testing.T, styledInput string) {
	if ps := strictXLSXProblems(styledInput); len(ps) > 0 {
		t.Fatalf("the openpyxl fixture itself fails the strict check: %q", ps)
	}
	b, err := ReadFiles([]string{styledInput}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkAcceptanceProblems(t, b.Problems, []wantProblem{
		perr("Targets!F2", "negative"),
		perr("Targets!G3", "not a whole number"),
	})
	dst := filepath.Join(t.TempDir(), "checked.xlsx")
	marked, err := reports.AnnotateWorkbook(styledInput, dst, b.Problems)
	if err != nil || marked != 2 {
		t.Fatalf("marked %d cells, %v; want 2", marked, err)
	}
	checkStrictXLSX(t, dst)
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
	if fill := rawFillColor(f, idx); fill != "FFC7CE" { // the error's light red
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
	checkStrictXLSX(t, dst)
	checkOneTabSelected(t, dst, reports.SummarySheet)
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for cell, want := range map[string]string{"F2": templates.DiffFill, "G3": templates.DiffFill, "A3": templates.PlanFill, "B2": templates.PlanFill} {
		idx, _ := f.GetCellStyle("Targets", cell)
		if fill := rawFillColor(f, idx); fill != want {
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
			f, err := templates.New(templates.Options{Start: date("2026-09-01")})
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
			return writeGridXLSX(p, []*pipeline.InputPlan{samplePlan()}, nil)
		},
		"flat.xlsx": func(p string) error {
			return writeFlatXLSX(p, []*pipeline.InputPlan{samplePlan()}, nil)
		},
		"export.xlsx": func(p string) error {
			return writeExportXLSX(p, exExportPlans(), export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)})
		},
		"export-flat.xlsx": func(p string) error { return export.WriteFlatXLSX(p, exExportPlans(), export.Options{}) },
		"problems.xlsx": func(p string) error {
			b := &pipeline.Batch{Files: []string{"a.csv"}}
			b.Problems.Errorf(pipeline.Origin{File: "a.csv", Row: 2, Column: 4}, "-2", "negative")
			return reports.WriteProblemReport(p, b)
		},
		"sector.xlsx":    func(p string) error { return reports.WriteSectorReport(p, sectorTestReport(t)) },
		"run.xlsx":       func(p string) error { return reports.WriteRunReport(p, sampleRunReport()) },
		"reconcile.xlsx": func(p string) error { return rrWriteXLSX(p, "", rrReconciliation("client.csv")) },
	}
	for name, w := range write {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := w(p); err != nil {
				t.Fatal(err)
			}
			checkStrictXLSX(t, p)
		})
	}
}

// rawFillColor returns the pattern colour of the cell style idx as the
// style sheet spells it, six hex digits.
func rawFillColor(f *excelize.File, idx int) string {
	if _, err := f.GetStyle(idx); err != nil { // loads the style sheet
		return ""
	}
	ss := f.Styles
	if ss == nil || ss.CellXfs == nil || ss.Fills == nil || idx < 0 || idx >= len(ss.CellXfs.Xf) {
		return ""
	}
	id := ss.CellXfs.Xf[idx].FillID
	if id == nil || *id < 0 || *id >= len(ss.Fills.Fill) || ss.Fills.Fill[*id] == nil || ss.Fills.Fill[*id].PatternFill == nil {
		return ""
	}
	c := ss.Fills.Fill[*id].PatternFill.FgColor
	if c == nil {
		return ""
	}
	return xlsx.StyleRGB(f.GetBaseColor(c.RGB, c.Indexed, c.Theme))
}

// checkOneTabSelected checks that sheet is the workbook's active sheet and
// the only one whose tab is selected (two selected tabs are a group, which
// an edit changes together).
func checkOneTabSelected(t *testing.T, path, sheet string) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetName(f.GetActiveSheetIndex()); got != sheet {
		t.Errorf("active sheet %q, want %q", got, sheet)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// A sheet's first sheetView, before its cells, says whether its tab
	// is selected.
	tabSelected := regexp.MustCompile(`<sheetView\b[^>]*\btabSelected="(1|true)"`)
	var selected []string
	for _, info := range book.Sheets {
		if info.Path == "" {
			continue // a chart sheet
		}
		rc, err := book.Open(info.Path)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := bytes.Cut(raw, []byte("<sheetData"))
		if tabSelected.Match(head) {
			selected = append(selected, info.Name)
		}
	}
	if len(selected) > 1 || (len(selected) == 1 && selected[0] != sheet) {
		t.Errorf("tabs selected: %v; want only %q", selected, sheet)
	}
}
