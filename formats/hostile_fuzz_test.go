package formats

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// FuzzReadXLSXLimited reads a workbook whose sheet and shared strings are
// fuzzed, under a small MaxUncompressed: never a panic, every problem
// placed, and a workbook over the limit is always refused.
func FuzzReadXLSXLimited(f *testing.F) {
	base := xlsxtest.Parts(f, xlsxtest.SmallFlat(f, nil))
	f.Add(base[xlsxtest.SheetPart], base[xlsxtest.SSTPart], uint32(1<<20))
	f.Add([]byte(`<worksheet><sheetData><row r="1"><c r="XFE1"><v>1</v></c><c r="!!"/></row><row r="1"/></sheetData></worksheet>`), base[xlsxtest.SSTPart], uint32(1<<20))
	f.Add([]byte(`<worksheet><sheetData><row>`+strings.Repeat(`<c/>`, 200)+`</row></sheetData></worksheet>`), []byte(`<sst>`+strings.Repeat(`<si><t>x</t></si>`, 100)+`</sst>`), uint32(2000))
	f.Fuzz(func(t *testing.T, sheet, sst []byte, limit uint32) {
		parts := make(map[string][]byte, len(base))
		total := int64(0)
		for k, v := range base {
			parts[k] = v
		}
		parts[xlsxtest.SheetPart], parts[xlsxtest.SSTPart] = sheet, sst
		for _, v := range parts {
			total += int64(len(v))
		}
		data := xlsxtest.Zip(parts)
		lim := xlsx.Limits{MaxUncompressed: int64(limit%(4<<20)) + 1}
		var recs []pipeline.Record
		var ps pipeline.Problems
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), lim, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
		checkReadResult(t, recs, ps)
		if total > lim.MaxUncompressed && (len(recs) > 0 || !ps.HasErrors()) {
			t.Fatalf("%d bytes over a limit of %d read: %d records, problems %v", total, lim.MaxUncompressed, len(recs), ps)
		}
	})
}

// FuzzReadSST reads arbitrary shared string tables: never a panic, every
// entry within a cell's length, the table within its bounds.
func FuzzReadSST(f *testing.F) {
	f.Add([]byte(`<sst><si><t>a</t></si><si><r><t>b</t></r><rPh><t>c</t></rPh></si><si/></sst>`))
	f.Add([]byte(`<sst><si><t>` + strings.Repeat("é", xlsx.MaxCellChars+1) + `</t></si></sst>`))
	f.Add([]byte(`<sst><si><t>open`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sst, err := xlsx.ReadSST(bytes.NewReader(data))
		if len(sst) > xlsx.MaxSSTStrings {
			t.Fatalf("%d entries", len(sst))
		}
		for i, s := range sst {
			if len(s) > 3*xlsx.MaxCellBytes { // _xHHHH_ escapes may grow a little
				t.Fatalf("entry %d of %d bytes", i, len(s))
			}
		}
		if err != nil && err.Error() == "" {
			t.Fatal("an error without words")
		}
	})
}

// FuzzCellRef checks the sheet reader's cell references against
// excelize's: every reference it accepts names the same cell.
func FuzzCellRef(f *testing.F) {
	for _, s := range []string{"A1", "XFD1048576", "XFE2", "!!", "a0", "AA01", "B", "12", "ZZZ9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		col, row := xlsx.CellRef([]byte(ref))
		if col == 0 {
			return
		}
		c, r, err := excelize.CellNameToCoordinates(ref)
		if err != nil || c != col || r != row {
			t.Fatalf("%q read as column %d row %d; excelize: %d %d %v", ref, col, row, c, r, err)
		}
	})
}

// FuzzCSVSafeField: what the CSV writers write reads back as the text.
func FuzzCSVSafeField(f *testing.F) {
	for _, s := range []string{"", "=1+1", "'=x", "-2", "+27 11", "@a", "\tx", "''", "'", "Acme"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := table.CSVSafeField(s)
		if table.CSVUnsafeField(w) != s {
			t.Fatalf("%q written %q read back %q", s, w, table.CSVUnsafeField(w))
		}
		// Through the writer and encoding/csv, the field is the same.
		var buf bytes.Buffer
		cw := table.NewCSVWriter(&buf)
		_ = cw.Write([]string{s, "x"})
		cw.Flush()
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\r") {
			return // encoding/csv rewrites line ends
		}
		rec, err := csv.NewReader(&buf).Read()
		if err != nil || len(rec) != 2 || table.CSVUnsafeField(rec[0]) != s {
			t.Fatalf("%q read back as %q, %v", s, rec, err)
		}
	})
}
