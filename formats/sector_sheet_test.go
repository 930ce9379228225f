package formats

import (
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// TestAddSectorSheetCellStyles checks the number format of the data cells,
// which AddSectorSheet applies by column ranges after writing the values:
// shares with one decimal, gaps with two, counts as whole numbers, and the
// row of a plan without years as plain text across its figures.
func TestAddSectorSheetCellStyles(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	r := sectorTestReport(t)
	if err := reports.AddSectorSheet(f, r.Plans, "corrected.csv"); err != nil {
		t.Fatal(err)
	}
	numFmt := func(cell string) string {
		t.Helper()
		id, err := f.GetCellStyle(reports.SectorSheetName, cell)
		if err != nil {
			t.Fatal(err)
		}
		if id == 0 {
			return "unstyled"
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.CustomNumFmt != nil:
			return *st.CustomNumFmt
		case st.NumFmt == 1:
			return "0"
		}
		return "text"
	}
	// Rows 6-15: plan 12 (2 years x 4 levels + disability); row 16: the plan
	// with no sector; rows 17-21: Education.
	for cell, want := range map[string]string{
		"A6": "text", "U6": "0", "B6": "0", "D6": "text", "E6": "0",
		"F6": "0.0", "G6": "0.0", "H6": "0.00", "I6": "0", "J6": "0.0", "L6": "0.00", "M6": "0",
		"N6": "0.0", "P6": "0.00", "Q6": "0", "R6": "text", "S6": "text",
		"N10": "0.0", "Q21": "0", "F21": "0.0",
		"E16": "text", "F16": "text", "H16": "text", "Q16": "text", "R16": "text", "U16": "0", "B16": "0",
		"A22": "unstyled", "Y6": "unstyled",
	} {
		if got := numFmt(cell); got != want {
			t.Errorf("%s: format %q, want %q", cell, got, want)
		}
	}
	// A figure with no value gets the style but no value.
	for cell, want := range map[string]string{"N6": "", "U16": "", "R16": "not assessable", "F16": "", "N10": "3.6"} {
		if got, _ := f.GetCellValue(reports.SectorSheetName, cell); got != want {
			t.Errorf("%s = %q, want %q", cell, got, want)
		}
	}
}

// BenchmarkAddSectorSheet measures the Sector targets sheet of a 500-plan
// export.
func BenchmarkAddSectorSheet(b *testing.B) {
	base := sectorTestReport(&testing.T{}).Plans
	plans := make([]sector.SectorPlanCheck, 0, 500)
	for len(plans) < 500 {
		plans = append(plans, base...)
	}
	plans = plans[:500]
	b.ReportAllocs()
	for b.Loop() {
		f := excelize.NewFile()
		if err := reports.AddSectorSheet(f, plans, "x.csv"); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
}
