package formats

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// rrFreeName is the name a sheet the copy adds takes: name, or "name (2)",
// "name (3)" ..., the first not among sheets (ignoring case, as Excel).
func rrFreeName(sheets []string, name string) string {
	out := name
	for i := 2; slices.ContainsFunc(sheets, func(s string) bool { return strings.EqualFold(s, out) }); i++ {
		out = fmt.Sprintf("%s (%d)", name, i)
	}
	return out
}

// rrCheckCopy writes the annotated copy of src with a difference at each
// of marks and checks it as a reader of another program would: the
// strict re-reader accepts it, every sheet of src keeps its values,
// formulas and visibility, src's defined names are all still there, each
// marked cell carries the difference fill and its comment, and the
// Summary is the active sheet. stream says whether the streamed copy must
// handle src (false: it may fall back to excelize). With
// EEPIPE_RRCOPY_OUT set, the copy is also saved in that folder, for
// testdata/acceptance/check_rv_copies.sh to open in LibreOffice and
// openpyxl.
func rrCheckCopy(t *testing.T, src string, marks [][2]string, stream bool, summary string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "report.xlsx")
	how, err := reports.WriteReconcileXLSX(dst, src, rrMarksReconciliation(src, marks))
	if err != nil {
		t.Fatal(err)
	}
	fellBack := !how.Streamed
	if stream && fellBack {
		t.Errorf("the streamed copy fell back: %v", how.Fallback)
	}
	if out := os.Getenv("EEPIPE_RRCOPY_OUT"); out != "" {
		b, _ := os.ReadFile(dst)
		name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_") + ".xlsx"
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("fell back: %v", fellBack)
	checkStrictXLSX(t, dst)
	checkOneTabSelected(t, dst, summary)
	orig, err := excelize.OpenFile(src)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	changes := rrFreeName(orig.GetSheetList(), reports.ChangesSheet)
	if want, got := append([]string{summary, changes}, orig.GetSheetList()...), f.GetSheetList(); !slices.Equal(want, got) {
		t.Errorf("sheets %q, want %q", got, want)
	}
	// Every mark is a row of the Changes sheet: where, the file's and
	// the service's values, the class, the comment.
	listed := map[string][]string{}
	rows, _ := f.GetRows(changes)
	for _, row := range rows[1:] {
		if len(row) > 1 {
			listed[row[0]+"!"+row[1]] = row
		}
	}
	for i, m := range marks {
		row := listed[m[0]+"!"+strings.ToUpper(m[1])]
		want := []string{m[0], strings.ToUpper(m[1]), "", "", "", "", strconv.Itoa(i), strconv.Itoa(1000 + i), "differs", ""}
		if len(row) < 11 || !slices.Equal(row[:2], want[:2]) || !slices.Equal(row[6:10], want[6:10]) || !strings.Contains(row[10], fmt.Sprintf("service holds %d", 1000+i)) {
			t.Errorf("Changes row of %s!%s: %q, want %q and the comment", m[0], m[1], row, want)
		}
	}
	for _, sheet := range orig.GetSheetList() {
		rrSameValues(t, orig, f, sheet)
		va, _ := orig.GetSheetVisible(sheet)
		vb, _ := f.GetSheetVisible(sheet)
		if va != vb {
			t.Errorf("sheet %s: visible %v, was %v", sheet, vb, va)
		}
		rows, _ := orig.GetRows(sheet)
		for r, row := range rows {
			for c := range row {
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				fa, _ := orig.GetCellFormula(sheet, ref)
				fb, _ := f.GetCellFormula(sheet, ref)
				if fa != fb {
					t.Errorf("%s!%s formula %q, was %q", sheet, ref, fb, fa)
				}
			}
		}
	}
	names := map[string]bool{}
	for _, d := range f.GetDefinedName() {
		names[d.Name+"|"+d.Scope+"|"+d.RefersTo] = true
	}
	for _, d := range orig.GetDefinedName() {
		if !names[d.Name+"|"+d.Scope+"|"+d.RefersTo] {
			t.Errorf("defined name %+v lost", d)
		}
	}
	for i, m := range marks {
		idx, err := f.GetCellStyle(m[0], m[1])
		if err != nil {
			t.Errorf("%s!%s: %v", m[0], m[1], err)
			continue
		}
		if fill := rawFillColor(f, idx); fill != templates.DiffFill {
			t.Errorf("%s!%s filled %q, want %s", m[0], m[1], fill, templates.DiffFill)
		}
		want := fmt.Sprintf("service holds %d (this workbook: %d)", 1000+i, i)
		if got := rrCommentTexts(t, f, m[0])[strings.ToUpper(m[1])]; !strings.Contains(got, want) {
			t.Errorf("%s!%s comment %q, want %q", m[0], m[1], got, want)
		}
	}
	return dst
}

// TestReconcileCopyOtherPrograms: workbooks written by openpyxl and
// re-saved by LibreOffice (testdata/acceptance/make_reconcile_shapes.py) with a sheet
// name holding an apostrophe and non-ASCII letters, a merged title, a
// formula, print titles and an autofilter, a comment by another author, a
// chart, a sheet already named Summary and hidden sheets.
func TestReconcileCopyOtherPrograms(t *testing.T) {
	main := "O'Brien \u2013 Plan \u00f1"
	for _, name := range []string{"op_rv_features.xlsx", "lo_rv_features.xlsx"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(acceptanceDir, name)
			marks := [][2]string{{main, "A1"}, {main, "B1"}, {main, "C3"}, {main, "D4"}, {main, "E5"}, {main, "H20"},
				{"Hidden", "B1"}, {"VeryHidden", "B1"}, {"Summary", "B2"}}
			dst := rrCheckCopy(t, src, marks, true, "Summary (2)")
			f, err := excelize.OpenFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := rrCommentTexts(t, f, main)["C3"]; !strings.Contains(got, "Confirmed by HR") {
				t.Errorf("C3 lost the consultant's comment: %q", got)
			}
		})
	}
}

// rrCraftedBook writes a one-sheet workbook whose sheet part is sheetXML.
func rrCraftedBook(t *testing.T, sheetXML string) string {
	t.Helper()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.xlsx")
	f := excelize.NewFile()
	f.SetCellInt("Sheet1", "A1", 1)
	if err := f.SaveAs(plain); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := filepath.Join(dir, "crafted.xlsx")
	rewriteZipPart(t, plain, src, "xl/worksheets/sheet1.xml", func(string) string { return sheetXML })
	return src
}

const rrWS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`

// TestReconcileCopyCraftedSheets: worksheet XML as other programs write
// it, each cell of it marked or not.
func TestReconcileCopyCraftedSheets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sheet  string
		marks  []string
		stream bool
		damage bool // refused as damaged, as before the streamed copy
		check  func(t *testing.T, sheetXML string)
	}{
		{name: "no refs, self-closing", stream: true,
			sheet: rrWS + `<sheetData><row><c t="inlineStr"><is><t>a</t></is></c><c/><c><v>2</v></c></row><row/><row spans="1:3"><c><v>5</v></c><c/></row></sheetData></worksheet>`,
			marks: []string{"B1", "C1", "A2", "B3", "C3", "A5"}},
		{name: "shared and array formulas", stream: true,
			sheet: rrWS + `<dimension ref="A1:C3"/><sheetData>` +
				`<row r="1"><c r="A1"><v>1</v></c><c r="B1"><f t="shared" ref="B1:B3" si="0">A1*2</f><v>2</v></c><c r="C1"><f t="array" ref="C1:C3">A1:A3*3</f><v>3</v></c></row>` +
				`<row r="2"><c r="A2"><v>2</v></c><c r="B2"><f t="shared" si="0"/><v>4</v></c><c r="C2"><v>6</v></c></row>` +
				`<row r="3"><c r="A3"><v>3</v></c><c r="B3"><f t="shared" si="0"/><v>6</v></c><c r="C3"><v>9</v></c></row></sheetData></worksheet>`,
			marks: []string{"B1", "B2", "C1", "C2"}},
		{name: "rich inline string", stream: true,
			sheet: rrWS + `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><r><rPr><b/></rPr><t>Bold</t></r><r><t xml:space="preserve"> plain</t></r></is></c><c r="B1" t="str"><f>A1&amp;"!"</f><v>Bold plain!</v></c></row></sheetData></worksheet>`,
			marks: []string{"A1", "B1"}},
		{name: "marks beyond the dimension", stream: true,
			sheet: rrWS + `<dimension ref="A1:B2"/><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="B2"><v>2</v></c></row></sheetData></worksheet>`,
			marks: []string{"B2", "D9"},
			check: func(t *testing.T, s string) {
				if !strings.Contains(s, `<dimension ref="A1:D9"/>`) {
					t.Errorf("dimension not widened to A1:D9:\n%s", s)
				}
			}},
		{name: "dimension of one cell", stream: true,
			sheet: rrWS + `<dimension ref="B2"/><sheetData><row r="2"><c r="B2"><v>2</v></c></row></sheetData></worksheet>`,
			marks: []string{"A1"},
			check: func(t *testing.T, s string) {
				if !strings.Contains(s, `<dimension ref="A1:B2"/>`) {
					t.Errorf("dimension not widened to A1:B2:\n%s", s)
				}
			}},
		{name: "prefixed SpreadsheetML",
			sheet: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + `<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData><x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c><x:c r="B1"><x:v>2</x:v></x:c></x:row></x:sheetData></x:worksheet>`,
			marks: []string{"B1", "C3"}},
		{name: "rows out of order", damage: true,
			sheet: rrWS + `<sheetData><row r="3"><c r="A3"><v>3</v></c></row><row r="1"><c r="A1"><v>1</v></c></row></sheetData></worksheet>`,
			marks: []string{"A1", "A3", "B2"}},
		{name: "cells out of order", damage: true,
			sheet: rrWS + `<sheetData><row r="1"><c r="C1"><v>3</v></c><c r="A1"><v>1</v></c></row></sheetData></worksheet>`,
			marks: []string{"A1", "B1"}},
		{name: "cell of another row", damage: true,
			sheet: rrWS + `<sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B2"><v>2</v></c></row></sheetData></worksheet>`,
			marks: []string{"A1", "B2"}},
		{name: "merged mark", stream: true,
			sheet: rrWS + `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Title</t></is></c><c r="B1"/><c r="C1"/></row><row r="2"><c r="A2"><v>7</v></c></row></sheetData><mergeCells count="1"><mergeCell ref="A1:C1"/></mergeCells></worksheet>`,
			marks: []string{"A1", "B1", "A2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := rrCraftedBook(t, tc.sheet)
			var marks [][2]string
			for _, m := range tc.marks {
				marks = append(marks, [2]string{"Sheet1", m})
			}
			if tc.damage {
				_, err := reports.WriteReconcileXLSX(filepath.Join(t.TempDir(), "report.xlsx"), src, rrMarksReconciliation(src, marks))
				if !errors.Is(err, reports.ErrNotAnnotatable) || !strings.Contains(err.Error(), "the sheet is damaged") || !strings.Contains(err.Error(), "Sheet1") {
					t.Errorf("err = %v, want the sheet named as damaged", err)
				}
				return
			}
			dst := rrCheckCopy(t, src, marks, tc.stream, reports.SummarySheet)
			if tc.check != nil {
				tc.check(t, zipPart(t, dst, "xl/worksheets/sheet1.xml"))
			}
		})
	}
}

// rrRezip copies the package src to dst with each entry stored
// (uncompressed) or deflated, as method says.
func rrRezip(t *testing.T, src, dst string, method uint16) {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	for _, e := range zr.File {
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.Name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReconcileCopyZipVariants: stored entries, entries with data
// descriptors (Go's writer), and a zip64 package (Info-ZIP zip -fz,
// rv_zip64.xlsx) are copied readable.
func TestReconcileCopyZipVariants(t *testing.T) {
	base := filepath.Join(acceptanceDir, "lo_commented.xlsx")
	marks := [][2]string{{"Targets", "B2"}, {"Targets", "C5"}}
	t.Run("stored", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "stored.xlsx")
		rrRezip(t, base, src, zip.Store)
		rrCheckCopy(t, src, marks, true, reports.SummarySheet)
	})
	t.Run("data descriptors", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "dd.xlsx")
		rrRezip(t, base, src, zip.Deflate)
		rrCheckCopy(t, src, marks, true, reports.SummarySheet)
	})
	t.Run("zip64", func(t *testing.T) {
		rrCheckCopy(t, filepath.Join(acceptanceDir, "rv_zip64.xlsx"), marks, true, reports.SummarySheet)
	})
}

// TestReconcileCopyExcelShapedWorkbook: a workbook part as Excel 365
// writes it (mc:AlternateContent with the file's path and xr:revisionPtr
// before the book views, prefixed attributes on the workbook view) and
// an extended-properties part listing the sheets (HeadingPairs,
// TitlesOfParts) is copied by the stream, not left to excelize: those
// elements are of other namespaces, and the copy keeps them as they are.
func TestReconcileCopyExcelShapedWorkbook(t *testing.T) {
	dir := t.TempDir()
	mid := filepath.Join(dir, "mid.xlsx")
	src := filepath.Join(dir, "excel.xlsx")
	rewriteZipPart(t, filepath.Join(acceptanceDir, "lo_commented.xlsx"), mid, "xl/workbook.xml", func(string) string {
		return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
			`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15 xr xr6 xr10 xr2" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main" xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" xmlns:xr6="http://schemas.microsoft.com/office/spreadsheetml/2016/revision6" xmlns:xr10="http://schemas.microsoft.com/office/spreadsheetml/2016/revision10" xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2">` +
			`<fileVersion appName="xl" lastEdited="7" lowestEdited="7" rupBuild="27328"/><workbookPr defaultThemeVersion="166925"/>` +
			`<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="x15"><x15ac:absPath url="C:\Users\consultant\Documents\" xmlns:x15ac="http://schemas.microsoft.com/office/spreadsheetml/2010/11/ac"/></mc:Choice></mc:AlternateContent>` +
			`<xr:revisionPtr revIDLastSave="0" documentId="8_{6E1C1B1A-0000-4000-8000-000000000001}" xr6:coauthVersion="47" xr6:documentId="{6E1C1B1A-0000-4000-8000-000000000002}"/>` +
			`<bookViews><workbookView xWindow="-120" yWindow="-120" windowWidth="29040" windowHeight="15840" activeTab="1" xr2:uid="{6E1C1B1A-0000-4000-8000-000000000003}"/></bookViews>` +
			`<sheets><sheet name="Targets" sheetId="1" r:id="rId2"/><sheet name="Notes" sheetId="2" r:id="rId3"/></sheets>` +
			`<definedNames><definedName name="Plans">Targets!$A$1:$E$4</definedName></definedNames><calcPr calcId="191029"/>` +
			`<extLst><ext uri="{140A7094-0E35-4892-8432-C4D2E57EDEB5}" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main"><x15:workbookPr chartTrackingRefBase="1"/></ext></extLst></workbook>`
	})
	rewriteZipPart(t, mid, src, "docProps/app.xml", func(string) string {
		return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
			`<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Microsoft Excel</Application><DocSecurity>0</DocSecurity><ScaleCrop>false</ScaleCrop>` +
			`<HeadingPairs><vt:vector size="4" baseType="variant"><vt:variant><vt:lpstr>Worksheets</vt:lpstr></vt:variant><vt:variant><vt:i4>2</vt:i4></vt:variant><vt:variant><vt:lpstr>Named Ranges</vt:lpstr></vt:variant><vt:variant><vt:i4>1</vt:i4></vt:variant></vt:vector></HeadingPairs>` +
			`<TitlesOfParts><vt:vector size="3" baseType="lpstr"><vt:lpstr>Targets</vt:lpstr><vt:lpstr>Notes</vt:lpstr><vt:lpstr>Plans</vt:lpstr></vt:vector></TitlesOfParts>` +
			`<LinksUpToDate>false</LinksUpToDate><SharedDoc>false</SharedDoc><HyperlinksChanged>false</HyperlinksChanged><AppVersion>16.0300</AppVersion></Properties>`
	})
	dst := rrCheckCopy(t, src, [][2]string{{"Targets", "B2"}, {"Targets", "C5"}}, true, reports.SummarySheet)
	wb := zipPart(t, dst, "xl/workbook.xml")
	for _, keep := range []string{`<x15ac:absPath url="C:\Users\consultant\Documents\"`, `<xr:revisionPtr revIDLastSave="0"`, `xr2:uid="{6E1C1B1A-0000-4000-8000-000000000003}"`} {
		if !strings.Contains(wb, keep) {
			t.Errorf("workbook part lost %s:\n%s", keep, wb)
		}
	}
}

// TestReconcileCopyUnmarkedDamagedSheet: a sheet that is not marked but
// rewritten for its selected tab keeps its cells as they are, even in an
// order the copy would refuse in a marked sheet: the copy is not refused
// for a sheet it does not mark.
func TestReconcileCopyUnmarkedDamagedSheet(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src.xlsx")
	rewriteZipPart(t, filepath.Join(acceptanceDir, "lo_commented.xlsx"), src, "xl/worksheets/sheet2.xml", func(s string) string {
		i := strings.Index(s, "<sheetData>") + len("<sheetData>")
		return s[:i] + `<row r="3"><c r="C3"><v>3</v></c><c r="A3"><v>1</v></c></row><row r="2"><c r="B9"><v>2</v></c></row>` + s[i:]
	})
	dst := filepath.Join(t.TempDir(), "report.xlsx")
	if err := rrWriteStreamed(t, dst, src, rrMarksReconciliation(src, [][2]string{{"Targets", "B2"}})); err != nil {
		t.Fatal(err)
	}
	a := strings.Replace(zipPart(t, src, "xl/worksheets/sheet2.xml"), ` tabSelected="true"`, "", 1)
	if b := zipPart(t, dst, "xl/worksheets/sheet2.xml"); strings.TrimSpace(a) != strings.TrimSpace(b) {
		t.Errorf("the unmarked sheet changed beyond its tab selection:\n%s\n%s", a, b)
	}
}

// TestReconcileCopyEveryFixture marks A1 and C7 of every sheet of every
// workbook fixture that other programs wrote (testdata/acceptance), and
// checks each copy as rrCheckCopy does, whichever path writes it.
func TestReconcileCopyEveryFixture(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(acceptanceDir, "*.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range names {
		t.Run(filepath.Base(src), func(t *testing.T) {
			f, err := excelize.OpenFile(src)
			if err != nil {
				t.Skipf("not a workbook excelize opens: %v", err)
			}
			fh, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			st, _ := fh.Stat()
			book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
			if err != nil {
				t.Skipf("not a workbook the reader opens: %v", err)
			}
			var marks [][2]string
			for _, info := range book.Sheets {
				if info.Path != "" { // not a chart sheet
					marks = append(marks, [2]string{info.Name, "A1"}, [2]string{info.Name, "C7"})
				}
			}
			summary := reports.SummarySheet
			for i := 2; slices.Contains(f.GetSheetList(), summary); i++ {
				summary = fmt.Sprintf("%s (%d)", reports.SummarySheet, i)
			}
			f.Close()
			if len(marks) == 0 {
				t.Skip("no worksheet")
			}
			rrCheckCopy(t, src, marks, false, summary)
		})
	}
}

// TestReconcileCopyChartSheet: a workbook with a chart sheet between two
// worksheets, the chart sheet the selected tab (openpyxl, and re-saved by
// LibreOffice, which makes it a worksheet holding the chart): the
// Summary's defined names point at the Summary's own index, and the chart
// sheet's tab is no longer selected (two selected tabs are a group).
func TestReconcileCopyChartSheet(t *testing.T) {
	for _, name := range []string{"op_rv_chartsheet.xlsx", "lo_rv_chartsheet.xlsx"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(acceptanceDir, name)
			dst := rrCheckCopy(t, src, [][2]string{{"Data", "B2"}, {"After", "B2"}, {"After", "C9"}}, true, reports.SummarySheet)
			if strings.HasPrefix(name, "op") { // LibreOffice has made it a worksheet
				if cs := zipPart(t, dst, "xl/chartsheets/sheet1.xml"); !strings.Contains(cs, "<sheetView workbookViewId") || strings.Contains(cs, "tabSelected") {
					t.Errorf("the chart sheet's tab is still selected:\n%s", cs)
				}
			}
			wb := zipPart(t, dst, "xl/workbook.xml")
			if !strings.Contains(wb, `'Summary'!$13:$13</definedName>`) ||
				!strings.Contains(wb, `<definedName name="_xlnm.Print_Titles" localSheetId="0">'Summary'`) ||
				!strings.Contains(wb, `<definedName name="_xlnm.Print_Titles" localSheetId="1">'Changes'`) || strings.Contains(wb, `localSheetId="3"`) {
				t.Errorf("the Summary's and Changes' defined names are not at indexes 0 and 1:\n%s", wb)
			}
		})
	}
}

// TestReconcileCopyOfACopy: the annotated copy reconciled again (a
// consultant sends the report back): its Summary is kept, ours is
// "Summary (2)", and a cell marked twice carries the new comment above
// the old one.
func TestReconcileCopyOfACopy(t *testing.T) {
	src := filepath.Join(acceptanceDir, "lo_commented.xlsx")
	first := filepath.Join(t.TempDir(), "first.xlsx")
	if _, err := reports.WriteReconcileXLSX(first, src, rrMarksReconciliation(src, [][2]string{{"Targets", "B2"}, {"Targets", "C5"}})); err != nil {
		t.Fatal(err)
	}
	dst := rrCheckCopy(t, first, [][2]string{{"Targets", "C5"}, {"Targets", "E4"}, {reports.SummarySheet, "B3"}}, true, "Summary (2)")
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := rrCommentTexts(t, f, "Targets")["C5"]
	if !strings.Contains(got, "service holds 1000 (this workbook: 0)") || !strings.Contains(got, "\n---\n") || !strings.Contains(got, "service holds 1001 (this workbook: 1)") {
		t.Errorf("C5 comment %q, want the new finding above the old one", got)
	}
}

// vmlIDMap matches the data attribute of a VML drawing's shape id map
// (the blocks of 1024 shape ids it holds); vmlShapeID a shape's id.
var (
	vmlIDMap   = regexp.MustCompile(`(<(?:[A-Za-z_][\w.-]*:)?idmap\b[^>]*?\bdata=")([0-9, ]*)"`)
	vmlShapeID = regexp.MustCompile(`_x0000_s(\d{1,9})\b`)
)

// TestReconcileCopyVMLIDMap: note shapes added to a sheet's existing VML
// drawing (openpyxl's, with its own prefixes) have their shape id block
// listed in the drawing's id map.
func TestReconcileCopyVMLIDMap(t *testing.T) {
	src := filepath.Join(acceptanceDir, "op_commented.xlsx")
	dst := rrCheckCopy(t, src, [][2]string{{"Targets", "C5"}, {"Targets", "E4"}}, true, reports.SummarySheet)
	vml := zipPart(t, dst, "xl/drawings/commentsDrawing1.vml")
	m := vmlIDMap.FindStringSubmatch(vml)
	if m == nil {
		t.Fatalf("no id map:\n%s", vml)
	}
	blocks := strings.Split(m[2], ",")
	for _, id := range vmlShapeID.FindAllStringSubmatch(vml, -1) {
		n, _ := strconv.Atoi(id[1])
		if !slices.Contains(blocks, strconv.Itoa(n/1024)) {
			t.Errorf("shape id %d outside the id map's blocks %v", n, blocks)
		}
	}
}

// TestReconcileCopySheetsExportShape: a workbook part as Google Sheets
// exports it (no book views, an empty self-closing definedNames): the
// copy adds the book view naming the Summary active and the Summary's
// defined names inside the existing element.
func TestReconcileCopySheetsExportShape(t *testing.T) {
	src := filepath.Join(t.TempDir(), "gsheets.xlsx")
	rewriteZipPart(t, filepath.Join(acceptanceDir, "lo_commented.xlsx"), src, "xl/workbook.xml", func(string) string {
		return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
			`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><workbookPr/>` +
			`<sheets><sheet state="visible" name="Targets" sheetId="1" r:id="rId2"/><sheet state="visible" name="Notes" sheetId="2" r:id="rId3"/></sheets><definedNames/><calcPr/></workbook>`
	})
	dst := rrCheckCopy(t, src, [][2]string{{"Targets", "B2"}}, true, reports.SummarySheet)
	wb := zipPart(t, dst, "xl/workbook.xml")
	if strings.Count(wb, "<definedNames") != 1 || !strings.Contains(wb, `<bookViews><workbookView activeTab="0"/></bookViews><sheets>`) {
		t.Errorf("workbook part:\n%s", wb)
	}
}

// TestReconcileCopySummaryDimension: the Summary sheet's dimension spans
// its cells (openpyxl's read-only mode reads no further than it).
// The streamed copy, the excelize one (a prefixed sheet) and the report
// without a copy.
func TestReconcileCopySummaryDimension(t *testing.T) {
	prefixed := rrCraftedBook(t, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n"+`<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData><x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c></x:row></x:sheetData></x:worksheet>`)
	alone := filepath.Join(t.TempDir(), "alone.xlsx")
	if _, err := reports.WriteReconcileXLSX(alone, "", rrReconciliation("client.csv")); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{
		rrCheckCopy(t, filepath.Join(acceptanceDir, "lo_commented.xlsx"), [][2]string{{"Targets", "B2"}, {"Targets", "C5"}}, true, reports.SummarySheet),
		rrCheckCopy(t, prefixed, [][2]string{{"Sheet1", "B2"}}, false, reports.SummarySheet),
		alone,
	} {
		rrCheckSummaryDimension(t, dst)
	}
}

func rrCheckSummaryDimension(t *testing.T, dst string) {
	t.Helper()
	f, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows(reports.SummarySheet)
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	last, _ := excelize.CoordinatesToCellName(cols, len(rows))
	if got, _ := f.GetSheetDimension(reports.SummarySheet); got != "A1:"+last {
		t.Errorf("Summary dimension %q, want A1:%s", got, last)
	}
}

// TestReconcileCopyTellsHow: WriteReconcileXLSX tells how it wrote the
// copy: a workbook the stream handles is streamed; one it does not (a
// sheet with prefixed elements) is left to excelize, with the reason;
// a CSV source, and no source, are built with excelize, with neither.
func TestReconcileCopyTellsHow(t *testing.T) {
	dir := t.TempDir()
	csvSrc := filepath.Join(dir, "client.csv")
	if err := os.WriteFile(csvSrc, []byte(rrCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	prefixed := rrCraftedBook(t, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n"+`<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData><x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c></x:row></x:sheetData></x:worksheet>`)
	streamed := filepath.Join(acceptanceDir, "lo_commented.xlsx")
	for _, tc := range []struct {
		name, src string
		rec       *diff.Reconciliation
		streamed  bool
		fallback  bool
	}{
		{"streamed", streamed, rrMarksReconciliation(streamed, [][2]string{{"Targets", "B2"}}), true, false},
		{"left to excelize", prefixed, rrMarksReconciliation(prefixed, [][2]string{{"Sheet1", "B2"}}), false, true},
		{"csv", csvSrc, rrReconciliation(csvSrc), false, false},
		{"no source", "", rrReconciliation("client.csv"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			how, err := reports.WriteReconcileXLSX(filepath.Join(t.TempDir(), "report.xlsx"), tc.src, tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if how.Streamed != tc.streamed || (how.Fallback != nil) != tc.fallback {
				t.Errorf("streamed %v, fallback %v; want streamed %v, a fallback %v", how.Streamed, how.Fallback, tc.streamed, tc.fallback)
			}
		})
	}
}
