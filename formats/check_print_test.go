package formats

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// TestCheckReportPrints: `check --report x.xlsx` opens on a sheet laid out
// to print on A4 landscape at near full size: at most ten columns whose
// widths fit the printable width at 95% or more (the wide table printed
// at about 40%), the header repeated on every page, text wrapped in its
// column with the row high enough for it, a heading row per plan with its
// result, and a row per level and designated group with the result
// coloured. The wide table of every figure follows as a second sheet.
func TestCheckReportPrints(t *testing.T) {
	report := sectorTestReport(t)
	path := filepath.Join(t.TempDir(), "check.xlsx")
	if err := reports.WriteSectorReport(path, report); err != nil {
		t.Fatal(err)
	}
	checkPrint(t, path, map[string]printWant{reports.CheckPrintSheet: {titles: "'Sector check'!$5:$5"}, reports.SectorSheetName: {titles: "'Sector targets'!$A:$D,'Sector targets'!$5:$5", wide: true, scale: reports.SectorPrintScale}})
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 2 || got[0] != reports.CheckPrintSheet || got[1] != reports.SectorSheetName {
		t.Fatalf("sheets %q, want %q then %q", got, reports.CheckPrintSheet, reports.SectorSheetName)
	}
	if got := f.GetSheetName(f.GetActiveSheetIndex()); got != reports.CheckPrintSheet {
		t.Errorf("the report opens on %q, want %q", got, reports.CheckPrintSheet)
	}
	rows, err := f.GetRows(reports.CheckPrintSheet)
	if err != nil {
		t.Fatal(err)
	}

	// Width: A4 landscape, 0.4 in margins, 96 px an inch; a column of
	// width w takes w*7+5 px (Calibri 11).
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols > 10 {
		t.Errorf("%d columns, want at most 10", cols)
	}
	px, widths := 0.0, map[int]float64{}
	for c := 1; c <= cols; c++ {
		name, _ := excelize.ColumnNumberToName(c)
		w, err := f.GetColWidth(reports.CheckPrintSheet, name)
		if err != nil {
			t.Fatal(err)
		}
		widths[c], px = w, px+w*7+5
	}
	if scale := (11.69 - 0.8) * 96 / px; scale < 0.95 {
		t.Errorf("the columns are %.0f px wide: fitted to A4 landscape they print at %.0f%%, want 95%% or more", px, scale*100)
	}
	if old := sectorSheetPrintScale(t, f); old > 0.5 {
		t.Errorf("the wide sheet prints at %.0f%%: the test's model of widths is off", old*100)
	}

	// Wrapped text, rows high enough; merged paragraph rows span A:J.
	merged := map[int]bool{}
	mc, err := f.GetMergeCells(reports.CheckPrintSheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mc {
		c0, r0, _ := excelize.CellNameToCoordinates(m.GetStartAxis())
		c1, r1, _ := excelize.CellNameToCoordinates(m.GetEndAxis())
		if c0 != 1 || c1 != 10 || r0 != r1 {
			t.Errorf("merged range %s:%s, want one row across A:J", m.GetStartAxis(), m.GetEndAxis())
		}
		merged[r0] = true
	}
	total := 0.0
	for _, w := range widths {
		total += w
	}
	for i, r := range rows {
		rn := i + 1
		ht, err := f.GetRowHeight(reports.CheckPrintSheet, rn)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range r {
			w := widths[c+1]
			if merged[rn] {
				w = total
			}
			if float64(utf8.RuneCountInString(v)) <= w-1 {
				continue
			}
			ref, _ := excelize.CoordinatesToCellName(c+1, rn)
			id, _ := f.GetCellStyle(reports.CheckPrintSheet, ref)
			st, err := f.GetStyle(id)
			if err != nil || st.Alignment == nil || !st.Alignment.WrapText {
				t.Errorf("%s (%q) is wider than its column and does not wrap", ref, v)
			}
			if need := 15 * math.Ceil(float64(utf8.RuneCountInString(v))/(w-1)); ht < need {
				t.Errorf("row %d is %.0f pt high; %s needs at least %.0f for %q", rn, ht, ref, need, v)
			}
		}
	}

	// The header, a heading per plan, the figures.
	if len(rows) < 6 || strings.Join(rows[4], "|") != "Year|Level|Group|Headcount|Actual %|Target %|Gap (points)|Short (people)|Result|Reason / note" {
		t.Fatalf("header row 5: %q", rows[min(4, len(rows)-1)])
	}
	headings := 0
	for _, p := range report.Plans {
		for _, r := range rows {
			if len(r) > 0 && strings.Contains(r[0], p.Name) && strings.Contains(r[0], sectorOutcomeWords(p)) {
				headings++
				break
			}
		}
	}
	if headings != len(report.Plans) {
		t.Errorf("%d of %d plans have a heading row with their result", headings, len(report.Plans))
	}
	var shortRed, metGreen bool
	cache := map[int]string{}
	for i, r := range rows {
		if len(r) < 9 || r[1] != "top management" {
			continue
		}
		ref := "I" + itoa(i+1)
		switch fill := printFill(t, f, ref, cache); {
		case r[8] == "short" && fill == "FFC7CE":
			shortRed = true
		case r[8] == "met" && fill == "C6EFCE":
			metGreen = true
		}
	}
	if !shortRed || !metGreen {
		t.Errorf("results of top management not coloured (short red: %v, met green: %v)", shortRed, metGreen)
	}
}

// sectorSheetPrintScale is the scale at which the wide Sector targets
// sheet's table (A to X) prints fitted to A4 landscape, by the same model.
func sectorSheetPrintScale(t *testing.T, f *excelize.File) float64 {
	t.Helper()
	px := 0.0
	for c := 1; c <= 24; c++ {
		name, _ := excelize.ColumnNumberToName(c)
		w, err := f.GetColWidth(reports.SectorSheetName, name)
		if err != nil {
			t.Fatal(err)
		}
		px += w*7 + 5
	}
	return (11.69 - 0.8) * 96 / px
}

// printFill returns the RGB of a cell's solid fill, or "".
func printFill(t *testing.T, f *excelize.File, ref string, cache map[int]string) string {
	t.Helper()
	id, err := f.GetCellStyle(reports.CheckPrintSheet, ref)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cache[id]; ok {
		return c
	}
	st, err := f.GetStyle(id)
	c := ""
	if err == nil && st.Fill.Pattern == 1 && len(st.Fill.Color) > 0 {
		c = strings.ToUpper(st.Fill.Color[0])
		if len(c) == 8 {
			c = c[2:]
		}
	}
	cache[id] = c
	return c
}

// sectorOutcomeWords are the capitalised words of a plan's heading on the
// Sector targets sheet that say its outcome.
func sectorOutcomeWords(p sector.SectorPlanCheck) string {
	switch {
	case p.Reason != "":
		return "NOTHING COULD BE ASSESSED: "
	case p.Status == sector.SectorMet:
		return "MEETS every target"
	case p.Status == sector.SectorShort:
		return "FALLS SHORT of the targets"
	case p.Status == sector.SectorPartlyMet:
		return "NOT FULLY ASSESSED"
	}
	return "NOTHING COULD BE ASSESSED"
}
