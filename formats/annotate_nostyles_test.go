package formats

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// TestAnnotateWorkbookWithoutStyleSheet: xl/styles.xml is optional, and a
// hand-made or generated workbook may have none. validate --annotate of
// such a workbook ended in a nil-pointer panic inside excelize (exit 3,
// "internal error"); it must write the annotated copy like any other.
func TestAnnotateWorkbookWithoutStyleSheet(t *testing.T) {
	parts := xlsxParts(t, smallFlatXLSX(t, func(f *excelize.File) {
		_ = f.SetCellValue("Targets", "F2", -3) // a negative counter: an error at F2
	}))
	delete(parts, "xl/styles.xml")
	parts["xl/_rels/workbook.xml.rels"] = regexp.MustCompile(`<Relationship [^>]*styles\.xml"[^>]*>(</Relationship>)?`).
		ReplaceAll(parts["xl/_rels/workbook.xml.rels"], nil)
	parts["[Content_Types].xml"] = regexp.MustCompile(`<Override PartName="/xl/styles\.xml"[^>]*>(</Override>)?`).
		ReplaceAll(parts["[Content_Types].xml"], nil)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "nostyles.xlsx"), filepath.Join(dir, "annotated.xlsx")
	if err := os.WriteFile(src, zipParts(parts), 0o644); err != nil {
		t.Fatal(err)
	}
	batch, err := ReadFiles([]string{src}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !batch.Problems.HasErrors() {
		t.Fatalf("want an error for the negative counter; problems: %v", batch.Problems)
	}
	marked, err := reports.AnnotateWorkbook(src, dst, batch.Problems)
	if err != nil || marked == 0 {
		t.Fatalf("AnnotateWorkbook = %d, %v; want the copy written with the error's cell marked", marked, err)
	}
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if idx, _ := f.GetSheetIndex(reports.AnnotateSheet); idx < 0 {
		t.Errorf("the copy has no %q sheet: %v", reports.AnnotateSheet, f.GetSheetList())
	}
	if v, _ := f.GetCellValue("Targets", "A2"); v != "Fuzz Plan" {
		t.Errorf("Targets!A2 = %q in the copy, want the input's value", v)
	}
	// The reconciliation's XLSX copy opens the input the same way.
	if _, err := reports.WriteReconcileXLSX(filepath.Join(dir, "reconcile.xlsx"), src, &diff.Reconciliation{}); err != nil {
		t.Errorf("reconciliation copy of a workbook without a style sheet: %v", err)
	}
}
