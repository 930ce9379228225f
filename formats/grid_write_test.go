package formats

import (
	"archive/zip"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
)

// exSheetCharts returns, per sheet name, how many charts the sheet's
// drawing holds (from the package parts: workbook -> sheet -> drawing ->
// charts).
func exSheetCharts(t *testing.T, file string) map[string]int {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	parts := map[string]string{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		parts[zf.Name] = string(b)
	}
	target := func(rels, id string) string {
		m := regexp.MustCompile(`<Relationship[^>]*Id="` + id + `"[^>]*>`).FindString(rels)
		if m == "" {
			return ""
		}
		return regexp.MustCompile(`Target="([^"]*)"`).FindStringSubmatch(m)[1]
	}
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`<sheet name="([^"]*)"[^>]*r:id="(rId\d+)"`).FindAllStringSubmatch(parts["xl/workbook.xml"], -1) {
		sheetPath := path.Join("xl", target(parts["xl/_rels/workbook.xml.rels"], m[2]))
		rels := parts[path.Join(path.Dir(sheetPath), "_rels", path.Base(sheetPath)+".rels")]
		// The sheet itself must point at its drawing.
		drawing := regexp.MustCompile(`<drawing [^>]*id="(rId\d+)"`).FindStringSubmatch(parts[sheetPath])
		if drawing == nil {
			continue
		}
		d := path.Base(target(rels, drawing[1]))
		out[m[1]] += len(regexp.MustCompile(`/charts/chart\d+\.xml"`).FindAllString(parts["xl/drawings/_rels/"+d+".rels"], -1))
	}
	return out
}

// TestExportPlanSheetsKeepEveryFeature checks what the streamed plan
// sheets of the export must still carry: the validations, the merged
// metadata and header cells, widths and frozen panes, each plan's two
// charts on its own sheet, and the sheet order, hidden sheets and active
// sheet of the workbook.
func TestExportPlanSheetsKeepEveryFeature(t *testing.T) {
	plans := exExportPlans()
	file := filepath.Join(t.TempDir(), "plans.xlsx")
	if err := writeExportXLSX(file, plans, export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	want := []string{export.OverviewSheet, "Acme 2026", "Acme- plan-2", export.ChartDataSheet, "Lists"} // Lists last
	if !slices.Equal(sheets, want) {
		t.Fatalf("sheets %v, want %v", sheets, want)
	}
	if f.GetActiveSheetIndex() != 0 {
		t.Errorf("active sheet %d, want the Overview", f.GetActiveSheetIndex())
	}
	for _, s := range sheets {
		visible, _ := f.GetSheetVisible(s)
		if hidden := s == "Lists" || s == export.ChartDataSheet; visible == hidden {
			t.Errorf("sheet %s visible = %v", s, visible)
		}
	}
	charts := exSheetCharts(t, file)
	for i, sheet := range []string{"Acme 2026", "Acme- plan-2"} {
		if charts[sheet] != 2 {
			t.Errorf("%s: %d charts, want 2 (all: %v)", sheet, charts[sheet], charts)
		}
		dvs, err := f.GetDataValidations(sheet)
		if err != nil {
			t.Fatal(err)
		}
		if len(dvs) != 5 {
			t.Fatalf("%s: %d validations, want 5 (counters, sector, two dates, plan id)", sheet, len(dvs))
		}
		counters := regexp.MustCompile(`\S+`).FindAllString(dvs[0].Sqref, -1)
		if dvs[0].Type != "whole" || dvs[0].Formula1 != "0" || len(counters) != len(plans[i].Plan.Targets) {
			t.Errorf("%s: counter validation %+v, want whole numbers >= 0 over one range per grid (%d)", sheet, dvs[0], len(plans[i].Plan.Targets))
		}
		if dvs[1].Type != "list" || dvs[1].Formula1 != "Lists!$A$1:$A$18" {
			t.Errorf("%s: sector validation %+v", sheet, dvs[1])
		}
		if dvs[2].Type != "date" || dvs[3].Type != "date" || dvs[4].Type != "whole" || dvs[4].Formula1 != "1" {
			t.Errorf("%s: date and plan id validations %+v %+v %+v", sheet, dvs[2], dvs[3], dvs[4])
		}
		merges, err := f.GetMergeCells(sheet)
		if err != nil {
			t.Fatal(err)
		}
		// Ten metadata cells (with Account) and their ten help texts, and
		// per grid the level header and one header per race.
		if wantMerges := 20 + len(plans[i].Plan.Targets)*(1+len(pipeline.DefaultCatalog().Races())); len(merges) != wantMerges {
			t.Errorf("%s: %d merged ranges, want %d", sheet, len(merges), wantMerges)
		}
		if w, _ := f.GetColWidth(sheet, "A"); w != 44 {
			t.Errorf("%s: label column width %v", sheet, w)
		}
		if p, _ := f.GetPanes(sheet); !p.Freeze || p.XSplit != 1 {
			t.Errorf("%s: panes %+v, want the label column frozen", sheet, p)
		}
		c, r := findCell(t, f, sheet, "Top management")
		ref, _ := excelize.CoordinatesToCellName(c+1, r)
		id, _ := f.GetCellStyle(sheet, ref)
		st, err := f.GetStyle(id)
		if err != nil || st.NumFmt != 1 || len(st.Border) != 4 {
			t.Errorf("%s: counter cell %s style %+v, want a bordered whole number", sheet, ref, st)
		}
	}
}

// TestExportSheetOrderListsLast: with the Sector targets sheet (added
// before the plan sheets, see export.Options.BeforePlanSheets) the export is
// Overview, Sector targets, the plan sheets, then the hidden Chart data and
// Lists, Lists last; a plan named "Sector targets" gets a sheet of its own,
// never the check's.
func TestExportSheetOrderListsLast(t *testing.T) {
	plans := exExportPlans()
	plans[1].Plan.Name = reports.SectorSheetName
	inputs := []*pipeline.InputPlan{plans[0].Plan, plans[1].Plan}
	report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
	wb, err := export.NewWorkbook(plans, export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		BeforePlanSheets: func(f *excelize.File) error { return reports.AddSectorSheet(f, report.Plans, report.TargetsSource) }})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plans.xlsx")
	if err := xlsx.WriteWorkbook(file, wb); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	f, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := []string{export.OverviewSheet, reports.SectorSheetName, "Acme 2026", reports.SectorSheetName + " (2)", export.ChartDataSheet, templates.ListsSheet}
	if got := f.GetSheetList(); !slices.Equal(got, want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}
	if v, _ := f.GetSheetVisible(templates.ListsSheet); v {
		t.Error("Lists is visible")
	}
	if a1, _ := f.GetCellValue(reports.SectorSheetName, "A1"); !strings.HasPrefix(a1, "Sector targets:") {
		t.Errorf("Sector targets!A1 = %q", a1)
	}
	if b, _ := f.GetCellValue(reports.SectorSheetName+" (2)", "B5"); b != plans[1].Plan.Name {
		t.Errorf("the plan's own sheet: B5 = %q", b)
	}
}
