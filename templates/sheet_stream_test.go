package templates_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// sheetSnapshot is everything a reader can see of a worksheet: cell
// values (raw and formatted), cell types (shared and inline strings alike),
// style definitions, merged ranges, validations, column widths and panes.
type sheetSnapshot struct {
	Raw, Shown  [][]string
	Types       map[string]excelize.CellType
	Styles      map[string]int
	Merges      []string
	Validations []*excelize.DataValidation
	Widths      []float64
	Panes       excelize.Panes
}

func snapshot(t *testing.T, path, sheet string) sheetSnapshot {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s sheetSnapshot
	if s.Raw, err = f.GetRows(sheet, excelize.Options{RawCellValue: true}); err != nil {
		t.Fatal(err)
	}
	if s.Shown, err = f.GetRows(sheet); err != nil {
		t.Fatal(err)
	}
	s.Types, s.Styles = map[string]excelize.CellType{}, map[string]int{}
	for r := 1; r <= len(s.Raw)+2; r++ {
		for c := 1; c <= 30; c++ {
			cell := ref(c, r)
			typ, _ := f.GetCellType(sheet, cell)
			if typ == excelize.CellTypeInlineString {
				typ = excelize.CellTypeSharedString
			}
			s.Types[cell] = typ
			// Both workbooks register the same styles in the same order,
			// so equal ids are equal styles.
			if s.Styles[cell], err = f.GetCellStyle(sheet, cell); err != nil {
				t.Fatal(err)
			}
		}
	}
	mc, err := f.GetMergeCells(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mc {
		s.Merges = append(s.Merges, m.GetStartAxis()+":"+m.GetEndAxis())
	}
	sort.Strings(s.Merges)
	if s.Validations, err = f.GetDataValidations(sheet); err != nil {
		t.Fatal(err)
	}
	for c := 1; c <= 30; c++ {
		name, _ := excelize.ColumnNumberToName(c)
		w, _ := f.GetColWidth(sheet, name)
		s.Widths = append(s.Widths, w)
	}
	if s.Panes, err = f.GetPanes(sheet); err != nil {
		t.Fatal(err)
	}
	return s
}

// writePlanSheetXML writes a workbook to path whose sheet "Plan" is the
// worksheet part WritePlanSheetXML writes (as the grid export writes its
// plan sheets), its styles registered by NewStyles on that workbook and
// its Lists sheet there.
func writePlanSheetXML(t *testing.T, path string, ps templates.PlanSheet, cat *pipeline.Catalog) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	st, err := templates.NewStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Plan"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := templates.EnsureListsSheet(f); err != nil {
		t.Fatal(err)
	}
	var wb bytes.Buffer
	if _, err := f.WriteTo(&wb); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(wb.Bytes()), int64(wb.Len()))
	if err != nil {
		t.Fatal(err)
	}
	part := sheetPart(t, zr, "Plan")
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, zf := range zr.File {
		w, err := zw.Create(zf.Name)
		if err != nil {
			t.Fatal(err)
		}
		if zf.Name == part {
			if err := templates.WritePlanSheetXML(w, ps, cat, st, ""); err != nil {
				t.Fatal(err)
			}
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(w, rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sheetPart returns the name of the worksheet part of sheet in the
// workbook package zr: its relationship in xl/workbook.xml, resolved in
// xl/_rels/workbook.xml.rels.
func sheetPart(t *testing.T, zr *zip.Reader, sheet string) string {
	t.Helper()
	read := func(name string, v any) {
		rc, err := zr.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if err := xml.NewDecoder(rc).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	read("xl/workbook.xml", &wb)
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	read("xl/_rels/workbook.xml.rels", &rels)
	for _, s := range wb.Sheets {
		if s.Name != sheet {
			continue
		}
		for _, r := range rels.Rels {
			if r.ID == s.RID {
				if strings.HasPrefix(r.Target, "/") {
					return strings.TrimPrefix(r.Target, "/")
				}
				return path.Join("xl", r.Target)
			}
		}
	}
	t.Fatalf("no worksheet part for sheet %q", sheet)
	return ""
}

// TestWritePlanSheetXMLMatchesAddPlanSheet writes the same plan sheet with
// the in-memory writer (AddPlanSheet) and the streamed one the grid
// export writes (WritePlanSheetXML) and requires identical sheets: the
// export's speed must not cost a value, a style, a merge, a validation, a
// width or the frozen panes.
func TestWritePlanSheetXMLMatchesAddPlanSheet(t *testing.T) {
	small, err := pipeline.NewCatalog([]string{
		pipeline.CounterName("african", "male", "top_managers"),
		pipeline.CounterName("african", "female", "top_managers"),
		pipeline.CounterName("white", "male", "total_permanent_employees"),
	})
	if err != nil {
		t.Fatal(err)
	}
	full := pipeline.DefaultCatalog()
	counters := map[string]int64{}
	for i, n := range full.Names() {
		if i%4 != 0 { // some blank counter cells
			counters[n] = int64(i * 37 % 1000)
		}
	}
	dated := templates.PlanSheet{
		Title: "Acme 2026", PlanID: 42, Name: "Acme 2026",
		Company:   pipeline.CompanyIDs{VAT: "0412345678", Registration: "2009/012345/07"},
		StartDate: mustDate("2026-09-01"), EndDate: mustDate("2028-08-31"),
		Sector: pipeline.Sectors[0], ScorecardID: "scorecard_acme_2026",
		Grids: []templates.Grid{
			{YearNumber: 1, FinancialYear: 2027, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(counters)},
			{YearNumber: 1, FinancialYear: 2027, TargetType: pipeline.TargetDisabled},
			{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{pipeline.CounterName("african", "male", "top_managers"): 3})},
		},
	}
	for _, tc := range []struct {
		name string
		ps   templates.PlanSheet
		cat  *pipeline.Catalog
	}{
		{"full catalog", dated, full},
		{"small catalog", dated, small},
		{"new plan, no grids", templates.PlanSheet{Name: "New"}, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem, streamed := filepath.Join(dir, "mem.xlsx"), filepath.Join(dir, "stream.xlsx")
			func() {
				f := excelize.NewFile()
				defer f.Close()
				st, err := templates.NewStyles(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := templates.AddPlanSheet(f, "Plan", tc.ps, tc.cat, st); err != nil {
					t.Fatal(err)
				}
				write(t, f, mem)
			}()
			writePlanSheetXML(t, streamed, tc.ps, tc.cat)
			want, got := snapshot(t, mem, "Plan"), snapshot(t, streamed, "Plan")
			if len(want.Raw) < 4 || len(want.Validations) < 4 || len(want.Merges) < len(templates.MetaFields) {
				t.Fatalf("the in-memory sheet is incomplete: %d rows, %d validations, %d merges", len(want.Raw), len(want.Validations), len(want.Merges))
			}
			v := reflect.ValueOf(want)
			for i := 0; i < v.NumField(); i++ {
				name := v.Type().Field(i).Name
				a, b := v.Field(i).Interface(), reflect.ValueOf(got).Field(i).Interface()
				if reflect.DeepEqual(a, b) {
					continue
				}
				if m, ok := a.(map[string]int); ok {
					for cell, id := range m {
						if got.Styles[cell] != id {
							t.Errorf("streamed sheet: %s style %d, want %d", cell, got.Styles[cell], id)
						}
					}
					continue
				}
				t.Errorf("streamed sheet: %s differ:\n got %+v\nwant %+v", name, b, a)
			}
		})
	}
}
