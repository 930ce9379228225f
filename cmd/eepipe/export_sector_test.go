package main

import (
	"archive/zip"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
)

// TestExportGridSectorSheet: the grid export's Sector targets sheet comes
// right after the Overview (written before the plan sheets exist, when
// excelize's cell calls are cheap), and --no-charts leaves out its charts
// too: the workbook then has no chart part at all.
func TestExportGridSectorSheet(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Sector", 3)
	for _, noCharts := range []bool{false, true} {
		path := e.path("with-charts.xlsx")
		args := []string{"export", "-o", path, "--layout", "grid"}
		if noCharts {
			path = e.path("no-charts.xlsx")
			args = []string{"export", "-o", path, "--layout", "grid", "--no-charts"}
		}
		if code, _, stderr := e.run(args...); code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr)
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sheets := f.GetSheetList()
		f.Close()
		if len(sheets) < 5 || sheets[0] != export.OverviewSheet || sheets[1] != reports.SectorSheetName {
			t.Errorf("sheets %v: want the Overview, then %q, then the plan sheets", sheets, reports.SectorSheetName)
		}
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		charts := 0
		for _, zf := range zr.File {
			if strings.HasPrefix(zf.Name, "xl/charts/chart") {
				charts++
			}
		}
		zr.Close()
		if noCharts && charts != 0 {
			t.Errorf("--no-charts: %d chart parts, want none", charts)
		}
		if !noCharts && charts < 6 {
			t.Errorf("with charts: %d chart parts, want the plans' and the Sector sheet's", charts)
		}
	}
}
