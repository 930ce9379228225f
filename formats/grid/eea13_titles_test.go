package grid_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/pipeline"
)

// writeTitledGrids writes a plan sheet (details, then one races-over-
// genders grid per title, no section headings) whose grid i holds
// value(i, counter) in every counter, and returns its path.
func writeTitledGrids(t *testing.T, titles []string, value func(grid, l, r, g int) int) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sh := f.GetSheetName(0)
	set := func(col, row int, v any) {
		ref, _ := excelize.CoordinatesToCellName(col, row)
		if err := f.SetCellValue(sh, ref, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, kv := range [][2]any{{"Plan name", "Titles plan"}, {"Company VAT number", "4012345678"},
		{"Start date", "2026-09-01"}, {"End date", "2029-08-31"}, {"Sector", "Transport and Storage"}} {
		set(1, 1+i, kv[0])
		set(2, 1+i, kv[1])
	}
	cat := pipeline.DefaultCatalog()
	row := 8
	for i, title := range titles {
		set(1, row, title)
		set(1, row+1, "Occupational level")
		for r, race := range cat.Races() {
			set(2+2*r, row+1, race)
			for g, gender := range cat.Genders() {
				set(2+2*r+g, row+2, gender)
			}
		}
		for l, level := range cat.Levels()[:6] {
			set(1, row+3+l, level)
			for r := range cat.Races() {
				for g := range cat.Genders() {
					set(2+2*r+g, row+3+l, value(i, l, r, g))
				}
			}
		}
		row += 11
	}
	path := filepath.Join(t.TempDir(), "titles.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSectionTitleIsNoHeading: a short grid title naming its section (a
// workforce profile's, the numerical goals') is not a heading for the grids
// titled for a year below it: those are their year's targets, and the
// goals agree with the final year's. (Read as a heading, the profile's
// title turned the targets below it into the baseline, with warnings only,
// and the goals' title made each year's targets goals.)
func TestSectionTitleIsNoHeading(t *testing.T) {
	titles := []string{
		"Workforce profile 2025/26 - all employees",
		"Year 1 (2026/27): all employees",
		"Numerical goals: all employees",
		"Year 2 (2027/28): all employees",
		"Year 3 (2028/29): all employees",
	}
	// grid 0 the profile (1000s), grid 2 the goals, equal to grid 4's.
	year := []int{0, 1, 3, 2, 3}
	value := func(i, l, r, g int) int {
		if i == 0 {
			return 1000 + 10*l + 2*r + g
		}
		return 100*year[i] + 10*l + 2*r + g
	}
	b, err := formats.ReadFiles([]string{writeTitledGrids(t, titles, value)}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sample.CheckProblems(t, b.Problems, []sample.Problem{
		sample.Warn("Sheet1!A8", "form EEA13's workforce profile: it is read as the baseline"),
	})
	if len(b.Plans) != 1 {
		t.Fatalf("plans %v", planNames(b.Plans))
	}
	p := b.Plans[0]
	if len(p.Baseline) != 1 {
		t.Errorf("%d baseline grids, want 1 (the profile)", len(p.Baseline))
	}
	got := map[string]map[string]int64{}
	for _, tg := range p.Targets {
		got[tg.FinancialYear.String()+"|"+tg.TargetType] = tg.Counters.Map()
	}
	want := map[string]map[string]int64{}
	for y, fy := range []string{"2026/27", "2027/28", "2028/29"} {
		want[fy+"|"+pipeline.TargetAll] = eea13Counters(y+1, pipeline.TargetAll, 6, func(l, r, g int) int64 {
			return int64(100*(y+1) + 10*l + 2*r + g)
		})
	}
	checkTargets(t, got, want)
}

// TestGoalCellRefusedForItsCause: a goal cell that holds no counter value
// (a 1 formatted 0%, text) is refused for its own cause, as the same cell
// of a targets grid is, not as a difference from the final year's target.
func TestGoalCellRefusedForItsCause(t *testing.T) {
	path := writeTitledGrids(t, []string{"Numerical goals: all employees", "Year 3 (2028/29): all employees"},
		func(_, _, _, _ int) int { return 1 })
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pct, err := f.NewStyle(&excelize.Style{NumFmt: 9}) // 0%
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetCellStyle("Sheet1", "B11", "B11", pct); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCellValue("Sheet1", "C11", "one"); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sample.CheckProblems(t, b.Problems, []sample.Problem{
		sample.Err("Sheet1!B11", "the numerical goal for Top management, African Male: the cell is formatted as a percentage (it shows 100%)"),
		sample.Err("Sheet1!C11", "the numerical goal for Top management, African Female: "),
	})
	for _, p := range b.Problems {
		if p.Origin.Cell == "C11" && strings.Contains(p.Message, "must agree") {
			t.Errorf("the text goal is reported as a difference: %s", p.Message)
		}
	}
}
