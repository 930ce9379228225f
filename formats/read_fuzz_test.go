package formats

import (
	"bytes"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
	"github.com/eepipe/eepipe/pipeline"
)

// FuzzReadFlatXLSX feeds arbitrary bytes, seeded with real workbooks
// written by excelize, to the XLSX reader: never a panic, problems always
// placed.
func FuzzReadFlatXLSX(f *testing.F) {
	f.Add(xlsxtest.SmallFlat(f, nil))
	f.Add(xlsxtest.SmallFlat(f, func(x *excelize.File) {
		_, _ = x.NewSheet("Hidden")
		_ = x.SetCellValue("Hidden", "A1", "target_type")
		_ = x.SetSheetVisible("Hidden", false)
	}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []pipeline.Record
		var ps pipeline.Problems
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
		readback.CheckRead(t, recs, ps)
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
		xlsxtest.SmallFlat(f, nil),
		xlsxtest.SmallFlat(f, func(x *excelize.File) {
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
	base := xlsxtest.Parts(f, seeds[0])
	for _, s := range seeds {
		p := xlsxtest.Parts(f, s)
		f.Add(p[xlsxtest.SheetPart], p[xlsxtest.SSTPart], p[xlsxtest.StylesPart])
	}
	f.Add([]byte(`<worksheet><sheetData><row r="3"><c r="B3" t="inlineStr"><is><t>target_type</t></is></c><c t="inlineStr"><is><r><t>plan_</t></r><r><t>id</t></r></is></c></row><row><c r="B4" t="e"><v>#REF!</v></c><c r="C4"><f>A1</f></c></row><row r="4"><c r="ZZZ9" t="d"><v>2026-01-01T00:00:00</v></c></row></sheetData></worksheet>`), []byte(`<sst><si><t>_x0041_</t><rPh><t>x</t></rPh></si></sst>`), []byte(`<styleSheet><numFmts><numFmt numFmtId="164" formatCode="[$-409]d mmm yy;@"/></numFmts><cellXfs><xf numFmtId="164"/><xf numFmtId="49"/></cellXfs></styleSheet>`))
	f.Fuzz(func(t *testing.T, sheet, sst, styles []byte) {
		parts := maps.Clone(base)
		parts[xlsxtest.SheetPart], parts[xlsxtest.SSTPart], parts[xlsxtest.StylesPart] = sheet, sst, styles
		data := xlsxtest.Zip(parts)
		var recs []pipeline.Record
		var ps pipeline.Problems
		readXLSXLimited("fuzz.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
		readback.CheckRead(t, recs, ps)
	})
}

func TestXLSXSheetChoice(t *testing.T) {
	// Targets wins over an earlier visible sheet with a header; hidden
	// sheets are never read.
	data := xlsxtest.SmallFlat(t, func(x *excelize.File) {
		_, _ = x.NewSheet("Other")
		_ = x.SetSheetRow("Other", "A1", &[]any{"target_type", "plan_id", "year_number"})
		_ = x.SetSheetRow("Other", "A2", &[]any{"all_employees", 99, 1})
		_ = x.MoveSheet("Other", "Targets")
	})
	var recs []pipeline.Record
	var ps pipeline.Problems
	readXLSXLimited("choice.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
	if len(recs) != 2 || recs[0].Origin.Sheet != "Targets" {
		t.Fatalf("sheet choice: %v %d records", ps, len(recs))
	}
	if len(ps) != 1 || ps[0].Severity != pipeline.Warning || ps[0].Origin.Sheet != "Other" || !strings.Contains(ps[0].Message, "only one table is read") {
		t.Errorf("the other table must be warned about: %v", ps)
	}
	// Without Targets, the first visible sheet with a header row.
	data = xlsxtest.SmallFlat(t, func(x *excelize.File) {
		_ = x.SetSheetName("Targets", "Data")
		_, _ = x.NewSheet("Before")
		_ = x.SetCellValue("Before", "A1", "nothing here")
		_ = x.MoveSheet("Before", "Data")
	})
	recs, ps = nil, nil
	readXLSXLimited("choice.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
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
