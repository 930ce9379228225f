package grid_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline"
)

// eea13Dir holds the fixtures of testdata/eea13/make_eea13.py (openpyxl,
// re-saved by LibreOffice).
const eea13Dir = "../../testdata/eea13"

// eea13Value mirrors value() of make_eea13.py: kind 0 targets, 1 the
// workforce profile (which must never be read as targets).
func eea13Value(kind, year int, dis bool, l, r, g int) int64 {
	if l < 6 {
		var base int64
		if dis {
			base = int64((l + r + g + year) % 3)
		} else {
			base = int64(2 + l + 3*r + g + 5*year)
		}
		if kind == 1 {
			base += 1000
		}
		return base
	}
	var perm int64
	for k := range 6 {
		perm += eea13Value(kind, year, dis, k, r, g)
	}
	temp := int64(1 + r + g + year)
	if dis {
		temp = int64((g + year) % 2)
	}
	return map[int]int64{6: perm, 7: temp, 8: perm + temp}[l]
}

// eea13Counters are the 90 counters of one EEA13 table of the fixtures.
func eea13Counters(year int, tt string, levels int, v func(l, r, g int) int64) map[string]int64 {
	cat := pipeline.DefaultCatalog()
	out := map[string]int64{}
	for l, level := range cat.Levels()[:levels] {
		for r, race := range cat.Races() {
			for g, gender := range cat.Genders() {
				out[pipeline.CounterName(race, gender, level)] = v(l, r, g)
			}
		}
	}
	return out
}

func eea13Target(year int, tt string) map[string]int64 {
	return eea13Counters(year, tt, 9, func(l, r, g int) int64 { return eea13Value(0, year, tt == pipeline.TargetDisabled, l, r, g) })
}

// readEEA13 reads one fixture (with the mapping file words, when given)
// and returns its plans' targets by plan name, then "financial year|target
// type".
func readEEA13(t *testing.T, file string, words *mapping.File) (*pipeline.Batch, map[string]map[string]map[string]int64) {
	t.Helper()
	b, err := formats.ReadFiles([]string{filepath.Join(eea13Dir, file)}, formats.ReadOptions{Words: words})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]map[string]int64{}
	for _, p := range b.Plans {
		got[p.Name] = map[string]map[string]int64{}
		for _, tg := range p.Targets {
			got[p.Name][fmt.Sprintf("%s|%s", tg.FinancialYear, tg.TargetType)] = tg.Counters.Map()
		}
	}
	return b, got
}

func checkTargets(t *testing.T, got, want map[string]map[string]int64) {
	t.Helper()
	for k, w := range want {
		if !maps.Equal(got[k], w) {
			t.Errorf("%s: %d counters read, want %d; first differences: %s", k, len(got[k]), len(w), counterDiff(got[k], w))
		}
	}
	if len(got) != len(want) {
		t.Errorf("targets %v; want %v", sortedKeys(got), sortedKeys(want))
	}
}

// eea13Warnings are the warnings every EEA13 plan fixture gives: the
// gazette's sector spelling, and the two profile tables read as the
// baseline.
var eea13Warnings = []sample.Problem{
	sample.Warn("EE Plan!B7", `the sector "Transportation and Storage" is the gazette's (or form EEA17's) spelling: read as the service's "Transport and Storage"`),
	sample.Warn("EE Plan!A11", "form EEA13's workforce profile: it is read as the baseline (the current workforce), never written as a target"),
	sample.Warn("EE Plan!A25", "form EEA13's workforce profile: it is read as the baseline"),
}

// TestEEA13PlanWorkbook: a consultant's EEA13 plan workbook loads its
// yearly targets and its goals exactly (every counter) and never its
// profile (whose values, 1000 more, appear nowhere), in the words of the
// forms: numbered and footnoted levels, EEA9's "Top Management/
// Executives", gender-first codes, "Indian/Asian".
func TestEEA13PlanWorkbook(t *testing.T) {
	all, dis := pipeline.TargetAll, pipeline.TargetDisabled
	for _, file := range []string{"op_eea13_plan.xlsx", "lo_eea13_plan.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, got := readEEA13(t, file, nil)
			sample.CheckProblems(t, b.Problems, eea13Warnings)
			p := got["Acme EEA13 plan"]
			if len(b.Plans) != 1 || p == nil || b.Plans[0].Sector != "Transport and Storage" {
				t.Fatalf("plans %v", planNames(b.Plans))
			}
			want := map[string]map[string]int64{}
			for y, fy := range []string{"2026/27", "2027/28", "2028/29"} {
				want[fy+"|"+all], want[fy+"|"+dis] = eea13Target(y+1, all), eea13Target(y+1, dis)
			}
			checkTargets(t, p, want)
			// The profile is the plan's baseline, read exactly, and no target.
			base := map[string]map[string]int64{}
			for _, tg := range b.Plans[0].Baseline {
				base[tg.TargetType] = tg.Counters.Map()
			}
			checkTargets(t, base, map[string]map[string]int64{
				all: eea13Counters(0, all, 9, func(l, r, g int) int64 { return eea13Value(1, 0, false, l, r, g) }),
				dis: eea13Counters(0, dis, 9, func(l, r, g int) int64 { return eea13Value(1, 0, true, l, r, g) }),
			})
		})
	}
}

// TestEEA13GoalsDisagree: goals that differ from the final year's
// targets are an error at each differing goal cell, naming the target's
// cell; a blank goal against a value is such a difference too.
func TestEEA13GoalsDisagree(t *testing.T) {
	for _, file := range []string{"op_eea13_disagree.xlsx", "lo_eea13_disagree.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, _ := readEEA13(t, file, nil)
			want := append([]sample.Problem{
				sample.Err("EE Plan!B43", "the numerical goal for Top management, African Male is 24, but the numerical target of the final year 2028/29 at B126 is 17"),
				sample.Err("EE Plan!I44", "the numerical goal for Senior management, White Female is blank, but the numerical target of the final year 2028/29 at I127 is 28"),
			}, eea13Warnings...)
			sample.CheckProblems(t, b.Problems, want)
		})
	}
}

// TestEEA13GoalsOnly: a workbook of the profile and the goals loads the
// goals as the final year's targets (the year holding the end date,
// 2028/29), and nothing else.
func TestEEA13GoalsOnly(t *testing.T) {
	all, dis := pipeline.TargetAll, pipeline.TargetDisabled
	for _, file := range []string{"op_eea13_goals_only.xlsx", "lo_eea13_goals_only.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, got := readEEA13(t, file, nil)
			sample.CheckProblems(t, b.Problems, eea13Warnings)
			checkTargets(t, got["Acme goals plan"], map[string]map[string]int64{"2028/29|" + all: eea13Target(3, all), "2028/29|" + dis: eea13Target(3, dis)})
		})
	}
}

// TestRefusalsNameTheirCause: categories, an EEA4 income table, job
// grades, percentage-formatted counters and a grid whose header no
// vocabulary reads are each refused with their own cause.
func TestRefusalsNameTheirCause(t *testing.T) {
	var want []sample.Problem
	for row := 13; row <= 21; row++ {
		want = append(want, sample.Err(fmt.Sprintf("Categories!A%d", row), "is an occupational category, not an occupational level"))
	}
	for row := 13; row <= 16; row++ {
		want = append(want, sample.Err(fmt.Sprintf("Grades!A%d", row), "is a job grade, not an occupational level: teach eepipe which occupational level each grade is in a mapping file given with --map"))
	}
	want = append(want,
		sample.Err("EEA4 Income!A10", "is of remuneration (form EEA4's income differentials"),
		sample.Err("Percent!B13", "the cell is formatted as a percentage (it shows 100%)"),
		sample.Err("Percent!C13", "the cell is formatted as a percentage (it shows 45%)"),
		sample.Err("Unread header!A10", `this sheet looks like a grid of targets, but no plan is read from it: the grid labelled "Year 1 (2026/27): all employees" has level rows with numbers, but its header ("Occupational level", "Af-M", "Co-M", "In-M", "Wh-M") names no race and gender`),
		sample.Warn("Percent!B7", "the gazette's"),
	)
	for _, file := range []string{"op_refusals.xlsx", "lo_refusals.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, _ := readEEA13(t, file, nil)
			sample.CheckProblems(t, b.Problems, want)
		})
	}
}

// TestPandasHeaderRow: the level column's name on a row of its own below
// a two-row header (pandas' to_excel) is part of the header.
func TestPandasHeaderRow(t *testing.T) {
	for _, file := range []string{"op_pandas_header.xlsx", "lo_pandas_header.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, got := readEEA13(t, file, nil)
			sample.CheckProblems(t, b.Problems, []sample.Problem{sample.Warn("Targets!B7", "the gazette's")})
			checkTargets(t, got["Pandas plan"], map[string]map[string]int64{"2026/27|" + pipeline.TargetAll: eea13Counters(1, pipeline.TargetAll, 2,
				func(l, r, g int) int64 { return eea13Value(0, 1, false, l, r, g) })})
		})
	}
}

// TestClientWordsMappingFile: a client's Exco, Band D, Asian (incl.
// Indian) and sector Logistics read with the mapping file, exactly and
// without a warning; without it, each is refused at its cell.
func TestClientWordsMappingFile(t *testing.T) {
	words, err := mapping.Load(filepath.Join(eea13Dir, "client_words.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cat := pipeline.DefaultCatalog()
	want := map[string]int64{}
	for l, level := range []string{"top_managers", "middle_managers"} {
		for r, race := range cat.Races() {
			for g, gender := range cat.Genders() {
				want[pipeline.CounterName(race, gender, level)] = int64(4 + l + r + g)
			}
		}
	}
	for _, file := range []string{"op_client_words.xlsx", "lo_client_words.xlsx"} {
		t.Run(file, func(t *testing.T) {
			b, got := readEEA13(t, file, words)
			sample.CheckProblems(t, b.Problems, nil)
			if len(b.Plans) != 1 || b.Plans[0].Sector != "Transport and Storage" {
				t.Fatalf("plans %+v", b.Plans)
			}
			checkTargets(t, got["Client words plan"], map[string]map[string]int64{"2026/27|" + pipeline.TargetAll: want})
			b, _ = readEEA13(t, file, nil)
			sample.CheckProblems(t, b.Problems, []sample.Problem{
				sample.Err("Client!F11", `"Asian (incl. Indian)" is not a race`),
				sample.Err("Client!A13", `"Exco" is not an occupational level`),
				sample.Err("Client!A14", `"Band D" is a job grade`),
				sample.Err("Client!F13", "is not read"), sample.Err("Client!G13", "is not read"),
				sample.Err("Client!F14", "is not read"), sample.Err("Client!G14", "is not read"),
			})
		})
	}
}
