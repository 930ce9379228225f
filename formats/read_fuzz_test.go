package formats

import (
	"bytes"
	"runtime"
	"time"
	"maps"
	"os"
	"strings"
	"testing"

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
	pipeline.Assemble(recs, nil)
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
		readCSV("fuzz.csv", bytes.NewReader(data), pipeline.DefaultCatalog(), collectRecords(&recs), &ps)
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

// FuzzReadFlatXLSX feeds arbitrary bytes (seeded with real workbooks) to the
// XLSX reader: never a panic, problems always placed.
func FuzzReadFlatXLSX(f *testing.F) {
	f.Add(smallFlatXLSX(f, nil))
	f.Add(smallFlatXLSX(f, func(x *excelize.File) {
		d, _ := x.NewStyle(&excelize.Style{NumFmt: 14})
		_ = x.SetCellValue("Targets", "B2", 45901)
		_ = x.SetCellStyle("Targets", "B2", "B2", d)
		_ = x.SetCellFormula("Targets", "F3", "1/0")
	}))
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
		tm := time.AfterFunc(2*time.Second, func() { os.WriteFile("/tmp/hang.bin", data, 0o644); buf := make([]byte, 1<<20); n := runtime.Stack(buf, true); os.WriteFile("/tmp/hang.txt", buf[:n], 0o644) })
		defer tm.Stop()
		readXLSX("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), pipeline.DefaultCatalog(), collectRecords(&recs), &ps)
		checkReadResult(t, recs, ps)
		if len(data) == 0 && len(ps) == 0 {
			t.Fatal("empty input gave no problem")
		}
	})
}

func TestCSVDelimiterDetection(t *testing.T) {
	tests := map[string]rune{
		"a,b,target_type\n":                       ',',
		"a;b;target_type\n":                       ';',
		"a\tb\ttarget_type\n":                     '\t',
		"title, with comma\na;b;target_type\n":    ';',
		"\"x;y;z\",target_type\n":                 ',',
		"plan_name;\"a,b,c,d\";target_type\n":     ';',
		"no header here\n":                        ',',
		"Title\n\nplan_id\ttarget_type\tsector\n": '\t',
	}
	for in, want := range tests {
		if got := csvDetectDelimiter([]byte(in)); got != want {
			t.Errorf("csvDetectDelimiter(%q) = %q; want %q", in, got, want)
		}
	}
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
	readCSV("u16.csv", &b, pipeline.DefaultCatalog(), collectRecords(&recs), &ps)
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
	readXLSX("choice.xlsx", bytes.NewReader(data), int64(len(data)), pipeline.DefaultCatalog(), collectRecords(&recs), &ps)
	if len(ps) != 0 || len(recs) != 2 || recs[0].Origin.Sheet != "Targets" {
		t.Fatalf("sheet choice: %v %d records", ps, len(recs))
	}
	// Without Targets, the first visible sheet with a header row.
	data = smallFlatXLSX(t, func(x *excelize.File) {
		_ = x.SetSheetName("Targets", "Data")
		_, _ = x.NewSheet("Before")
		_ = x.SetCellValue("Before", "A1", "nothing here")
		_ = x.MoveSheet("Before", "Data")
	})
	recs, ps = nil, nil
	readXLSX("choice.xlsx", bytes.NewReader(data), int64(len(data)), pipeline.DefaultCatalog(), collectRecords(&recs), &ps)
	if len(ps) != 0 || len(recs) != 2 || recs[0].Origin.Sheet != "Data" {
		t.Fatalf("first visible sheet with a header: %v %d records", ps, len(recs))
	}
	if c := recs[1].Cells["number_of_african_male_top_managers"]; c.Origin.Cell != "F3" || c.Kind != pipeline.CellText || c.Text != "1" {
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
		*recs = append(*recs, r)
	}
}
