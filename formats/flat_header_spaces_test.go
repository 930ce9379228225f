package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestFlatHeaderWithSpacesIsRead: a flat table whose target_type header is
// typed with spaces around it and in another case (" Target_Type ") is
// read as a flat table, in a CSV file and in a workbook alike, its counter
// read exactly (templates.IsFlatHeaderCell, the one rule).
func TestFlatHeaderWithSpacesIsRead(t *testing.T) {
	header := []string{"plan_id", "year_number", " Target_Type ", "plan_name", "number_of_african_male_top_managers"}
	row := []string{"7", "1", "all_employees", "Spaced header", "5"}
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "spaced.csv")
	csv := "\ufeff" + strings.Join(header, ",") + "\n" + strings.Join(row, ",") + "\n"
	if err := os.WriteFile(csvPath, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	xlsxPath := filepath.Join(dir, "spaced.xlsx")
	f := excelize.NewFile()
	for i, v := range header {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		if err := f.SetCellStr("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range row {
		cell, _ := excelize.CoordinatesToCellName(i+1, 2)
		if err := f.SetCellStr("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(xlsxPath); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{csvPath, xlsxPath} {
		b, err := ReadFiles([]string{path}, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Problems) > 0 {
			t.Errorf("%s: problems:\n%s", filepath.Base(path), problemsText(b.Problems))
		}
		if len(b.Plans) != 1 || len(b.Plans[0].Targets) != 1 || b.Plans[0].Targets[0].TargetType != "all_employees" ||
			b.Plans[0].Targets[0].Counters.Map()["number_of_african_male_top_managers"] != 5 {
			t.Errorf("%s: read %+v; want plan 7's one target with 5", filepath.Base(path), model(b.Plans))
		}
	}
}
