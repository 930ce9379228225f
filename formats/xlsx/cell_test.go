package xlsx

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
)

// patchSheetXML rewrites the sheetData of xl/worksheets/sheet1.xml in the
// workbook at path, so that a test can write cells excelize has no setter
// for (error values, cached formula results, t="d" dates).
func patchSheetXML(t *testing.T, path, sheetData string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	re := regexp.MustCompile(`(?s)<sheetData>.*</sheetData>|<sheetData/>|<sheetData></sheetData>`)
	for _, e := range zr.File {
		r, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if e.Name == "xl/worksheets/sheet1.xml" {
			b = re.ReplaceAll(b, []byte("<sheetData>"+sheetData+"</sheetData>"))
		}
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	zr.Close()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBookCell(t *testing.T) {
	for _, d1904 := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "cells.xlsx")
		f := excelize.NewFile()
		pad := "0000000000"
		iso := "yyyy-mm-dd"
		sPad, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &pad})
		sISO, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &iso})
		s14, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
		sTime, _ := f.NewStyle(&excelize.Style{NumFmt: 20})
		sText, _ := f.NewStyle(&excelize.Style{NumFmt: 49})
		if err := f.SetCellStr("Sheet1", "A1", "hello"); err != nil {
			t.Fatal(err)
		}
		_ = f.SetCellStr("Sheet1", "A2", "   ")
		if d1904 {
			v := true
			if err := f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &v}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		f.Close()
		// 2026-09-01 is serial 46266 in the 1900 system, 44804 in the 1904 one.
		serial := "46266"
		if d1904 {
			serial = "44804"
		}
		st := func(n int) string { return `s="` + strconv.Itoa(n) + `"` }
		patchSheetXML(t, path, `<row r="1">`+
			`<c r="A1" t="s"><v>0</v></c>`+
			`<c r="B1"><v>12</v></c>`+
			`<c r="C1" `+st(sPad)+`><v>412345678</v></c>`+
			`<c r="D1" `+st(sISO)+`><v>`+serial+`</v></c>`+
			`<c r="E1" `+st(s14)+`><v>`+serial+`</v></c>`+
			`<c r="F1" t="b"><v>1</v></c>`+
			`<c r="G1" t="e"><v>#REF!</v></c>`+
			`<c r="H1"><f>1/0</f></c>`+
			`<c r="I1"><f>SUM(B1:B1)</f><v>12</v></c>`+
			`<c r="J1" t="str"><f>"x"&amp;"y"</f><v>xy</v></c>`+
			`<c r="K1" t="d"><v>2026-09-01T00:00:00Z</v></c>`+
			`<c r="L1" t="inlineStr"><is><t>0123</t></is></c>`+
			`<c r="M1"><v>8001015009087</v></c>`+
			`<c r="N1" t="s"><v>1</v></c>`+
			`<c r="O1" t="e"><f>1/0</f><v>#DIV/0!</v></c>`+
			`<c r="P1" `+st(sTime)+`><v>0.5</v></c>`+
			`<c r="Q1" `+st(sText)+`><v>12.5</v></c>`+
			`<c r="R1" t="b"><v>0</v></c>`+
			`<c r="S1" t="str"><f>""</f><v></v></c>`+
			`<c r="T1"><v>-3</v></c>`+
			`</row>`)

		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if b.date1904 != d1904 {
			t.Errorf("date1904 = %v, want %v", b.date1904, d1904)
		}
		cells := map[string]pipeline.Cell{}
		if err := b.ScanSheet(b.Sheets[0], func(row int, raw []RawCell) bool {
			for i := range raw {
				ref, _ := excelize.CoordinatesToCellName(raw[i].Col, row)
				cells[ref] = b.Cell(&raw[i], pipeline.Origin{Sheet: "Sheet1", Cell: ref, Row: row, Column: raw[i].Col})
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		sept := date("2026-09-01")
		tests := []struct {
			ref  string
			kind pipeline.CellKind
			text string
			num  float64
			date pipeline.Date
		}{
			{"A1", pipeline.CellText, "hello", 0, pipeline.Date{}},
			{"B1", pipeline.CellNumber, "12", 12, pipeline.Date{}},
			{"C1", pipeline.CellNumber, "0412345678", 412345678, pipeline.Date{}},
			{"D1", pipeline.CellDate, "2026-09-01", 0, sept},
			{"E1", pipeline.CellDate, "2026-09-01", 0, sept},
			{"F1", pipeline.CellBool, "TRUE", 0, pipeline.Date{}},
			{"G1", pipeline.CellError, "#REF!", 0, pipeline.Date{}},
			{"H1", pipeline.CellFormulaNoValue, "", 0, pipeline.Date{}}, // the streamed reader keeps no formula text
			{"I1", pipeline.CellNumber, "12", 12, pipeline.Date{}},
			{"J1", pipeline.CellText, "xy", 0, pipeline.Date{}},
			{"K1", pipeline.CellDate, "2026-09-01", 0, sept},
			{"L1", pipeline.CellText, "0123", 0, pipeline.Date{}},
			{"M1", pipeline.CellNumber, "8001015009087", 8001015009087, pipeline.Date{}},
			{"N1", pipeline.CellBlank, "", 0, pipeline.Date{}},
			{"O1", pipeline.CellError, "#DIV/0!", 0, pipeline.Date{}},
			{"P1", pipeline.CellNumber, "", 0.5, pipeline.Date{}},
			{"Q1", pipeline.CellNumber, "12.5", 12.5, pipeline.Date{}},
			{"R1", pipeline.CellBool, "FALSE", 0, pipeline.Date{}},
			{"S1", pipeline.CellBlank, "", 0, pipeline.Date{}},
			{"T1", pipeline.CellNumber, "-3", -3, pipeline.Date{}},
			{"Z9", pipeline.CellBlank, "", 0, pipeline.Date{}},
		}
		for _, tc := range tests {
			c, ok := cells[tc.ref]
			if !ok {
				col, row, _ := excelize.CellNameToCoordinates(tc.ref)
				c = pipeline.Cell{Origin: pipeline.Origin{Sheet: "Sheet1", Cell: tc.ref, Row: row, Column: col}}
			}
			if c.Kind != tc.kind {
				t.Errorf("1904=%v %s: kind %d, want %d (text %q)", d1904, tc.ref, c.Kind, tc.kind, c.Text)
				continue
			}
			if tc.text != "" && c.Text != tc.text {
				t.Errorf("1904=%v %s: text %q, want %q", d1904, tc.ref, c.Text, tc.text)
			}
			if tc.num != 0 && c.Number != tc.num {
				t.Errorf("1904=%v %s: number %v, want %v", d1904, tc.ref, c.Number, tc.num)
			}
			if c.Date != tc.date {
				t.Errorf("1904=%v %s: date %v, want %v", d1904, tc.ref, c.Date, tc.date)
			}
			col, row, _ := excelize.CellNameToCoordinates(tc.ref)
			if c.Origin.Sheet != "Sheet1" || c.Origin.Cell != tc.ref || c.Origin.Row != row || c.Origin.Column != col || c.Origin.File != "" {
				t.Errorf("%s: origin %+v", tc.ref, c.Origin)
			}
		}
	}
}

func TestIsDateFormat(t *testing.T) {
	tests := []struct {
		id   int
		code string
		want bool
	}{
		{0, "", false}, {1, "", false}, {14, "", true}, {22, "", true}, {20, "", false}, {49, "", false},
		{164, "yyyy-mm-dd", true}, {164, "dd/mm/yyyy", true}, {164, "d mmm yyyy", true}, {164, "[$-409]mmmm d, yyyy;@", true},
		{164, "0000000000", false}, {164, "#,##0.00", false}, {164, "h:mm:ss", false}, {164, "mm:ss", false},
		{164, "@", false}, {164, `"Year "0`, false}, {164, "[h]:mm", false},
	}
	for _, tc := range tests {
		if got := isDateFormat(tc.id, tc.code); got != tc.want {
			t.Errorf("isDateFormat(%d, %q) = %v, want %v", tc.id, tc.code, got, tc.want)
		}
	}
}

// date is the calendar date s (2006-01-02), for a test.
func date(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
