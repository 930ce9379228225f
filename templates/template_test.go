package templates_test

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

func write(t *testing.T, f *excelize.File, path string) {
	t.Helper()
	if err := xlsx.WriteFileAtomic(path, func(w io.Writer) error { _, err := f.WriteTo(w); return err }); err != nil {
		t.Fatal(err)
	}
}

// cellOf returns the reference of the first cell of sheet whose text is text.
func cellOf(t *testing.T, f *excelize.File, sheet, text string) (col, row int) {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for r, cells := range rows {
		for c, v := range cells {
			if v == text {
				return c + 1, r + 1
			}
		}
	}
	t.Fatalf("%s: no cell reads %q", sheet, text)
	return 0, 0
}

func ref(c, r int) string { s, _ := excelize.CoordinatesToCellName(c, r); return s }

// TestGridTemplateFilledReadsBack fills in the grid template the way a
// consultant does (typing into the cells next to the labels and into the
// grids) and reads it back with the reader eepipe apply uses.
func TestGridTemplateFilledReadsBack(t *testing.T) {
	dir := t.TempDir()
	f, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "template.xlsx")
	write(t, f, path)
	f.Close()

	// The unfilled template opens and holds what the brief promises.
	f, err = excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("template does not reopen: %v", err)
	}
	if got := f.GetSheetList(); !reflect.DeepEqual(got, []string{templates.InstructionsSheet, templates.PlanSheetName, templates.ListsSheet}) {
		t.Fatalf("sheets %v", got)
	}
	if v, _ := f.GetSheetVisible(templates.ListsSheet); v {
		t.Error("the Lists sheet is visible")
	}
	if f.GetActiveSheetIndex() != 0 {
		t.Errorf("active sheet %d, want the Instructions", f.GetActiveSheetIndex())
	}
	dvs, err := f.GetDataValidations(templates.PlanSheetName)
	if err != nil {
		t.Fatal(err)
	}
	var counterDV, sectorDV, dateDV int
	for _, dv := range dvs {
		switch {
		case dv.Type == "whole" && strings.Count(dv.Sqref, ":") == 10:
			counterDV++
			if dv.Formula1 != "0" {
				t.Errorf("counter validation minimum %q", dv.Formula1)
			}
		case dv.Type == "list":
			sectorDV++
			if !strings.Contains(dv.Formula1, templates.ListsSheet+"!") {
				t.Errorf("sector list %q is not on the Lists sheet", dv.Formula1)
			}
		case dv.Type == "date":
			dateDV++
		}
	}
	if counterDV != 1 || sectorDV != 1 || dateDV != 2 {
		t.Errorf("validations: %d counter (10 grids), %d sector, %d date; all: %+v", counterDV, sectorDV, dateDV, dvs)
	}
	panes, err := f.GetPanes(templates.PlanSheetName)
	if err != nil || !panes.Freeze || panes.XSplit != 1 {
		t.Errorf("panes %+v %v", panes, err)
	}
	sectors, err := f.GetRows(templates.ListsSheet)
	if err != nil || len(sectors) != len(pipeline.Sectors) || sectors[17][0] != pipeline.Sectors[17] {
		t.Errorf("Lists sheet: %v %v", sectors, err)
	}

	// Fill in.
	sheet := templates.PlanSheetName
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	value := func(label string) string { c, r := cellOf(t, f, sheet, label); return ref(c+1, r) }
	must(f.SetCellValue(sheet, value("Plan name"), "Karoo EE plan"))
	must(f.SetCellValue(sheet, value("Company VAT number"), "0412345678"))
	must(f.SetCellValue(sheet, value("Company ID number"), "8001015009087"))
	must(f.SetCellValue(sheet, value("Start date"), time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)))
	must(f.SetCellValue(sheet, value("End date"), "2027-08-31"))
	must(f.SetCellValue(sheet, value("Sector"), "Agriculture, Forestry & Fishing"))
	grid := func(label string) (col, row int) {
		c, r := cellOf(t, f, sheet, label)
		return c, r + 3 // label, race row, gender row
	}
	c, r := grid(templates.GridLabel(1, 0, pipeline.TargetAll))
	must(f.SetCellValue(sheet, ref(c+1, r), 5))       // African male, top management
	must(f.SetCellValue(sheet, ref(c+2, r+1), 0))     // African female, senior management
	must(f.SetCellValue(sheet, ref(c+10, r+8), 1234)) // Foreign female, grand total
	c, r = grid(templates.GridLabel(2, 0, pipeline.TargetDisabled))
	must(f.SetCellValue(sheet, ref(c+4, r+5), 2)) // Coloured female, unskilled
	filled := filepath.Join(dir, "filled.xlsx")
	must(f.SaveAs(filled))
	f.Close()

	b, err := formats.ReadFiles([]string{filled}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Problems.HasErrors() || len(b.Plans) != 1 {
		t.Fatalf("plans %d, problems %v", len(b.Plans), b.Problems)
	}
	p := b.Plans[0]
	if p.Name != "Karoo EE plan" || p.Company.VAT != "0412345678" || p.Company.IDNumber != "8001015009087" ||
		p.StartDate != mustDate("2025-09-01") || p.EndDate != mustDate("2027-08-31") ||
		p.Sector != "Agriculture, Forestry & Fishing" || p.PlanID != 0 {
		t.Errorf("plan fields: %+v", p)
	}
	want := map[[2]any]map[string]int64{
		{1, pipeline.TargetAll}: {
			"number_of_african_male_top_managers":            5,
			"number_of_african_female_senior_managers":       0,
			"number_of_foreign_female_grand_total_employees": 1234,
		},
		{2, pipeline.TargetDisabled}: {"number_of_coloured_female_unskilled_employees": 2},
	}
	if len(p.Targets) != len(want) {
		t.Fatalf("targets %d, want %d (blank grids are skipped)", len(p.Targets), len(want))
	}
	for _, tg := range p.Targets {
		w, ok := want[[2]any{tg.YearNumber, tg.TargetType}]
		if !ok || !reflect.DeepEqual(tg.Counters.Map(), w) {
			t.Errorf("year %d %s: %v, want %v", tg.YearNumber, tg.TargetType, tg.Counters, w)
		}
		if tg.FinancialYear != pipeline.FinancialYear(2024+tg.YearNumber) {
			t.Errorf("year %d: financial year %s", tg.YearNumber, tg.FinancialYear)
		}
	}
}

// TestFlatTemplateFilledReadsBack fills in a row of the flat template.
func TestFlatTemplateFilledReadsBack(t *testing.T) {
	dir := t.TempDir()
	f, err := templates.New(templates.Options{Layout: templates.LayoutFlat})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, err := f.GetRows(templates.FlatSheet)
	if err != nil || !reflect.DeepEqual(header[0], table.FlatHeader(nil)) {
		t.Fatalf("header %v %v", header, err)
	}
	set := func(col string, v any) {
		for i, h := range header[0] {
			if h == col {
				if err := f.SetCellValue(templates.FlatSheet, ref(i+1, 2), v); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("no column %s", col)
	}
	set("plan_id", 42)
	set("year_number", 1)
	set("target_type", "disabled_employees")
	set("number_of_white_male_top_managers", 3)
	path := filepath.Join(dir, "flat.xlsx")
	write(t, f, path)
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Problems.HasErrors() || len(b.Plans) != 1 || b.Plans[0].PlanID != 42 ||
		!reflect.DeepEqual(b.Plans[0].Targets[0].Counters.Map(), map[string]int64{"number_of_white_male_top_managers": 3}) {
		t.Fatalf("plans %+v problems %v", b.Plans, b.Problems)
	}
}

// TestTemplateCustomCatalogAndStart: a custom catalog gets its own grid,
// a start date labels the grids with their financial years, and the empty
// template reads without errors and without plans.
func TestTemplateCustomCatalogAndStart(t *testing.T) {
	cat, err := pipeline.NewCatalog([]string{
		"number_of_african_male_top_managers", "number_of_african_diverse_top_managers",
		"number_of_other_male_apprentices", "number_of_other_diverse_apprentices",
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := templates.New(templates.Options{Catalog: cat, Years: 2, Start: mustDate("2026-09-01")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := templates.PlanSheetName
	c, r := cellOf(t, f, sheet, templates.GridLabel(2, 2027, pipeline.TargetDisabled))
	rows, _ := f.GetRows(sheet)
	if got := rows[r][c-1:]; !reflect.DeepEqual(got, []string{"Occupational level", "African", "", "Other"}) {
		t.Errorf("race row %q", got)
	}
	if got := rows[r+1][c:]; !reflect.DeepEqual(got, []string{"Male", "Diverse", "Male", "Diverse"}) {
		t.Errorf("gender row %q", got)
	}
	if got := rows[r+3][c-1]; got != "Apprentices" {
		t.Errorf("second level row %q", got)
	}
	for _, row := range rows {
		for _, v := range row {
			if strings.HasPrefix(v, "Year 3") {
				t.Errorf("a third year in a two-year template: %q", v)
			}
		}
	}
	nc, nr := cellOf(t, f, sheet, "Plan name")
	for _, v := range []struct {
		ref string
		v   any
	}{
		{ref(nc+1, nr), "Custom plan"},
		{ref(c+2, r+4), 4}, // African diverse apprentices: not in the catalog
		{ref(c+4, r+4), 6}, // Other diverse apprentices
	} {
		if err := f.SetCellValue(sheet, v.ref, v.v); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "custom.xlsx")
	write(t, f, path)
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range b.Problems {
		msgs = append(msgs, p.String())
	}
	joined := strings.Join(msgs, "\n")
	if !strings.Contains(joined, "number_of_african_diverse_apprentices") {
		t.Errorf("a counter the catalog lacks is not reported:\n%s", joined)
	}
	if len(b.Plans) != 1 || b.Plans[0].Targets[0].Counters.Map()["number_of_other_diverse_apprentices"] != 6 {
		t.Errorf("plans %+v", b.Plans)
	}
}

func TestTemplateOptions(t *testing.T) {
	if _, err := templates.New(templates.Options{Layout: "wide"}); err == nil {
		t.Error("unknown layout accepted")
	}
	if _, err := templates.New(templates.Options{Years: templates.MaxYears + 1}); err == nil {
		t.Error("too many years accepted")
	}
	f, err := templates.New(templates.Options{Years: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, r := cellOf(t, f, templates.PlanSheetName, templates.GridLabel(1, 0, pipeline.TargetDisabled)); r == 0 {
		t.Error("no disabled grid")
	}
}

func TestSheetNames(t *testing.T) {
	tests := []struct {
		base, fallback string
		taken          []string
		want           string
	}{
		{"Acme EE plan", "Plan 1", nil, "Acme EE plan"},
		{"a/b\\c[d]:e*f?g", "x", nil, "a-b-c-d--e-f-g"},
		{"", "Plan 7", nil, "Plan 7"},
		{"'quoted'", "x", nil, "quoted"},
		{"History", "x", nil, "History (2)"},
		{"Acme", "x", []string{"acme"}, "Acme (2)"},
		{"Acme", "x", []string{"Acme", "Acme (2)"}, "Acme (3)"},
		{strings.Repeat("Long name ", 5), "x", nil, "Long name Long name Long name"},
		// Cut at a word boundary, nothing dangling, and unique.
		{"Acme Foods Employment Equity Plan 2025-2030", "x", nil, "Acme Foods Employment Equity"},
		{"Acme Foods EE Plan 2025-2030 - Revised", "x", nil, "Acme Foods EE Plan 2025-2030"},
		{"Acme Foods Employment Equity Plan 2026-2031", "x", []string{"Acme Foods Employment Equity"}, "Acme Foods Employment (2)"},
		{"Supercalifragilisticexpialidociously-long-name", "x", nil, "Supercalifragilisticexpialidoci"},
		{strings.Repeat("é", 40), "x", []string{strings.Repeat("é", 31)}, strings.Repeat("é", 27) + " (2)"},
		// Excel and excelize count UTF-16 units: an emoji is two.
		{"Plan 🚀 emoji " + strings.Repeat("😀", 14), "x", nil, "Plan 🚀 emoji " + strings.Repeat("😀", 8)},
		{strings.Repeat("😀", 20), "x", []string{strings.Repeat("😀", 15)}, strings.Repeat("😀", 13) + " (2)"},
		{"a\ufffeb\uffffc", "x", nil, "abc"},
		// Compared as excelize compares (strings.EqualFold): "ſ" is "s".
		{"Baſe", "x", []string{"BASE"}, "Baſe (2)"},
		{"\u212Aelvin", "x", []string{"kelvin"}, "\u212Aelvin (2)"},
	}
	for _, tc := range tests {
		got := templates.NewSheetNames(tc.taken).Name(tc.base, tc.fallback)
		if got != tc.want {
			t.Errorf("NewSheetNames(%q).Name(%q) = %q, want %q", tc.taken, tc.base, got, tc.want)
		}
		f := excelize.NewFile()
		if _, err := f.NewSheet(got); err != nil {
			t.Errorf("excelize refuses %q: %v", got, err)
		}
		f.Close()
	}
}

// TestEmptyTemplateWarns: an unfilled template is valid but changes
// nothing, and validation says so.
func TestEmptyTemplateWarns(t *testing.T) {
	f, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	path := filepath.Join(t.TempDir(), "empty.xlsx")
	write(t, f, path)
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Plans) != 0 || len(b.Problems) != 1 || b.Problems[0].Severity != pipeline.Warning ||
		!strings.Contains(b.Problems[0].Message, "blank") {
		t.Fatalf("plans %d, problems %v", len(b.Plans), b.Problems)
	}
}

// mustDate is pipeline.ParseDate for a literal known to be valid.
func mustDate(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
