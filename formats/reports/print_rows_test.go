package reports_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
)

// printRowsWhole checks, on the printed pages of one workbook (pages, read
// with PyMuPDF), that its reports print as a person reads them: the
// reconcile report's Summary and Changes each finding whole on one page
// (plan, year, target, counter, the two values and the class); the Sector
// targets sheet each row's figures on a page with its plan, year and
// level, each chart on one page; the history report every value whole.
func printRowsWhole(t *testing.T, path string, pages []pdfPage) {
	t.Helper()
	name := filepath.Base(path)
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bySheet := map[string][]pdfPage{}
	for _, p := range pages {
		bySheet[p.footer()] = append(bySheet[p.footer()], p)
	}
	sheetRows := func(sheet string) [][]string {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rows
	}
	switch {
	case strings.HasPrefix(name, "reconcile-"):
		// Finding, plan name, year, target, counter, workbook value,
		// service value (columns A, D, F, H, I, J, K).
		rows := sheetRows(reports.SummarySheet)
		printFindings(t, name, reports.SummarySheet, bySheet[reports.SummarySheet], rows, "Finding", []int{0, 3, 5, 7, 8, 9, 10})
		// Plan, financial year, target, counter, file value, service
		// value, class (columns C to I).
		rows = sheetRows(reports.ChangesSheet)
		printFindings(t, name, reports.ChangesSheet, bySheet[reports.ChangesSheet], rows, "Sheet", []int{2, 3, 4, 5, 6, 7, 8})
	case name == "history.xlsx":
		for _, sheet := range f.GetSheetList() {
			printValuesWhole(t, name, sheet, bySheet[sheet], sheetRows(sheet))
		}
	}
	if idx, _ := f.GetSheetIndex(reports.SectorSheetName); idx >= 0 {
		printSectorRows(t, name, bySheet[reports.SectorSheetName], sheetRows(reports.SectorSheetName))
	}
}

// squeeze drops a text's white space, as pdfPage.text does.
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// printFindings checks that each row of a findings table (its header row
// the one whose first cell is first) prints with the cells cols on one
// page of the sheet's pages.
func printFindings(t *testing.T, name, sheet string, pages []pdfPage, rows [][]string, first string, cols []int) {
	t.Helper()
	if len(pages) == 0 {
		t.Errorf("%s: sheet %s printed no page", name, sheet)
		return
	}
	texts := make([]string, len(pages))
	for i, p := range pages {
		texts[i] = p.text()
	}
	header := -1
	for i, r := range rows {
		if len(r) > 0 && r[0] == first {
			header = i
			break
		}
	}
	if header < 0 || header == len(rows)-1 {
		t.Fatalf("%s %s: no findings table under a %q header", name, sheet, first)
	}
	for _, r := range rows[header+1:] {
		var want []string
		for _, c := range cols {
			if c < len(r) && squeeze(r[c]) != "" {
				want = append(want, squeeze(r[c]))
			}
		}
		whole := false
		for _, text := range texts {
			all := true
			for _, w := range want {
				all = all && strings.Contains(text, w)
			}
			whole = whole || all
		}
		if !whole {
			t.Errorf("%s %s: no printed page holds the whole finding %q", name, sheet, want)
		}
	}
	// The columns in cols on every page: the table prints one page wide.
	for i, text := range texts {
		for _, c := range cols {
			if h := squeeze(rows[header][c]); !strings.Contains(text, h) {
				t.Errorf("%s %s page %d: column %q is not on the page", name, sheet, i+1, rows[header][c])
			}
		}
	}
}

// printValuesWhole checks that every value of a sheet prints whole.
func printValuesWhole(t *testing.T, name, sheet string, pages []pdfPage, rows [][]string) {
	t.Helper()
	var all strings.Builder
	for _, p := range pages {
		all.WriteString(p.text())
	}
	text := all.String()
	for i, r := range rows {
		for j, v := range r {
			if v = squeeze(v); v != "" && !strings.Contains(text, v) {
				ref, _ := excelize.CoordinatesToCellName(j+1, i+1)
				t.Errorf("%s %s!%s: %q does not print whole", name, sheet, ref, v)
			}
		}
	}
}

// printSectorRows checks that every printed page of the Sector targets
// sheet that shows figures names each row's plan, year and level: the
// header's Plan, Year and Level columns are on it, and each data row's
// plan and level are on a page with each of its figures' headers.
func printSectorRows(t *testing.T, name string, pages []pdfPage, rows [][]string) {
	t.Helper()
	if len(pages) == 0 || len(rows) < 6 {
		t.Errorf("%s: the Sector targets sheet printed %d pages of %d rows", name, len(pages), len(rows))
		return
	}
	header := rows[4]
	texts := make([]string, len(pages))
	for i, p := range pages {
		texts[i] = p.text()
	}
	for i, text := range texts {
		if !strings.Contains(text, "Result") && !strings.Contains(text, "Headcount") && !strings.Contains(text, "target%") {
			continue // the chart data or the charts
		}
		for _, h := range []string{"Plan", "Year", "Level"} {
			if !strings.Contains(text, h) {
				t.Errorf("%s Sector targets page %d: figures without the %s column", name, i+1, h)
			}
		}
	}
	missing := 0
	for _, r := range rows[5:] {
		if len(r) < 5 || r[0] == "" {
			continue
		}
		for c := 4; c < len(r) && c < len(header); c++ {
			if r[c] == "" {
				continue
			}
			found := false
			for _, text := range texts {
				found = found || strings.Contains(text, squeeze(header[c])) && strings.Contains(text, squeeze(r[0])) && strings.Contains(text, squeeze(r[3]))
			}
			if !found {
				if missing++; missing <= 5 {
					t.Errorf("%s Sector targets: %s (%s, %s) prints on no page with its plan and level", name, header[c], r[0], r[3])
				}
			}
		}
	}
	if missing > 5 {
		t.Errorf("%s Sector targets: %d figures in all print on no page with their plan and level", name, missing)
	}
	// Each chart on one page: its title whole on the page it starts on.
	charts, titles := 0, 0
	for _, r := range rows {
		if len(r) >= reports.SectorChartCol && strings.HasPrefix(r[reports.SectorChartCol-1], "Chart data:") {
			charts++
		}
	}
	for i, text := range texts {
		starts, ends := strings.Count(text, "designated-groupshares"), strings.Count(text, "peryearagainstthetargets")
		if starts != ends {
			t.Errorf("%s Sector targets page %d: a chart cut at the page's edge (%d chart titles begin on it, %d end)", name, i+1, starts, ends)
		}
		titles += ends
	}
	if titles != charts {
		t.Errorf("%s Sector targets: %d charts print whole, want %d", name, titles, charts)
	}
}
