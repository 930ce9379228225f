package grid_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
)

// TestGridMergedRangesBounded: a sheet that looks like a grid plan sheet
// (two metadata labels, a row of races) with merged ranges of whole rows
// (each within the 65,536 cells of one merge) must not be expanded cell by
// cell without bound: 4,000 such merges, a 23 KB file, would make 262
// million entries. It is an oversized-file error for the sheet.
func TestGridMergedRangesBounded(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	for cell, v := range map[string]string{"A1": "Plan name", "B1": "X", "A2": "Start date", "B2": "2026-09-01", "B3": "African", "C3": "Coloured"} {
		if err := f.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 3 { // 3 x 65,536 cells: past the bound
		if err := f.MergeCell("Sheet1", fmt.Sprintf("A%d", 5+4*k), fmt.Sprintf("XFD%d", 8+4*k)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "merges.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range batch.Problems {
		msgs = append(msgs, p.Message)
	}
	if text := strings.Join(msgs, "\n"); !strings.Contains(text, "merged ranges cover more than") || !strings.Contains(text, "oversized") {
		t.Errorf("problems:\n%s\nwant an oversized-file error about the merged ranges", text)
	}
}
