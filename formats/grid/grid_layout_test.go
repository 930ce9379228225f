package grid_test

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// findCell returns the first cell of sheet whose displayed text is text.
func findCell(t *testing.T, f *excelize.File, sheet, text string) (col, row int) {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for r, cells := range rows {
		for c, v := range cells {
			if v == text {
				return c + 1, r + 1
			}
		}
	}
	t.Fatalf("%s: no cell reads %q", sheet, text)
	return 0, 0
}

// TestGridEditedLayoutStillReads: rows inserted above and inside a grid, a
// column inserted between the labels and the values, and a grid moved to
// another place of the sheet still read as the same model.
func TestGridEditedLayoutStillReads(t *testing.T) {
	dir := t.TempDir()
	cat := pipeline.DefaultCatalog()
	plan := sample.Plan()
	path := filepath.Join(dir, "grid.xlsx")
	if err := books.WriteGrid(path, []*pipeline.InputPlan{plan}, cat); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sheet := f.GetSheetName(1) // after the Overview
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.InsertRows(sheet, 2, 3))
	must(f.InsertCols(sheet, "B", 1))
	_, top := findCell(t, f, sheet, templates.LevelLabel("top_managers"))
	must(f.InsertRows(sheet, top+2, 1)) // a blank row inside the first grid

	// Move the last grid (label, two header rows, nine level rows) to the
	// right of the metadata, copying values only (no merges, no styles).
	label := templates.GridLabel(2, 2027, pipeline.TargetDisabled)
	lc, lr := findCell(t, f, sheet, label)
	const dc, dr = 15, 1 // new top left: O1
	nRows := 3 + len(cat.Levels())
	nCols := 1 + len(cat.Races())*len(cat.Genders()) + 1 // label column, counters (after the inserted column)
	must(f.UnmergeCell(sheet, cellName(lc, lr), cellName(lc+nCols, lr+nRows)))
	for r := 0; r < nRows; r++ {
		for c := 0; c <= nCols; c++ {
			from := cellName(lc+c, lr+r)
			v, err := f.GetCellValue(sheet, from)
			must(err)
			must(f.SetCellValue(sheet, from, nil))
			if v == "" {
				continue
			}
			to := cellName(dc+c, dr+r)
			if typ, _ := f.GetCellType(sheet, from); typ == excelize.CellTypeSharedString || r < 3 || c == 0 {
				must(f.SetCellStr(sheet, to, v))
			} else {
				must(f.SetCellValue(sheet, to, v))
			}
		}
	}
	edited := filepath.Join(dir, "edited.xlsx")
	must(f.SaveAs(edited))
	f.Close()

	got := readback.ReadGridModel(t, edited, cat)
	if want := readback.Model([]*pipeline.InputPlan{plan}); !reflect.DeepEqual(readback.Model(got), want) {
		t.Fatalf("edited workbook reads differently:\n got %+v\nwant %+v", readback.Model(got), want)
	}
	// The moved grid's cells are cited where they are now.
	for _, tg := range got[0].Targets {
		if tg.YearNumber == 2 && tg.TargetType == pipeline.TargetDisabled {
			o := tg.CellOf(pipeline.CounterName("african", "male", "top_managers"))
			if o.Cell != "Q4" { // O1 label, O2:O3 headers, Q = African male after the inserted column
				t.Errorf("moved grid counter read from %s, want Q4", o.Cell)
			}
		}
	}
}

func cellName(c, r int) string {
	s, _ := excelize.CoordinatesToCellName(c, r)
	return s
}

// TestGridSheetsSkipsFlatAndHidden: a sheet with a flat header, a hidden
// grid sheet and a prose sheet are not grid sheets.
func TestGridSheetsSkipsFlatAndHidden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.xlsx")
	if err := books.WriteGrid(path, []*pipeline.InputPlan{sample.Plan()}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := readback.GridSheetsOf(t, f); !reflect.DeepEqual(got, []string{"Acme EE plan"}) {
		t.Fatalf("gridSheets = %v", got)
	}
	// A flat header in the first 20 rows makes the sheet a flat table.
	if err := f.SetCellStr("Acme EE plan", "Z20", "target_type"); err != nil {
		t.Fatal(err)
	}
	if got := readback.GridSheetsOf(t, f); len(got) != 0 {
		t.Fatalf("sheet with target_type header is still a grid sheet: %v", got)
	}
	if err := f.SetCellStr("Acme EE plan", "Z20", ""); err != nil {
		t.Fatal(err)
	}
	f.SetActiveSheet(0)
	if err := f.SetSheetVisible("Acme EE plan", false); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.GetSheetVisible("Acme EE plan"); v {
		t.Fatal("could not hide the sheet")
	}
	for _, s := range readback.GridSheetsOf(t, f) {
		if strings.EqualFold(s, "Acme EE plan") {
			t.Fatalf("hidden sheet read as a grid")
		}
	}
}

// TestGridFromLibreOffice: a grid workbook written by eepipe and saved
// again by LibreOffice Calc (testdata/grid/libreoffice-plan.xlsx, made once
// with soffice --convert-to xlsx) reads as the plan written.
func TestGridFromLibreOffice(t *testing.T) {
	got := readback.ReadGridModel(t, filepath.Join("..", "..", "testdata", "grid", "libreoffice-plan.xlsx"), nil)
	if want := readback.Model([]*pipeline.InputPlan{sample.Plan()}); !reflect.DeepEqual(readback.Model(got), want) {
		t.Fatalf("LibreOffice's copy reads differently:\n got %+v\nwant %+v", readback.Model(got), want)
	}
}

// TestGridLabelLookalikes: a plan named like a grid label (shown as the
// sheet title and as the plan name value) is not a grid; a real grid whose
// header row was deleted is an error at its label.
func TestGridLabelLookalikes(t *testing.T) {
	dir := t.TempDir()
	plan := sample.Plan()
	plan.Name = "Year 1 all employees"
	path := filepath.Join(dir, "lookalike.xlsx")
	if err := books.WriteGrid(path, []*pipeline.InputPlan{plan}, nil); err != nil {
		t.Fatal(err)
	}
	got := readback.ReadGridModel(t, path, nil)
	if want := readback.Model([]*pipeline.InputPlan{plan}); !reflect.DeepEqual(readback.Model(got), want) {
		t.Fatalf("reads differently:\n got %+v\nwant %+v", readback.Model(got), want)
	}

	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sheet := f.GetSheetName(1) // after the Overview
	_, r := findCell(t, f, sheet, templates.GridLabel(2, 2027, pipeline.TargetAll))
	if err := f.RemoveRow(sheet, r+1); err != nil { // the race row
		t.Fatal(err)
	}
	if err := f.RemoveRow(sheet, r+1); err != nil { // the gender row
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.xlsx")
	if err := f.SaveAs(broken); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, probs := readback.ReadGridWorkbook(t, broken, nil)
	want := "A" + strconv.Itoa(r)
	found := false
	for _, p := range probs {
		if p.Severity == pipeline.Error && p.Origin.Cell == want && strings.Contains(p.Message, "no header") {
			found = true
		}
	}
	if !found {
		t.Errorf("no error at %s for the grid without header; got:\n%s", want, readback.ProblemsText(probs))
	}
}
