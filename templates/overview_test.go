package templates

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestWrapNoteReadBack: a long note in column A is merged across the
// columns that fit noteWidth, wrapped, and its row made tall enough, as a
// saved workbook read back shows; the Overview's header style is its dark
// blue fill with white bold text.
func TestWrapNoteReadBack(t *testing.T) {
	f := excelize.NewFile()
	const sheet = "Sheet1"
	st, err := NewOverviewStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Repeat("a note that runs on ", 20) // 400 characters
	if err := f.SetCellStr(sheet, "A2", note); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCellStyle(sheet, "A2", "A2", st.Note); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCellStyle(sheet, "A4", "A4", st.Header); err != nil {
		t.Fatal(err)
	}
	// 60 + 50 + 40 fit 150; the fourth column would pass it.
	if err := WrapNote(f, sheet, 2, []float64{60, 50, 40, 30}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "note.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	merges, err := g.GetMergeCells(sheet)
	if err != nil || len(merges) != 1 || merges[0].GetStartAxis() != "A2" || merges[0].GetEndAxis() != "C2" {
		t.Fatalf("merges = %v, %v; want A2:C2", merges, err)
	}
	if h, err := g.GetRowHeight(sheet, 2); err != nil || h != 45 { // 400 × 1.1 / 150 → 3 lines of 15 pt
		t.Errorf("row 2 height = %v, %v; want 45", h, err)
	}
	id, _ := g.GetCellStyle(sheet, "A2")
	s, err := g.GetStyle(id)
	if err != nil || s.Alignment == nil || !s.Alignment.WrapText || s.Font == nil || !s.Font.Italic {
		t.Errorf("A2's style = %+v, %v; want the note's italics, wrapped", s, err)
	}
	id, _ = g.GetCellStyle(sheet, "A4")
	h, err := g.GetStyle(id)
	if err != nil || h.Font == nil || !h.Font.Bold || h.Font.Color != "FFFFFF" || len(h.Fill.Color) != 1 || h.Fill.Color[0] != "1F4E79" {
		t.Errorf("the header style = %+v, %v; want white bold on 1F4E79", h, err)
	}
}
