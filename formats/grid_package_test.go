package formats

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// gpParts returns the parts of a written workbook by name.
func gpParts(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(data)
	}
	return out
}

// gpSheetSnapshot is what excelize reads of a sheet: every cell's type,
// value and style, the merged ranges, validations, widths, panes and
// page setup.
func gpSheetSnapshot(t *testing.T, f *excelize.File, sheet string) string {
	t.Helper()
	var b strings.Builder
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	for r := 1; r <= len(rows); r++ {
		for c := 1; c <= cols+1; c++ {
			ref, _ := excelize.CoordinatesToCellName(c, r)
			typ, _ := f.GetCellType(sheet, ref)
			if typ == excelize.CellTypeInlineString {
				typ = excelize.CellTypeSharedString // text either way
			}
			v, _ := f.GetCellValue(sheet, ref)
			raw, _ := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
			s, _ := f.GetCellStyle(sheet, ref)
			if v != "" || s != 0 {
				fmt.Fprintf(&b, "%s t%d %q %q s%d\n", ref, typ, v, raw, s)
			}
		}
		h, _ := f.GetRowHeight(sheet, r)
		fmt.Fprintf(&b, "row %d height %v\n", r, h)
	}
	merges, _ := f.GetMergeCells(sheet)
	for _, m := range merges {
		fmt.Fprintf(&b, "merge %s:%s\n", m.GetStartAxis(), m.GetEndAxis())
	}
	dvs, _ := f.GetDataValidations(sheet)
	for _, dv := range dvs {
		fmt.Fprintf(&b, "validation %s %s %s %s %s %v %v %v %s %s %s %s\n", dv.Sqref, dv.Type, dv.Operator, dv.Formula1, dv.Formula2,
			dv.AllowBlank, dv.ShowErrorMessage, dv.ShowInputMessage, deref(dv.ErrorStyle), deref(dv.ErrorTitle), deref(dv.Error), deref(dv.Prompt))
	}
	for c := 1; c <= cols+3; c++ {
		name, _ := excelize.ColumnNumberToName(c)
		w, _ := f.GetColWidth(sheet, name)
		fmt.Fprintf(&b, "width %s %v\n", name, w)
	}
	p, _ := f.GetPanes(sheet)
	fmt.Fprintf(&b, "panes %+v\n", p)
	pl, _ := f.GetPageLayout(sheet)
	fmt.Fprintf(&b, "page %s %v %v %v\n", deref(pl.Orientation), derefInt(pl.Size), derefInt(pl.FitToWidth), derefInt(pl.FitToHeight))
	pm, _ := f.GetPageMargins(sheet)
	fl := func(v *float64) any {
		if v == nil {
			return "<nil>"
		}
		return *v
	}
	fmt.Fprintf(&b, "margins %v %v %v %v %v %v\n", fl(pm.Left), fl(pm.Right), fl(pm.Top), fl(pm.Bottom), fl(pm.Header), fl(pm.Footer))
	if hf, _ := f.GetHeaderFooter(sheet); hf != nil {
		fmt.Fprintf(&b, "footer %q\n", hf.OddFooter)
	}
	props, _ := f.GetSheetProps(sheet)
	fmt.Fprintf(&b, "fit %v\n", props.FitToPage != nil && *props.FitToPage)
	return b.String()
}

// TestGridPlanSheetReadsBackAsWritten: the plan sheets the package writer
// writes (the grid workbook of eepipe export --layout grid) read back,
// through excelize's own reader and through eepipe's streaming reader, as
// the plans written: every cell eepipe reads holds, for excelize, the
// text eepipe read there; every number excelize reads on a plan sheet is
// a cell eepipe read; the plans read are the plans written; each plan
// sheet has print titles and page breaks; text that XML or Office
// escapes included.
func TestGridPlanSheetReadsBackAsWritten(t *testing.T) {
	ids := pipeline.CompanyIDs{VAT: "0412345678", Registration: " 2009/012345/07"}
	var plans []*pipeline.InputPlan
	for i, name := range []string{"Acme 2026", "A <&> \"b\" 'c' _x0041_ tab end ", "Ümlaut — plan line"} {
		plans = append(plans, pipeline.FromServer(exStoredPlan(int64(7+i), name, "2026-09-01", 2+i), ids))
	}
	plans[0].ScorecardID = "scorecard_1"
	plans[2].Account = "acme"
	path := filepath.Join(t.TempDir(), "grid.xlsx")
	if err := writeGridXLSX(path, plans, nil); err != nil {
		t.Fatal(err)
	}
	// The readers trim the spaces around a value (the cells keep them,
	// as checked below).
	got, want := model(readGridModel(t, path, nil)), model(plans)
	for i := range want {
		want[i].Name = strings.TrimSpace(want[i].Name)
		want[i].Company.Registration = strings.TrimSpace(want[i].Company.Registration)
	}
	if len(got) != len(want) {
		t.Fatalf("eepipe reads %d plans, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, w := got[i], want[i]
			g.Targets, w.Targets = nil, nil
			t.Errorf("plan %d reads as %+v (%d targets), want %+v (%d targets)", i, g, len(got[i].Targets), w, len(want[i].Targets))
		}
	}

	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, probs := readGridWorkbook(t, path, nil)
	if probs.HasErrors() {
		t.Fatalf("problems reading back:\n%s", problemsText(probs))
	}
	read := map[string]bool{} // sheet!cell of every cell eepipe read
	sheets := map[string]bool{}
	check := func(r pipeline.Record, c pipeline.Cell) {
		t.Helper()
		o := c.Origin.WithCell()
		if o.Cell == "" {
			return
		}
		if label := r.Origin.WithCell(); o.Sheet == label.Sheet && o.Cell == label.Cell {
			// The year, financial year and target type of a grid are
			// read from its label.
			if v, _ := f.GetCellValue(o.Sheet, o.Cell); !strings.HasPrefix(v, "Year ") {
				t.Errorf("%s!%s: grid label %q", o.Sheet, o.Cell, v)
			}
			return
		}
		read[o.Sheet+"!"+o.Cell] = true
		sheets[o.Sheet] = true
		if v, err := f.GetCellValue(o.Sheet, o.Cell); err != nil || v != c.Text {
			t.Errorf("%s!%s: excelize reads %q (%v), eepipe %q", o.Sheet, o.Cell, v, err, c.Text)
		}
	}
	for _, r := range recs {
		for _, c := range r.Cells {
			check(r, c)
		}
		for _, c := range r.Counters {
			check(r, c.Cell)
		}
		if r.Fixed != nil {
			for i, has := range r.Fixed.Has {
				if has {
					check(r, r.Fixed.Cells[i])
				}
			}
		}
	}
	if len(sheets) != len(plans) {
		t.Fatalf("eepipe read cells on %d sheets, want %d", len(sheets), len(plans))
	}
	for s := range sheets {
		rows, err := f.GetRows(s, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			for c, v := range row {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					continue
				}
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				if typ, _ := f.GetCellType(s, ref); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
					continue // text that looks like a number (an identifier)
				}
				if !read[s+"!"+ref] {
					t.Errorf("%s!%s: the number %s excelize reads is not a cell eepipe read", s, ref, v)
				}
			}
		}
	}
	titles := map[string]bool{}
	for _, d := range f.GetDefinedName() {
		if d.Name == "_xlnm.Print_Titles" {
			titles[d.Scope] = true
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := gpParts(t, raw)
	for s := range sheets {
		if !titles[s] {
			t.Errorf("%q has no print titles (names %v)", s, f.GetDefinedName())
		}
		idx, _ := f.GetSheetIndex(s)
		part := fmt.Sprintf("xl/worksheets/sheet%d.xml", idx+1)
		if !strings.Contains(parts[part], "<rowBreaks") {
			t.Errorf("%q (%s) has no page breaks", s, part)
		}
	}
	checkStrictXLSX(t, path)
}

// TestGridSectorSheetStreamed: the export's Sector targets sheet, its data
// rows written into the sheet's part (export.Options.Sector), reads back as
// the sheet AddSectorSheet writes with excelize alone: every cell of the
// table and of the chart data, styles, formats, filter, page setup and
// breaks, and the charts; with a plan that has no years and one without a
// sector among them.
func TestGridSectorSheetStreamed(t *testing.T) {
	plans := benchExportPlans(12)
	plans[3].Plan.Sector = ""
	plans[5].Plan.Targets = nil
	var inputs []*pipeline.InputPlan
	for _, p := range plans {
		inputs = append(inputs, p.Plan)
	}
	report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
	dir := t.TempDir()
	for _, noCharts := range []bool{false, true} {
		streamed, ref := filepath.Join(dir, "streamed.xlsx"), filepath.Join(dir, "ref.xlsx")
		opts := export.Options{NoCharts: noCharts, Sector: &export.Sector{Plans: report.Plans, Source: report.TargetsSource}}
		if err := writeExportXLSX(streamed, plans, opts); err != nil {
			t.Fatal(err)
		}
		opts.Sector = nil
		opts.BeforePlanSheets = func(f *excelize.File) error {
			return reports.AddSectorSheetWith(f, report.Plans, report.TargetsSource, reports.SectorSheetOptions{NoCharts: noCharts})
		}
		if err := writeExportXLSX(ref, plans, opts); err != nil {
			t.Fatal(err)
		}
		checkStrictXLSX(t, streamed)
		a, err := excelize.OpenFile(streamed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := excelize.OpenFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.GetSheetList(), b.GetSheetList(); !slices.Equal(got, want) {
			t.Fatalf("sheets %v, want %v", got, want)
		}
		got, want := gpSheetSnapshot(t, a, reports.SectorSheetName), gpSheetSnapshot(t, b, reports.SectorSheetName)
		if got != want {
			t.Errorf("no charts %v: the Sector targets sheet differs:\n got %s\nwant %s", noCharts, got, want)
		}
		if !strings.Contains(got, "not assessable") || strings.Count(got, "\n") < 100 || strings.Contains(got, "Chart data: ") == noCharts {
			t.Errorf("the snapshot misses the data rows:\n%s", got)
		}
		cf := func(f *excelize.File) string {
			m, _ := f.GetConditionalFormats(reports.SectorSheetName)
			var out []string
			for rng, opts := range m {
				for _, o := range opts {
					format := -1
					if o.Format != nil {
						format = *o.Format
					}
					out = append(out, fmt.Sprintf("%s %s %s %d", rng, o.Type, o.Criteria, format))
				}
			}
			slices.Sort(out)
			return strings.Join(out, "\n")
		}
		if cfA, cfB := cf(a), cf(b); cfA != cfB || cfA == "" {
			t.Errorf("conditional formats %v, want %v", cfA, cfB)
		}
		a.Close()
		b.Close()
		rawA, _ := os.ReadFile(streamed)
		rawB, _ := os.ReadFile(ref)
		pa, pb := gpParts(t, rawA), gpParts(t, rawB)
		tail := func(x string) string { return x[strings.Index(x, "</sheetData>"):] }
		if got, want := tail(pa["xl/worksheets/sheet2.xml"]), tail(pb["xl/worksheets/sheet2.xml"]); got != want {
			t.Errorf("after the rows:\n got %s\nwant %s", got, want)
		}
		if !noCharts {
			for i := 1; i <= 11; i++ { // the sector charts come first
				name := fmt.Sprintf("xl/charts/chart%d.xml", i)
				if pa[name] != pb[name] || pa[name] == "" {
					t.Errorf("%s differs", name)
				}
			}
		}
	}
}
