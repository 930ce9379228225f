package formats

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
)

// TestGridSparseRowsBounded: a workbook without a flat table whose rows
// each hold one cell in column XFD is a few kilobytes, but read as grid
// text rows of 16,384 columns each it took 256 KiB a row (1,000 rows:
// 494 MB; 20,000 rows, the rows a grid sheet is scanned for: 10 GB). It is
// an oversized-file error, with memory bounded.
func TestGridSparseRowsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads in a process of its own")
	}
	var b strings.Builder
	for r := 1; r <= 400; r++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>`, r, r)
	}
	path := xlsxtest.SheetData(t, "sparse.xlsx", b.String())
	peak, out := hostileReadInProcess(t, path, 0)
	t.Logf("peak RSS %.1f MB", float64(peak)/1e6)
	if !strings.Contains(out, "oversized") || !strings.Contains(out, "spread over more than") {
		t.Errorf("problems:\n%s\nwant an oversized-file error for the sheet", out)
	}
	if peak > 200e6 && !hostileRace {
		t.Errorf("peak RSS %.1f MB, want under 200 MB", float64(peak)/1e6)
	}
}

// TestGridDenseSheetBounded: a workbook with no flat table whose one sheet
// holds many small cells is read with memory bounded, not 450 MB of cells:
// 300,000 cells within the per-sheet bound (read as a grid plan sheet,
// which is kept whole until the reader knows whether it is a grid) are an
// oversized-file error past grid.MaxSheetCells; a million, over the
// per-sheet bound and with no sign of a plan sheet, are scanned keeping
// nothing and the file has no table.
func TestGridDenseSheetBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads in a process of its own")
	}
	for _, tc := range []struct {
		rows int
		want string
	}{
		{3000, "a grid plan sheet holds a few thousand"},
		{10000, "no table found"},
	} {
		var b strings.Builder
		for r := 1; r <= tc.rows; r++ {
			fmt.Fprintf(&b, `<row r="%d">`, r)
			for c := 0; c < 100; c++ {
				b.WriteString(`<c><v>1</v></c>`)
			}
			b.WriteString(`</row>`)
		}
		if large := b.Len() > xlsx.DefaultMaxGridSheet; large != (tc.rows == 10000) {
			t.Fatalf("%d rows take %d bytes", tc.rows, b.Len())
		}
		path := xlsxtest.SheetData(t, fmt.Sprintf("dense-%d.xlsx", tc.rows), b.String())
		peak, out := hostileReadInProcess(t, path, 0)
		t.Logf("%d rows: peak RSS %.1f MB", tc.rows, float64(peak)/1e6)
		if !strings.Contains(out, "error") || !strings.Contains(out, tc.want) {
			t.Errorf("%d rows: problems:\n%s\nwant an error with %q", tc.rows, out, tc.want)
		}
		if peak > 200e6 && !hostileRace {
			t.Errorf("%d rows: peak RSS %.1f MB, want under 200 MB", tc.rows, float64(peak)/1e6)
		}
	}
}
