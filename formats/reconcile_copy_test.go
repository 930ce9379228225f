package formats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// rrMarksReconciliation is a reconciliation of src with one differing
// counter at each of the cells (sheet, cell): the workbook holds i, the
// service 1000+i.
func rrMarksReconciliation(src string, cells [][2]string) *diff.Reconciliation {
	p := diff.ReconciledPlan{Presence: diff.PresencePresent, Account: "acme", PlanID: 17, PlanName: "Acme 2026",
		Origin: pipeline.Origin{File: src, Sheet: cells[0][0], Row: 1, Column: 1}}
	t := diff.TargetDifference{YearNumber: 1, TargetType: pipeline.TargetAll}
	for i, c := range cells {
		col, row, err := excelize.CellNameToCoordinates(c[1])
		if err != nil {
			panic(err)
		}
		o := pipeline.Origin{File: src, Sheet: c[0], Cell: c[1], Row: row, Column: col}
		t.Counters = append(t.Counters, diff.CounterDifference{Counter: fmt.Sprintf("number_of_counter_%d", i),
			Workbook: int64(i), Server: int64(1000 + i), Origin: o, Location: diff.LocationOf(o)})
	}
	p.Targets = []diff.TargetDifference{t}
	return &diff.Reconciliation{Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{src}, Complete: true, Plans: []diff.ReconciledPlan{p}}
}

// rrWriteStreamed writes the annotated copy of src to dst and fails the
// test when the copy was left to excelize: these tests are about the
// streamed copy.
func rrWriteStreamed(t *testing.T, dst, src string, r *diff.Reconciliation) error {
	t.Helper()
	how, err := reports.WriteReconcileXLSX(dst, src, r)
	if err == nil && !how.Streamed {
		t.Errorf("%s: the streamed copy fell back: %v", src, how.Fallback)
	}
	return err
}

// rrWriteXLSX is reports.WriteReconcileXLSX for a caller that needs only
// its error.
func rrWriteXLSX(dst, src string, r *diff.Reconciliation) error {
	_, err := reports.WriteReconcileXLSX(dst, src, r)
	return err
}

// rrCommentTexts returns the comments of a sheet by cell.
func rrCommentTexts(t *testing.T, f *excelize.File, sheet string) map[string]string {
	t.Helper()
	cs, err := f.GetComments(sheet)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cs {
		out[strings.ToUpper(c.Cell)] = commentText(c)
	}
	return out
}

// rrSameValues fails when a sheet's values differ between two workbooks.
func rrSameValues(t *testing.T, a, b *excelize.File, sheet string) {
	t.Helper()
	ra, err := a.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Errorf("sheet %s: values changed:\n%v\n%v", sheet, ra, rb)
	}
}

// TestReconcileCopyKeepsExistingComments: workbooks that already carry
// comments, written by openpyxl (inline strings, VML without namespace
// prefixes) and re-saved by LibreOffice (shared strings): the marked
// cells are filled and commented, a comment a marked cell had stays below
// ours, the other comments stay as they were, a cell without a <c>
// element and a cell in a row absent from the sheet's data are created,
// and nothing else changes.
func TestReconcileCopyKeepsExistingComments(t *testing.T) {
	for _, name := range []string{"op_commented.xlsx", "lo_commented.xlsx"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(acceptanceDir, name)
			marks := [][2]string{{"Targets", "B2"}, {"Targets", "D2"}, {"Targets", "A1"}, {"Targets", "F2"}, {"Targets", "C5"}, {"Targets", "A3"}}
			dst := filepath.Join(t.TempDir(), "report.xlsx")
			if err := rrWriteStreamed(t, dst, src, rrMarksReconciliation(src, marks)); err != nil {
				t.Fatal(err)
			}
			checkStrictXLSX(t, dst)
			checkOneTabSelected(t, dst, reports.SummarySheet)
			f, err := excelize.OpenFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			orig, err := excelize.OpenFile(src)
			if err != nil {
				t.Fatal(err)
			}
			defer orig.Close()
			if got := f.GetSheetList(); fmt.Sprint(got) != "[Summary Changes Targets Notes]" {
				t.Errorf("sheets %v", got)
			}
			rrSameValues(t, orig, f, "Targets")
			rrSameValues(t, orig, f, "Notes")
			for _, ref := range []string{"A1", "B2", "C2", "D2", "E2", "F2", "A3", "D3", "C5", "D5"} {
				idx, _ := f.GetCellStyle("Targets", ref)
				fill := rawFillColor(f, idx)
				marked := strings.Contains(" B2 D2 A1 F2 C5 A3 ", " "+ref+" ")
				if marked && fill != templates.DiffFill {
					t.Errorf("%s filled %q, want %s", ref, fill, templates.DiffFill)
				}
				if !marked && fill == templates.DiffFill {
					t.Errorf("%s filled unexpectedly", ref)
				}
			}
			// A1 keeps its bold font.
			idx, _ := f.GetCellStyle("Targets", "A1")
			if st, err := f.GetStyle(idx); err != nil || st.Font == nil || !st.Font.Bold {
				t.Errorf("A1 lost its bold font: %v %+v", err, st)
			}
			texts := rrCommentTexts(t, f, "Targets")
			if len(texts) != 7 {
				t.Errorf("comments %v, want 6 marks and D3's own", texts)
			}
			for i, m := range marks {
				want := fmt.Sprintf("The service holds %d (this workbook: %d).", 1000+i, i)
				if got := texts[m[1]]; !strings.HasPrefix(got, "eepipe:\n"+want) {
					t.Errorf("%s comment %q, want ours first: %q", m[1], got, want)
				}
			}
			if got := texts["B2"]; !strings.HasSuffix(got, "\n---\nCheck the start date with HR") {
				t.Errorf("B2 comment %q: the consultant's comment must follow ours", got)
			}
			if got := texts["D3"]; got != "From the 2025 report" {
				t.Errorf("D3 comment %q, want the consultant's as it was", got)
			}
			if got := rrCommentTexts(t, f, "Notes")["A1"]; got != "Keep this sheet" {
				t.Errorf("Notes!A1 comment %q", got)
			}
			// The Summary lists every finding.
			rows, _ := f.GetRows(reports.SummarySheet)
			n := 0
			for _, r := range rows {
				if len(r) > 0 && r[0] == "counter differs" {
					n++
				}
			}
			if n != len(marks) {
				t.Errorf("Summary lists %d counters, want %d", n, len(marks))
			}
		})
	}
}

// TestReconcileCopyStringCellsAndManyMarks: shared-string and inline-string
// cells keep their text when marked; one sheet with 3,000 marks (more
// than a VML drawing's block of 1,024 shape ids), empty cells and whole
// rows absent from the sheet's data among them, gets each one filled and
// commented, and the cells around them unchanged.
func TestReconcileCopyStringCellsAndManyMarks(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.xlsx")
	f := excelize.NewFile()
	sheet := "Plan"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		t.Fatal(err)
	}
	f.SetCellStr(sheet, "A1", "Plan name")   // a shared string
	f.SetCellStr(sheet, "B1", "Inline text") // made an inline string below
	for r := 2; r <= 300; r += 2 {           // even rows only: odd rows are absent
		for c := 1; c <= 20; c += 2 { // odd columns only: even ones have no <c>
			ref, _ := excelize.CoordinatesToCellName(c, r)
			f.SetCellInt(sheet, ref, int64(r*100+c))
		}
	}
	if err := f.SaveAs(plain); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := filepath.Join(dir, "client.xlsx")
	rewriteZipPart(t, plain, src, "xl/worksheets/sheet1.xml", func(s string) string {
		i := strings.Index(s, `<c r="B1" t="s">`)
		if i < 0 {
			t.Fatalf("no shared-string B1 in %.300s", s)
		}
		j := strings.Index(s[i:], "</c>") + i + 4
		return s[:i] + `<c r="B1" t="inlineStr"><is><t>Inline text</t></is></c>` + s[j:]
	})
	marks := [][2]string{{sheet, "A1"}, {sheet, "B1"}}
	for r := 2; r <= 300; r++ {
		for c := 1; c <= 10; c++ { // existing and missing cells, existing and absent rows
			ref, _ := excelize.CoordinatesToCellName(c, r)
			marks = append(marks, [2]string{sheet, ref})
		}
	}
	marks = append(marks, [2]string{sheet, "Z999"}) // past the sheet's last row
	dst := filepath.Join(dir, "report.xlsx")
	if err := rrWriteStreamed(t, dst, src, rrMarksReconciliation(src, marks)); err != nil {
		t.Fatal(err)
	}
	checkStrictXLSX(t, dst)
	checkOneTabSelected(t, dst, reports.SummarySheet)
	out, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	orig, err := excelize.OpenFile(src)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	rrSameValues(t, orig, out, sheet)
	for _, ref := range []string{"A1", "B1"} {
		if v, _ := out.GetCellValue(sheet, ref); v != map[string]string{"A1": "Plan name", "B1": "Inline text"}[ref] {
			t.Errorf("%s = %q", ref, v)
		}
	}
	texts := rrCommentTexts(t, out, sheet)
	if len(texts) != len(marks) {
		t.Errorf("%d comments, want %d", len(texts), len(marks))
	}
	for i, m := range marks {
		idx, _ := out.GetCellStyle(sheet, m[1])
		if fill := rawFillColor(out, idx); fill != templates.DiffFill {
			t.Errorf("%s filled %q", m[1], fill)
		}
		if want := fmt.Sprintf("service holds %d (this workbook: %d)", 1000+i, i); !strings.Contains(texts[m[1]], want) {
			t.Errorf("%s comment %q, want %q", m[1], texts[m[1]], want)
		}
	}
	for _, ref := range []string{"K2", "L3", "A301", "C1"} {
		idx, _ := out.GetCellStyle(sheet, ref)
		if fill := rawFillColor(out, idx); fill != "" {
			t.Errorf("%s filled %q, not marked", ref, fill)
		}
	}
	// The VML drawing names each note shape once.
	if b := zipPart(t, dst, "xl/drawings/vmlDrawing1.vml"); strings.Count(b, "<v:shape ") != len(marks) {
		t.Errorf("VML drawing holds %d shapes, want %d", strings.Count(b, "<v:shape "), len(marks))
	}
}

// TestReconcileCopyOnlyTouchesMarkedSheets: the parts of a sheet that is
// not marked are copied as they were (its tab selection aside), and so are
// the shared strings.
func TestReconcileCopyOnlyTouchesMarkedSheets(t *testing.T) {
	src := filepath.Join(acceptanceDir, "lo_commented.xlsx")
	dst := filepath.Join(t.TempDir(), "report.xlsx")
	if err := rrWriteStreamed(t, dst, src, rrMarksReconciliation(src, [][2]string{{"Targets", "E4"}})); err != nil {
		t.Fatal(err)
	}
	// Notes is not marked: its part is copied as it was, but for its
	// selected tab, which the Summary takes.
	a := zipPart(t, src, "xl/worksheets/sheet2.xml")
	b := zipPart(t, dst, "xl/worksheets/sheet2.xml")
	a = strings.Replace(strings.Replace(a, ` tabSelected="true"`, "", 1), "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n", "", 1)
	if b = strings.TrimPrefix(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"); strings.TrimSpace(a) != strings.TrimSpace(b) {
		t.Errorf("the unmarked sheet changed beyond its tab selection:\n%s\n%s", a, b)
	}
	for _, part := range []string{"xl/comments2.xml", "xl/drawings/vmlDrawing2.vml", "xl/sharedStrings.xml"} {
		if zipPart(t, src, part) != zipPart(t, dst, part) {
			t.Errorf("%s changed", part)
		}
	}
}

// TestReconcileCopyRefusesHostileSheet: a marked sheet holding one XML
// token past the bound (here a 2 MiB attribute) is not copied: the error
// says the workbook cannot be annotated, and no file is written.
func TestReconcileCopyRefusesHostileSheet(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.xlsx")
	f := excelize.NewFile()
	f.SetCellInt("Sheet1", "B2", 5)
	if err := f.SaveAs(plain); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := filepath.Join(dir, "hostile.xlsx")
	rewriteZipPart(t, plain, src, "xl/worksheets/sheet1.xml", func(s string) string {
		return strings.Replace(s, "<sheetData>", `<sheetData><row r="1"><c r="A1" t="str"><v x="`+strings.Repeat("a", 2<<20)+`">1</v></c></row>`, 1)
	})
	dst := filepath.Join(dir, "report.xlsx")
	_, err := reports.WriteReconcileXLSX(dst, src, rrMarksReconciliation(src, [][2]string{{"Sheet1", "B2"}}))
	if !errors.Is(err, reports.ErrNotAnnotatable) {
		t.Fatalf("err = %v, want ErrNotAnnotatable", err)
	}
	if !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v, want the token bound named", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("a copy was written: %v", err)
	}
}

// TestReconcileCopyOneMarkPerCell: findings naming one cell in two
// spellings ("d2", "D2") mark it once, with both lines in its comment.
func TestReconcileCopyOneMarkPerCell(t *testing.T) {
	src := filepath.Join(acceptanceDir, "lo_commented.xlsx")
	dst := filepath.Join(t.TempDir(), "report.xlsx")
	if err := rrWriteStreamed(t, dst, src, rrMarksReconciliation(src, [][2]string{{"Targets", "d2"}, {"Targets", "D2"}})); err != nil {
		t.Fatal(err)
	}
	checkStrictXLSX(t, dst)
	if n := strings.Count(zipPart(t, dst, "xl/worksheets/sheet1.xml"), `r="D2"`); n != 1 {
		t.Errorf("D2 written %d times", n)
	}
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := rrCommentTexts(t, f, "Targets")["D2"]
	if !strings.Contains(got, "service holds 1000") || !strings.Contains(got, "service holds 1001") {
		t.Errorf("D2 comment %q, want both findings", got)
	}
}
