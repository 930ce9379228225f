package reports

import (
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
)

// TestProblemReportXLSXIsFilterable checks the XLSX problem report: one row
// per problem under a header, inside a table (the filter buttons of a
// filterable sheet), and a valid workbook when there is no problem at all.
func TestProblemReportXLSXIsFilterable(t *testing.T) {
	dir := t.TempDir()
	b := &pipeline.Batch{Files: []string{"a.csv"}}
	b.Problems.Errorf(pipeline.Origin{File: "a.csv", Row: 2, Column: 4, Header: "number_of_african_male_top_managers"}, "-2", "negative")
	b.Problems.Warnf(pipeline.Origin{File: "a.csv", Row: 1, Column: 5}, "Notes", "unknown column")
	for _, tc := range []struct {
		name   string
		batch  *pipeline.Batch
		rows   int
		tables int
	}{
		{"two.xlsx", b, 3, 1},
		{"none.xlsx", &pipeline.Batch{Files: []string{"a.csv"}}, 1, 0},
	} {
		path := filepath.Join(dir, tc.name)
		if err := WriteProblemReport(path, tc.batch); err != nil {
			t.Fatal(err)
		}
		x, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := x.GetRows("Problems")
		tables, _ := x.GetTables("Problems")
		x.Close()
		if len(rows) != tc.rows || rows[0][0] != "Severity" {
			t.Errorf("%s: rows %v", tc.name, rows)
		}
		if len(tables) != tc.tables {
			t.Errorf("%s: %d tables, want %d", tc.name, len(tables), tc.tables)
		}
		if tc.tables == 1 && tables[0].Range != "A1:L3" {
			t.Errorf("%s: table over %s, want A1:L3", tc.name, tables[0].Range)
		}
	}
}
