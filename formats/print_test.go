package formats

import (
	"archive/zip"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// printWant is what a sheet's page setup must be.
type printWant struct {
	portrait bool
	titles   string // the sheet's _xlnm.Print_Titles ("" = none required)
	// wide: the sheet prints at templates.WideScale (or scale) across
	// pages, not fitted to one page wide.
	wide  bool
	scale int
}

// checkPrint reads back every visible sheet's page setup: A4, landscape
// (or portrait when wanted), fitted to one page wide or, for a wide
// sheet, at templates.WideScale, and the print titles of the sheets that
// name them.
func checkPrint(t *testing.T, path string, want map[string]printWant) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	titles := map[string]string{}
	for _, d := range f.GetDefinedName() {
		if d.Name == "_xlnm.Print_Titles" {
			titles[d.Scope] = d.RefersTo
		}
	}
	for _, s := range f.GetSheetList() {
		if v, _ := f.GetSheetVisible(s); !v {
			continue
		}
		w, listed := want[s]
		if !listed {
			t.Errorf("%s: sheet %q is not expected", filepath.Base(path), s)
			continue
		}
		pl, err := f.GetPageLayout(s)
		if err != nil {
			t.Fatal(err)
		}
		orient := "landscape"
		if w.portrait {
			orient = "portrait"
		}
		if pl.Orientation == nil || *pl.Orientation != orient || pl.FitToWidth == nil || *pl.FitToWidth != 1 ||
			pl.FitToHeight == nil || *pl.FitToHeight != 0 || pl.Size == nil || *pl.Size != 9 {
			t.Errorf("%s sheet %q: page layout %s, fit %v x %v, size %v; want A4 %s, 1 page wide",
				filepath.Base(path), s, deref(pl.Orientation), derefInt(pl.FitToWidth), derefInt(pl.FitToHeight), derefInt(pl.Size), orient)
		}
		props, err := f.GetSheetProps(s)
		fitted := err == nil && props.FitToPage != nil && *props.FitToPage
		scale := uint(templates.WideScale)
		if w.scale != 0 {
			scale = uint(w.scale)
		}
		switch {
		case w.wide && (fitted || pl.AdjustTo == nil || *pl.AdjustTo != scale):
			t.Errorf("%s sheet %q: fitted %v, scale %v; want %d%% across pages", filepath.Base(path), s, fitted, derefUint(pl.AdjustTo), scale)
		case !w.wide && !fitted:
			t.Errorf("%s sheet %q: fit to page not set", filepath.Base(path), s)
		}
		if w.titles != "" && titles[s] != w.titles {
			t.Errorf("%s sheet %q: print titles %q, want %q", filepath.Base(path), s, titles[s], w.titles)
		}
	}
	for s := range want {
		if idx, _ := f.GetSheetIndex(s); idx < 0 {
			t.Errorf("%s: no sheet %q", filepath.Base(path), s)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func derefUint(n *uint) any {
	if n == nil {
		return "<nil>"
	}
	return *n
}

func derefInt(n *int) any {
	if n == nil {
		return "<nil>"
	}
	return *n
}

// TestWorkbooksPrint: every workbook eepipe writes has page setup on
// every visible sheet, read back from the file.
func TestWorkbooksPrint(t *testing.T) {
	dir := t.TempDir()
	plans := exExportPlans()
	names := []string{"Acme 2026", "Acme- plan-2"}

	// The export: Overview, plan sheets (with charts), Sector targets.
	exported := filepath.Join(dir, "export.xlsx")
	wb, err := export.NewWorkbook(plans, export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []*pipeline.InputPlan
	for _, p := range plans {
		inputs = append(inputs, p.Plan)
	}
	report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
	if err := reports.AddSectorSheet(wb.File, report.Plans, report.TargetsSource); err != nil {
		t.Fatal(err)
	}
	if err := xlsx.WriteWorkbook(exported, wb); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	checkPrint(t, exported, map[string]printWant{
		export.OverviewSheet:    {titles: "'Overview'!$A:$A,'Overview'!$4:$4", wide: true},
		names[0]:                {titles: "'Acme 2026'!$1:$1"},
		names[1]:                {titles: "'Acme- plan-2'!$1:$1"},
		reports.SectorSheetName: {titles: "'Sector targets'!$A:$D,'Sector targets'!$5:$5", wide: true, scale: reports.SectorPrintScale},
	})
	// A page per financial year: a break before each year's grids but the
	// first, and each chart beside the first grid of its type.
	f, err := excelize.OpenFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	// The grids' label rows, as the sheet reads back.
	var rows []int
	sheetRows, err := f.GetRows(names[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range sheetRows {
		if len(r) > 0 && strings.HasPrefix(r[0], "Year ") {
			rows = append(rows, i+1)
		}
	}
	if len(rows) != 8 {
		t.Fatalf("grid rows %v", rows)
	}
	f.Close()
	xml := zipPart(t, exported, "xl/worksheets/sheet2.xml")
	for _, r := range []int{rows[2], rows[4], rows[6]} {
		if !strings.Contains(xml, `<brk id="`+itoa(r-1)+`"`) {
			t.Errorf("no page break before row %d (year grids at %v)", r, rows)
		}
	}
	// The first chart of the first plan sheet (the Sector targets sheet,
	// added to the workbook before it is written, has charts of its own).
	drawing := regexp.MustCompile(`drawings/drawing\d+\.xml`).FindString(zipPart(t, exported, "xl/worksheets/_rels/sheet2.xml.rels"))
	first := regexp.MustCompile(`charts/chart\d+\.xml`).FindString(zipPart(t, exported, "xl/drawings/_rels/"+path.Base(drawing)+".rels"))
	chart := zipPart(t, exported, "xl/"+first)
	if strings.Count(chart, `<a:srgbClr val="404040"`) < 2 {
		t.Errorf("chart axis labels are not dark grey")
	}
	// The charts sit below the grids, from column A, each starting a
	// printed page of its own: tables and charts never share a page.
	ps := grid.PlanSheetOf(plans[0].Plan)
	chartRows := templates.ChartRows(ps, nil, 2)
	if last := rows[len(rows)-1] + templates.GridHeight(nil); chartRows[0] < last {
		t.Errorf("the first chart starts at row %d, inside the grids (which end at row %d)", chartRows[0], last-1)
	}
	anchors := regexp.MustCompile(`<xdr:from><xdr:col>(\d+)</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>(\d+)</xdr:row>`).FindAllStringSubmatch(zipPart(t, exported, "xl/"+strings.TrimPrefix(drawing, "../")), -1)
	if len(anchors) != len(chartRows) {
		t.Fatalf("%d chart anchors, want %d", len(anchors), len(chartRows))
	}
	for k, a := range anchors {
		if a[1] != "0" || a[2] != itoa(chartRows[k]-1) {
			t.Errorf("chart %d anchored at column %s row %s (0-based), want column 0 row %d", k+1, a[1], a[2], chartRows[k]-1)
		}
		if !strings.Contains(xml, `<brk id="`+itoa(chartRows[k]-2)+`"`) {
			t.Errorf("no page break on the row before chart %d (row %d)", k+1, chartRows[k])
		}
	}

	// The run report, the problem report, the reconciliation copy, the
	// annotated copy and the sector check report.
	run := filepath.Join(dir, "run.xlsx")
	if err := reports.WriteRunReport(run, sampleRunReport()); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, run, map[string]printWant{"Rows": {titles: "'Rows'!$A:$B,'Rows'!$1:$1", wide: true}, "Summary": {portrait: true}})

	batch, err := ReadFiles([]string{exported}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	batch.Problems = append(batch.Problems, pipeline.Problem{Severity: pipeline.Error, Message: "made up",
		Origin: pipeline.Origin{File: exported, Sheet: names[0], Cell: "B5", Row: 5, Column: 2}})
	problems := filepath.Join(dir, "problems.xlsx")
	if err := reports.WriteProblemReport(problems, batch); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, problems, map[string]printWant{"Problems": {titles: "'Problems'!$A:$C,'Problems'!$1:$1", wide: true}})

	annotated := filepath.Join(dir, "annotated.xlsx")
	if _, err := reports.AnnotateWorkbook(exported, annotated, batch.Problems); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, annotated, map[string]printWant{
		export.OverviewSheet: {wide: true}, names[0]: {}, names[1]: {}, reports.SectorSheetName: {wide: true, scale: reports.SectorPrintScale},
		reports.AnnotateSheet: {titles: "'" + reports.AnnotateSheet + "'!$A:$C,'" + reports.AnnotateSheet + "'!$1:$1", wide: true},
	})
	af, err := excelize.OpenFile(annotated)
	if err != nil {
		t.Fatal(err)
	}
	if got := af.GetSheetName(af.GetActiveSheetIndex()); got != reports.AnnotateSheet {
		t.Errorf("the annotated copy opens on %q, want %q", got, reports.AnnotateSheet)
	}
	af.Close()

	sector := filepath.Join(dir, "check.xlsx")
	if err := reports.WriteSectorReport(sector, report); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, sector, map[string]printWant{reports.CheckPrintSheet: {titles: "'Sector check'!$5:$5"},
		reports.SectorSheetName: {titles: "'Sector targets'!$A:$D,'Sector targets'!$5:$5", wide: true, scale: reports.SectorPrintScale}})

	rec := filepath.Join(dir, "reconcile.xlsx")
	if _, err := reports.WriteReconcileXLSX(rec, "", rrReconciliation("x.csv")); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, rec, map[string]printWant{reports.SummarySheet: {titles: "'Summary'!$13:$13"}})
	// The Summary prints up to its note (its location column is for the
	// screen); Sector targets prints across, then down.
	rf, err := excelize.OpenFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	area := ""
	for _, d := range rf.GetDefinedName() {
		if d.Name == "_xlnm.Print_Area" && d.Scope == reports.SummarySheet {
			area = d.RefersTo
		}
	}
	if !strings.HasPrefix(area, "'Summary'!$A$1:$L$") {
		t.Errorf("the Summary's print area is %q, want 'Summary'!$A$1:$L$<last row>", area)
	}
	sf, err := excelize.OpenFile(sector)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	if pl, err := sf.GetPageLayout(reports.SectorSheetName); err != nil || pl.PageOrder == nil || *pl.PageOrder != "overThenDown" {
		t.Errorf("Sector targets page order %v (%v), want overThenDown", deref(pl.PageOrder), err)
	}
}

// TestTemplatePrints: the template's plan and flat sheets print landscape
// with their titles, the Instructions portrait with rows tall enough for
// their wrapped paragraphs.
func TestTemplatePrints(t *testing.T) {
	dir := t.TempDir()
	for _, layout := range []string{templates.LayoutGrid, templates.LayoutFlat} {
		wb, err := templates.New(templates.Options{Layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, layout+".xlsx")
		if err := xlsx.WriteWorkbook(path, wb); err != nil {
			t.Fatal(err)
		}
		wb.Close()
		if layout == templates.LayoutFlat {
			checkPrint(t, path, map[string]printWant{templates.FlatSheet: {titles: "'" + templates.FlatSheet + "'!$A:$B,'" + templates.FlatSheet + "'!$1:$1", wide: true}})
			continue
		}
		checkPrint(t, path, map[string]printWant{
			templates.InstructionsSheet: {portrait: true},
			templates.PlanSheetName:     {titles: "'" + templates.PlanSheetName + "'!$1:$1"},
		})
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tall := 0
		for r := 1; r < 40; r++ {
			v, _ := f.GetCellValue(templates.InstructionsSheet, "A"+itoa(r))
			h, _ := f.GetRowHeight(templates.InstructionsSheet, r)
			if len(v) > 150 && h < 30 {
				t.Errorf("Instructions row %d: %d characters in a row %.0f points high", r, len(v), h)
			}
			if h >= 30 {
				tall++
			}
		}
		if tall == 0 {
			t.Error("no Instructions row is taller than a line")
		}
		// The paragraphs' column fits an A4 portrait page at 100% as
		// LibreOffice measures it (90 characters ran past the page's edge
		// in a PDF printed by LibreOffice; 80 fit): a wider column is cut
		// off there.
		if w, _ := f.GetColWidth(templates.InstructionsSheet, "A"); w > 80 {
			t.Errorf("Instructions column A is %.0f characters wide; over 80 it is cut off on the printed page", w)
		}
		f.Close()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// zipPart returns one part of an XLSX file.
func zipPart(t *testing.T, path, name string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("%s has no part %s", path, name)
	return ""
}

// TestExportOverviewAndRunFilter: the Overview's "Last updated" is a
// date-time cell and its era is in words; the run report's rows filter.
// (How totals travel is pipeline.ExportedPlan's.)
func TestExportOverviewAndRunFilter(t *testing.T) {
	dir := t.TempDir()
	plans := exExportPlans()
	path := filepath.Join(dir, "export.xlsx")
	if err := writeExportXLSX(path, plans, export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, _ := f.GetRows(export.OverviewSheet)
	hr := overviewHeaderRow(t, header)
	col := -1
	for i, h := range header[hr-1] {
		if h == "Last updated (UTC)" {
			col = i + 1
		}
	}
	if col < 0 {
		t.Fatalf("no Last updated column in %v", header[hr-1])
	}
	ref, _ := excelize.CoordinatesToCellName(col, hr+1)
	raw, _ := f.GetCellValue(export.OverviewSheet, ref, excelize.Options{RawCellValue: true})
	shown, _ := f.GetCellValue(export.OverviewSheet, ref)
	if _, err := strconv.ParseFloat(raw, 64); err != nil || shown != "2026-11-01 10:00:00" {
		t.Errorf("Last updated: raw %q shown %q, want a date-time serial shown 2026-11-01 10:00:00", raw, shown)
	}
	if !strings.Contains(strings.Join(header[hr], "|"), "2025 onwards") {
		t.Errorf("era not in words: %v", header[hr])
	}
	if note, _ := f.GetCellValue(export.OverviewSheet, "A3"); !strings.Contains(note, "post_2025") {
		t.Errorf("the era note is missing: %q", note)
	}
	run := filepath.Join(dir, "run.xlsx")
	if err := reports.WriteRunReport(run, sampleRunReport()); err != nil {
		t.Fatal(err)
	}
	rf, err := excelize.OpenFile(run)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	filtered := false
	for _, d := range rf.GetDefinedName() {
		if d.Name == "_xlnm._FilterDatabase" && d.Scope == "Rows" {
			filtered = true
		}
	}
	if !filtered || !strings.Contains(zipPart(t, run, "xl/worksheets/sheet1.xml"), "<autoFilter ") {
		t.Error("the run report's Rows sheet has no autofilter")
	}
}
