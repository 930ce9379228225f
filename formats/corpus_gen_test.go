package formats

import (
	"archive/zip"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

// genCorpus regenerates the excelize-made XLSX fixtures of testdata/flat
// and testdata/bad. They are committed; the tests only read them.
var genCorpus = flag.Bool("gen-corpus", false, "regenerate the excelize-made XLSX fixtures under testdata/flat and testdata/bad")

const corpusHeaderLine = "company_vat_number,plan_name,start_date,end_date,sector,year_number,financial_year,target_type"

func TestGenerateCorpus(t *testing.T) {
	if !*genCorpus {
		t.Skip("run with -gen-corpus to regenerate the XLSX fixtures")
	}
	flat := filepath.Join("..", "testdata", "flat")
	bad := filepath.Join("..", "testdata", "bad")
	save := func(f *excelize.File, path string, opts ...excelize.Options) {
		t.Helper()
		if err := f.SaveAs(path, opts...); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	style := func(f *excelize.File, s *excelize.Style) int {
		id, err := f.NewStyle(s)
		must(err)
		return id
	}
	pad10 := "0000000000"
	iso := "yyyy-mm-dd"

	// A good flat workbook: instructions first, a hidden sheet with a
	// decoy table, the Targets sheet with a title above a reordered,
	// mixed-case header, date cells in two formats, numbers as text, a
	// formula with a cached value, a zero-padded VAT number and an empty row.
	{
		f := excelize.NewFile()
		must(f.SetSheetName("Sheet1", "Instructions"))
		must(f.SetCellValue("Instructions", "A1", "Fill in the Targets sheet. One row per plan, year and target type."))
		_, err := f.NewSheet("Decoy")
		must(err)
		must(f.SetSheetRow("Decoy", "A1", &[]any{"target_type", "plan_name", "year_number"}))
		must(f.SetSheetRow("Decoy", "A2", &[]any{"all_employees", "Hidden plan", 1}))
		must(f.SetSheetVisible("Decoy", false))
		_, err = f.NewSheet("Targets")
		must(err)
		padded := style(f, &excelize.Style{CustomNumFmt: &pad10})
		date14 := style(f, &excelize.Style{NumFmt: 14})
		dateISO := style(f, &excelize.Style{CustomNumFmt: &iso})
		must(f.SetCellValue("Targets", "A1", "Acme Foods: EE targets 2025-2030"))
		must(f.SetSheetRow("Targets", "A3", &[]any{"Target_Type", " plan_name ", "COMPANY_VAT_NUMBER", "company_registration_number", "start_date", "end_date", "sector", "scorecard_id", "financial_year", "year_number", "number_of_african_male_top_managers", "number_of_african_female_top_managers", "number_of_white_male_top_managers", "Notes"}))
		rows := [][]any{
			{"all_employees", "Acme EE Plan", 412345678, "2009/012345/07", 45901, 47726, "manufacturing", "scorecard_acme_2025", "2025/26", nil, 3, "12", " 7 ", "first year"},
			{"Disabled_Employees", "Acme EE Plan", 412345678, "2009/012345/07", 45901, 47726, "manufacturing", "scorecard_acme_2025", "2025/26", nil, 1, "0", nil, nil},
			nil,
			{"all_employees", "Acme EE Plan", 412345678, "2009/012345/07", 45901, 47726, "manufacturing", "scorecard_acme_2025", nil, 2, 4.0, nil, 9, nil},
		}
		for i, r := range rows {
			if r == nil {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(1, 4+i)
			must(f.SetSheetRow("Targets", cell, &r))
			row := 4 + i
			ref := func(col int) string { c, _ := excelize.CoordinatesToCellName(col, row); return c }
			must(f.SetCellStyle("Targets", ref(3), ref(3), padded))
			must(f.SetCellStyle("Targets", ref(5), ref(5), date14))
			must(f.SetCellStyle("Targets", ref(6), ref(6), dateISO))
		}
		// A formula with a cached result: =1+2 showing 3.
		must(f.SetCellValue("Targets", "M5", 3))
		must(f.SetCellFormula("Targets", "M5", "1+2"))
		// An existing plan by id, with financial years only.
		must(f.SetSheetRow("Targets", "A9", &[]any{"all_employees", nil, nil, nil, nil, nil, nil, nil, "2026/2027", nil, 5, 6, 7}))
		must(f.SetCellValue("Targets", "O3", "plan_id"))
		must(f.SetCellValue("Targets", "O9", 1042))
		f.SetActiveSheet(2)
		save(f, filepath.Join(flat, "excelize_flat.xlsx"))
	}

	// A good workbook in the 1904 date system.
	{
		f := excelize.NewFile()
		yes := true
		must(f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}))
		must(f.SetSheetName("Sheet1", "Targets"))
		d := style(f, &excelize.Style{NumFmt: 14})
		must(f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_indian_female_senior_managers"}))
		// 2026-09-01 and 2029-08-31 as 1904 serials (1462 days less than 1900 serials).
		must(f.SetSheetRow("Targets", "A2", &[]any{"Mac Plan", 46266 - 1462, 47361 - 1462, 1, "all_employees", 4}))
		must(f.SetCellStyle("Targets", "B2", "C2", d))
		save(f, filepath.Join(flat, "date1904.xlsx"))
	}

	// Bad: the only table is on a hidden sheet.
	{
		f := excelize.NewFile()
		must(f.SetSheetName("Sheet1", "Notes"))
		must(f.SetCellValue("Notes", "A1", "See the other sheet."))
		_, err := f.NewSheet("Targets")
		must(err)
		must(f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_white_male_top_managers"}))
		must(f.SetSheetRow("Targets", "A2", &[]any{"Hidden Plan", "2025-09-01", "2030-08-31", 1, "all_employees", 1}))
		must(f.SetSheetVisible("Targets", false))
		save(f, filepath.Join(bad, "hidden_sheet.xlsx"))
	}

	// Bad: 1904 dates converted correctly, then found before the earliest start.
	{
		f := excelize.NewFile()
		yes := true
		must(f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}))
		must(f.SetSheetName("Sheet1", "Targets"))
		d := style(f, &excelize.Style{NumFmt: 14})
		must(f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_white_male_top_managers"}))
		// 2025-08-01 and 2030-08-31 in the 1904 system.
		must(f.SetSheetRow("Targets", "A2", &[]any{"Mac Plan", 45870 - 1462, 47726 - 1462, 1, "all_employees", 1}))
		must(f.SetCellStyle("Targets", "B2", "C2", d))
		save(f, filepath.Join(bad, "date1904_early_start.xlsx"))
	}

	// Bad: wrong kinds of cells: a formula without a cached value, TRUE,
	// a date cell as a counter, a plain number as a date, a fraction.
	{
		f := excelize.NewFile()
		must(f.SetSheetName("Sheet1", "Targets"))
		d := style(f, &excelize.Style{NumFmt: 14})
		must(f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_african_male_top_managers", "number_of_african_female_top_managers", "number_of_white_male_top_managers", "number_of_white_female_top_managers"}))
		must(f.SetSheetRow("Targets", "A2", &[]any{"Cells Plan", 45901, 47726, 1, "all_employees", nil, true, 45901, 2.5}))
		must(f.SetCellFormula("Targets", "F2", "SUM(Z1:Z9)"))
		must(f.SetCellStyle("Targets", "H2", "H2", d))
		must(f.SetCellStyle("Targets", "C2", "C2", d))
		save(f, filepath.Join(bad, "cell_kinds.xlsx"))
	}

	// Bad: header beyond row 20.
	{
		f := excelize.NewFile()
		for r := 1; r <= 21; r++ {
			cell, _ := excelize.CoordinatesToCellName(1, r)
			must(f.SetCellValue("Sheet1", cell, "instructions"))
		}
		must(f.SetSheetRow("Sheet1", "A22", &[]any{"plan_name", "target_type"}))
		save(f, filepath.Join(bad, "header_beyond_row_20.xlsx"))
	}

	// Bad: a counter column misspelt, an unknown column, a duplicate row
	// and a conflicting plan field, with the error cells far apart.
	var goodBytes []byte
	{
		f := excelize.NewFile()
		must(f.SetSheetName("Sheet1", "Targets"))
		must(f.SetSheetRow("Targets", "A1", &[]any{"plan_id", "sector", "year_number", "target_type", "number_of_white_male_top_manager", "number_of_white_male_top_managers", "Comment"}))
		must(f.SetSheetRow("Targets", "A2", &[]any{7, "Construction", 1, "all_employees", 1, 1, "ok"}))
		must(f.SetSheetRow("Targets", "A3", &[]any{7, "Construction", 1, "all_employees", 1, 2}))
		must(f.SetSheetRow("Targets", "A4", &[]any{7, "Education", 2, "all_employees", 1, -4}))
		save(f, filepath.Join(bad, "rows_and_headers.xlsx"))
		var buf bytes.Buffer
		_, err := f.WriteTo(&buf)
		must(err)
		goodBytes = buf.Bytes()
	}

	// Bad: a real password-protected workbook.
	{
		f := excelize.NewFile()
		must(f.SetCellValue("Sheet1", "A1", "target_type"))
		save(f, filepath.Join(bad, "encrypted.xlsx"), excelize.Options{Password: "secret"})
	}

	// Bad: truncated and broken zips.
	must(os.WriteFile(filepath.Join(bad, "truncated.xlsx"), goodBytes[:len(goodBytes)*6/10], 0o644))
	broken := append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0x5a, 0x00, 0x13}, 300)...)
	must(os.WriteFile(filepath.Join(bad, "broken_zip.xlsx"), broken, 0o644))
	must(os.WriteFile(filepath.Join(bad, "empty.xlsx"), nil, 0o644))

	// Bad: a zip that is not a workbook.
	{
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.Create("readme.txt")
		must(err)
		_, _ = w.Write([]byte("not a workbook"))
		must(zw.Close())
		must(os.WriteFile(filepath.Join(bad, "zip_not_workbook.xlsx"), buf.Bytes(), 0o644))
	}
}
