package formats

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
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
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), lim, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
		readback.CheckRead(t, recs, ps)
		if total > lim.MaxUncompressed && (len(recs) > 0 || !ps.HasErrors()) {
			t.Fatalf("%d bytes over a limit of %d read: %d records, problems %v", total, lim.MaxUncompressed, len(recs), ps)
		}
	})
}
