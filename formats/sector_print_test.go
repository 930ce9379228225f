package formats

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// TestSectorSheetChartsNotSplit: a check report of many plans prints at
// reports.SectorPrintScale over several pages; the chart data and the charts
// start pages of their own (column breaks); its row breaks fall before a
// chart, never through one, and between two breaks a page holds no more
// rows than it can at that scale (Excel's metrics, where a page holds the
// fewest rows). Checked in a PDF printed by
// LibreOffice: without the breaks a chart was cut across pages 1 and 2.
func TestSectorSheetChartsNotSplit(t *testing.T) {
	base := sectorTestReport(t).Plans
	var plans []sector.SectorPlanCheck
	for len(plans) < 24 {
		plans = append(plans, base...)
	}
	path := filepath.Join(t.TempDir(), "check.xlsx")
	f := excelize.NewFile()
	if err := reports.AddSectorSheet(f, plans, "x.csv"); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteSheet("Sheet1"); err != nil {
		t.Fatal(err)
	}
	if err := xlsx.WriteWorkbook(path, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The charts' first rows: their data blocks' headings in column AA.
	cells, err := r.GetCols(reports.SectorSheetName)
	if err != nil {
		t.Fatal(err)
	}
	tops := map[int]bool{}
	for i, v := range cells[reports.SectorChartCol-1] {
		if strings.HasPrefix(v, "Chart data:") {
			tops[i+1] = true
		}
	}
	if len(tops) < 10 {
		t.Fatalf("%d charts", len(tops))
	}
	var breaks []int
	part := zipPart(t, path, "xl/worksheets/sheet2.xml")
	// The chart data and the charts start pages of their own.
	if !strings.Contains(regexp.MustCompile(`<colBreaks.*</colBreaks>`).FindString(part), `<brk id="26" max="1048575" man="true"></brk><brk id="36" max="1048575" man="true"></brk>`) {
		t.Errorf("no page breaks before the chart data (AA) and the charts (AK): %s", regexp.MustCompile(`<colBreaks.*</colBreaks>`).FindString(part))
	}
	for _, m := range regexp.MustCompile(`<brk id="(\d+)"`).FindAllStringSubmatch(regexp.MustCompile(`<rowBreaks.*</rowBreaks>`).FindString(part), -1) {
		n, _ := strconv.Atoi(m[1])
		breaks = append(breaks, n+1) // the first row of the next page
	}
	if len(breaks) == 0 {
		t.Fatal("no page break: the charts of 24 plans do not fit one page")
	}
	scale := float64(reports.SectorPrintScale) / 100 // the sheet prints at a fixed scale
	perPage := int(((8.27-1.1)*72/scale - 45) / 15)
	prev := 1
	for _, b := range breaks {
		if !tops[b] {
			t.Errorf("a page starts at row %d, which is not a chart's first row", b)
		}
		if b-prev > perPage {
			t.Errorf("rows %d to %d are one page, more than the %d a page holds", prev, b-1, perPage)
		}
		prev = b
	}
}
