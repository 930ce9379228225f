package formats

import (
	"archive/zip"
	"bytes"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

// checkReadResult is what every read must satisfy whatever the input: every
// problem has a file and a message, and every record's cells are typed.
func checkReadResult(t *testing.T, recs []pipeline.Record, ps pipeline.Problems) {
	t.Helper()
	for _, p := range ps {
		if p.Origin.File == "" || p.Message == "" || (p.Severity != pipeline.Error && p.Severity != pipeline.Warning) {
			t.Fatalf("bad problem %+v", p)
		}
	}
	for _, r := range recs {
		if r.Origin.Row <= 0 {
			t.Fatalf("record without a row: %+v", r.Origin)
		}
		for name, c := range r.Cells {
			if c.Origin.Row <= 0 || c.Origin.Column <= 0 {
				t.Fatalf("cell %s without a place: %+v", name, c.Origin)
			}
		}
	}
	// Whatever was read must assemble without panicking.
	assembleRecords(recs, nil)
}

// FuzzReadCSV feeds arbitrary bytes to the CSV reader: it must never panic,
// and every problem must say where it is.
func FuzzReadCSV(f *testing.F) {
	seeds := []string{
		"plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers\nA,2025-09-01,2030-08-31,1,all_employees,3\n",
		"\ufeffplan_id;financial_year;target_type;number_of_white_female_top_managers\r\n4;2026/27;disabled_employees;\"1\"\r\n",
		"plan_id\tyear_number\ttarget_type\n1\t1\tall_employees\n",
		"title\n\"multi\nline\",x\ntarget_type,plan_id\nall_employees,1,extra\n",
		"target_type,plan_name\n\"unterminated,x\n",
		"target_type,pl\"an\n",
		"",
		"\xff\xfet\x00a\x00r\x00g\x00e\x00t\x00_\x00t\x00y\x00p\x00e\x00\n\x00",
		"target_type,number_of_x\nall_employees,-1\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []pipeline.Record
		var ps pipeline.Problems
		table.ReadCSV("fuzz.csv", bytes.NewReader(data), pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
		checkReadResult(t, recs, ps)
	})
}

// smallFlatXLSX returns a small flat workbook written by excelize, for seeds.
func smallFlatXLSX(tb testing.TB, mutate func(f *excelize.File)) []byte {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	_ = f.SetSheetName("Sheet1", "Targets")
	_ = f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_african_male_top_managers"})
	_ = f.SetSheetRow("Targets", "A2", &[]any{"Fuzz Plan", "2025-09-01", "2030-08-31", 1, "all_employees", 3})
	_ = f.SetSheetRow("Targets", "A3", &[]any{"Fuzz Plan", "2025-09-01", "2030-08-31", 1, "disabled_employees", "1"})
	if mutate != nil {
		mutate(f)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// xlsxParts returns a workbook's parts by name.
func xlsxParts(tb testing.TB, data []byte) map[string][]byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = b
	}
	return out
}

// zipParts writes parts as a zip archive, in name order.
func zipParts(parts map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(parts)) {
		w, _ := zw.Create(name)
		_, _ = w.Write(parts[name])
	}
	_ = zw.Close()
	return buf.Bytes()
}

const (
	fuzzSheetPart  = "xl/worksheets/sheet1.xml"
	fuzzSSTPart    = "xl/sharedStrings.xml"
	fuzzStylesPart = "xl/styles.xml"
)

// FuzzReadFlatXLSX feeds arbitrary bytes, seeded with real workbooks
// written by excelize, to the XLSX reader: never a panic, problems always
// placed.
func FuzzReadFlatXLSX(f *testing.F) {
	f.Add(smallFlatXLSX(f, nil))
	f.Add(smallFlatXLSX(f, func(x *excelize.File) {
		_, _ = x.NewSheet("Hidden")
		_ = x.SetCellValue("Hidden", "A1", "target_type")
		_ = x.SetSheetVisible("Hidden", false)
	}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []pipeline.Record
		var ps pipeline.Problems
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
		checkReadResult(t, recs, ps)
		if len(data) == 0 && len(ps) == 0 {
			t.Fatal("empty input gave no problem")
		}
	})
}

// FuzzReadXLSXParts fuzzes the XLSX reader through the parts it parses
// itself: the worksheet XML, the shared strings and the styles, packed
// into an otherwise valid workbook (mutating the zip bytes would mostly
// exercise archive/zip's checksums). It must never panic, and every
// problem must say where it is. Broken archives are covered by the bad
// corpus (truncated, broken, encrypted, empty, not a zip).
func FuzzReadXLSXParts(f *testing.F) {
	seeds := [][]byte{
		smallFlatXLSX(f, nil),
		smallFlatXLSX(f, func(x *excelize.File) {
			d, _ := x.NewStyle(&excelize.Style{NumFmt: 14})
			pad := "0000000000"
			p, _ := x.NewStyle(&excelize.Style{CustomNumFmt: &pad})
			_ = x.SetCellValue("Targets", "B2", 45901)
			_ = x.SetCellStyle("Targets", "B2", "B2", d)
			_ = x.SetCellValue("Targets", "G1", "company_vat_number")
			_ = x.SetCellValue("Targets", "G2", 412345678)
			_ = x.SetCellStyle("Targets", "G2", "G2", p)
			_ = x.SetCellFormula("Targets", "F3", "1/0")
			_ = x.SetCellBool("Targets", "F2", true)
		}),
	}
	base := xlsxParts(f, seeds[0])
	for _, s := range seeds {
		p := xlsxParts(f, s)
		f.Add(p[fuzzSheetPart], p[fuzzSSTPart], p[fuzzStylesPart])
	}
	f.Add([]byte(`<worksheet><sheetData><row r="3"><c r="B3" t="inlineStr"><is><t>target_type</t></is></c><c t="inlineStr"><is><r><t>plan_</t></r><r><t>id</t></r></is></c></row><row><c r="B4" t="e"><v>#REF!</v></c><c r="C4"><f>A1</f></c></row><row r="4"><c r="ZZZ9" t="d"><v>2026-01-01T00:00:00</v></c></row></sheetData></worksheet>`), []byte(`<sst><si><t>_x0041_</t><rPh><t>x</t></rPh></si></sst>`), []byte(`<styleSheet><numFmts><numFmt numFmtId="164" formatCode="[$-409]d mmm yy;@"/></numFmts><cellXfs><xf numFmtId="164"/><xf numFmtId="49"/></cellXfs></styleSheet>`))
	f.Fuzz(func(t *testing.T, sheet, sst, styles []byte) {
		parts := maps.Clone(base)
		parts[fuzzSheetPart], parts[fuzzSSTPart], parts[fuzzStylesPart] = sheet, sst, styles
		data := zipParts(parts)
		var recs []pipeline.Record
		var ps pipeline.Problems
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
		checkReadResult(t, recs, ps)
	})
}

func TestReadCSVUTF16(t *testing.T) {
	text := "plan_id\tyear_number\ttarget_type\tnumber_of_white_male_top_managers\r\n12\t1\tall_employees\t4\r\n"
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, r := range text {
		b.WriteByte(byte(r))
		b.WriteByte(0)
	}
	var recs []pipeline.Record
	var ps pipeline.Problems
	table.ReadCSV("u16.csv", &b, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
	if len(ps) != 0 || len(recs) != 1 || recs[0].Cells["number_of_white_male_top_managers"].Text != "4" {
		t.Fatalf("UTF-16 CSV: %v %+v", ps, recs)
	}
}

func TestXLSXSheetChoice(t *testing.T) {
	// Targets wins over an earlier visible sheet with a header; hidden
	// sheets are never read.
	data := smallFlatXLSX(t, func(x *excelize.File) {
		_, _ = x.NewSheet("Other")
		_ = x.SetSheetRow("Other", "A1", &[]any{"target_type", "plan_id", "year_number"})
		_ = x.SetSheetRow("Other", "A2", &[]any{"all_employees", 99, 1})
		_ = x.MoveSheet("Other", "Targets")
	})
	var recs []pipeline.Record
	var ps pipeline.Problems
	readXLSXLimited("choice.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
	if len(recs) != 2 || recs[0].Origin.Sheet != "Targets" {
		t.Fatalf("sheet choice: %v %d records", ps, len(recs))
	}
	if len(ps) != 1 || ps[0].Severity != pipeline.Warning || ps[0].Origin.Sheet != "Other" || !strings.Contains(ps[0].Message, "only one table is read") {
		t.Errorf("the other table must be warned about: %v", ps)
	}
	// Without Targets, the first visible sheet with a header row.
	data = smallFlatXLSX(t, func(x *excelize.File) {
		_ = x.SetSheetName("Targets", "Data")
		_, _ = x.NewSheet("Before")
		_ = x.SetCellValue("Before", "A1", "nothing here")
		_ = x.MoveSheet("Before", "Data")
	})
	recs, ps = nil, nil
	readXLSXLimited("choice.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
	if len(ps) != 0 || len(recs) != 2 || recs[0].Origin.Sheet != "Data" {
		t.Fatalf("first visible sheet with a header: %v %d records", ps, len(recs))
	}
	if c := recs[1].Cells["number_of_african_male_top_managers"]; c.Origin.WithCell().Cell != "F3" || c.Kind != pipeline.CellText || c.Text != "1" {
		t.Errorf("cell = %+v", c)
	}
}

func TestReadFilesFoldersAndMissing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/b.csv", "plan_id,year_number,target_type\n1,1,all_employees\n")
	writeFile(t, dir+"/A.CSV", "plan_id,year_number,target_type\n2,1,all_employees\n")
	writeFile(t, dir+"/~$lock.xlsx", "junk")
	writeFile(t, dir+"/notes.txt", "ignored in folders")
	b, err := ReadFiles([]string{dir, dir + "/missing.csv", dir + "/b.csv"}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 2 || !strings.HasSuffix(b.Files[0], "A.CSV") || !strings.HasSuffix(b.Files[1], "b.csv") {
		t.Errorf("files = %v", b.Files)
	}
	if len(b.Plans) != 2 || b.Plans[0].PlanID != 2 {
		t.Errorf("plans = %+v", b.Plans)
	}
	if len(b.Problems) != 1 || !strings.Contains(b.Problems[0].Message, "does not exist") {
		t.Errorf("problems = %v", b.Problems)
	}
	if _, err := ReadFiles(nil, ReadOptions{}); err == nil {
		t.Error("no paths: want an error")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// collectRecords returns an emit function that keeps copies of the records
// (the readers reuse a record's map for the next one).
func collectRecords(recs *[]pipeline.Record) func(pipeline.Record) {
	return func(r pipeline.Record) {
		r.Cells = maps.Clone(r.Cells)
		// A reader may give counter cells in a reused slice: the tests
		// see every cell of the record by its name.
		for _, c := range r.Counters {
			if r.Cells == nil {
				r.Cells = map[string]pipeline.Cell{}
			}
			r.Cells[c.Name] = c.Cell
		}
		r.Counters = nil
		// ... and the plan and year cells it gives in a reused RowCells.
		if r.Fixed != nil {
			for i, has := range r.Fixed.Has {
				if has {
					if r.Cells == nil {
						r.Cells = map[string]pipeline.Cell{}
					}
					r.Cells[pipeline.RowColumns[i]] = r.Fixed.Cells[i]
				}
			}
			r.Fixed = nil
		}
		*recs = append(*recs, r)
	}
}
