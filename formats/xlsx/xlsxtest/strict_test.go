package xlsxtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestStrictCheckerFinds: the strict re-reader reports the faults it is
// there for, so that a clean result of the other tests means something.
func TestStrictCheckerFinds(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xlsx")
	f := excelize.NewFile()
	st, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Color: "FF0000"}})
	f.SetCellValue("Sheet1", "A1", 1)
	f.SetCellStyle("Sheet1", "A1", "A1", st)
	if err := f.SaveAs(good); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if ps := StrictProblems(good); len(ps) > 0 {
		t.Fatalf("a plain excelize workbook fails the strict check: %q", ps)
	}
	for _, tc := range []struct {
		name, part string
		edit       func(string) string
		want       string
	}{
		{"colour", "xl/styles.xml", func(s string) string { return strings.Replace(s, `rgb="FFFF0000"`, `rgb="FF00000000"`, 1) }, "6 or 8 hex digits"},
		{"empty colour", "xl/styles.xml", func(s string) string { return strings.Replace(s, `rgb="FFFF0000"`, `rgb="FF"`, 1) }, "6 or 8 hex digits"},
		{"font id", "xl/styles.xml", func(s string) string { return strings.Replace(s, `fontId="1"`, `fontId="9"`, 1) }, "fontId 9 out of range"},
		{"style index", "xl/worksheets/sheet1.xml", func(s string) string { return strings.Replace(s, ` s="1"`, ` s="7"`, 1) }, "no such cell format"},
		{"broken xml", "xl/workbook.xml", func(s string) string { return strings.Replace(s, "</workbook>", "</workbok>", 1) }, "not well-formed"},
		{"lost part", "xl/_rels/workbook.xml.rels", func(s string) string { return strings.Replace(s, "styles.xml", "stiles.xml", 1) }, "lacks"},
	} {
		bad := filepath.Join(dir, tc.name+".xlsx")
		RewritePart(t, good, bad, tc.part, tc.edit)
		ps := StrictProblems(bad)
		if !strings.Contains(strings.Join(ps, "\n"), tc.want) {
			t.Errorf("%s: strict check found %q; want %q", tc.name, ps, tc.want)
		}
	}
}
