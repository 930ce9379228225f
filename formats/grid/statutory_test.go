package grid_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/pipeline"
)

// The statutory-layout fixtures of testdata/acceptance, made by
// make_statutory.py with openpyxl (op_*) and re-saved by LibreOffice
// (lo_*): grid sheets in the shapes of the EE forms.

// statutoryValue is the counter value make_statutory.py writes at level
// index l (the catalog's level order), race index r and gender index g.
func statutoryValue(disabled bool, l, r, g int) int64 {
	if l < 6 {
		if disabled {
			return int64((l + r + g) % 2)
		}
		return int64(1 + l + 2*r + g)
	}
	var perm int64
	for k := range 6 {
		perm += statutoryValue(disabled, k, r, g)
	}
	temp := int64(3 + r + g)
	if disabled {
		temp = int64(g)
	}
	switch l {
	case 6:
		return perm
	case 7:
		return temp
	}
	return perm + temp
}

// statutoryCounters returns every counter of a target type as the
// fixtures hold it, leaving out the levels, races and genders in skip
// (counters whose cells are reported as errors).
func statutoryCounters(tt string, skip ...string) map[string]int64 {
	cat := pipeline.DefaultCatalog()
	out := map[string]int64{}
	for l, level := range cat.Levels() {
		for r, race := range cat.Races() {
			for g, gender := range cat.Genders() {
				name, ok := cat.Counter(race, gender, level)
				if !ok || slices.Contains(skip, level) || slices.Contains(skip, race+"_"+gender) {
					continue
				}
				out[name] = statutoryValue(tt == pipeline.TargetDisabled, l, r, g)
			}
		}
	}
	return out
}

// TestStatutoryLayoutsReadExactly reads each statutory fixture and checks
// every counter of every target (all 90 of a full grid) and every problem,
// at its cell.
func TestStatutoryLayoutsReadExactly(t *testing.T) {
	all, dis := pipeline.TargetAll, pipeline.TargetDisabled
	if n := len(statutoryCounters(all)); n != 90 {
		t.Fatalf("the default catalog has %d counters; the fixtures are made for 90", n)
	}
	cases := []struct {
		files   []string
		plan    string
		targets map[string]map[string]int64 // "year|target type" -> every counter
		// problems as in TestAcceptanceFixtures; "SHEET" is the sheet.
		problems []sample.Problem
		suggest  map[string]string // cell -> first suggestion
		not      []string          // words no problem message may hold
	}{
		{files: []string{"op_eea2_merged.xlsx", "lo_eea2_merged.xlsx"}, plan: "EEA2 merged",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "2|" + all: statutoryCounters(all),
				"1|" + dis: statutoryCounters(dis)}},
		{files: []string{"op_eea2_unmerged.xlsx", "lo_eea2_unmerged.xlsx"}, plan: "EEA2 unmerged",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "1|" + dis: statutoryCounters(dis)}},
		{files: []string{"op_race_letters.xlsx", "lo_race_letters.xlsx"}, plan: "Letters plan",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "1|" + dis: statutoryCounters(dis)}},
		{files: []string{"op_combined.xlsx", "lo_combined.xlsx"}, plan: "Combined plan",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "1|" + dis: statutoryCounters(dis)}},
		{files: []string{"op_eea2_bad.xlsx", "lo_eea2_bad.xlsx"}, plan: "Bad plan",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all, "senior_managers", "junior_managers")},
			problems: []sample.Problem{
				sample.Err("Bad!B4", `"31/08/2029" is not written as YYYY-MM-DD: it can only be day/month/year (31 is no month), but the format requires ISO dates to rule out day/month mix-ups; write it as 2029-08-31`),
				// The end date is invalid (B4): reported there once, not again
				// as a missing end date of a new plan, so the errors are
				// exactly the planted cells.
				sample.Err("Bad!A11", "not an occupational level"),
				sample.Err("Bad!M12", `"42" is in a column this grid does not read: the column has no header`),
				sample.Err("Bad!A13", "not an occupational level"),
				sample.Err("Bad!A21", `does not say clearly whose targets the grid holds; write "All employees" (or "All employees, including people with disabilities") for the targets of all employees, or "Employees with disabilities"`),
			},
			suggest: map[string]string{"Bad!A11": "Senior management", "Bad!A13": "Skilled technical / junior management"}},
		{files: []string{"op_eea13_twice.xlsx"}, plan: "Twice plan",
			targets:  map[string]map[string]int64{"1|" + all: statutoryCounters(all)},
			problems: []sample.Problem{sample.Err("Twice!A21", "are both titled as the targets of all employees for the same year")},
			not:      []string{"disabled_employees"}},
		{files: []string{"op_eea2_gap.xlsx"}, plan: "Gap plan",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all, "indian_male")},
			problems: func() []sample.Problem {
				ps := []sample.Problem{sample.Err("Gap!L8", `"Sum" is not a race or gender of the counter catalog; its column is not read`)}
				for r := 10; r <= 18; r++ {
					ps = append(ps, sample.Err(fmt.Sprintf("Gap!D%d", r), `in a column this grid does not read: its header ("Male" over a blank cell) names no race and gender`))
					// The numbers under the reported "Sum" header are each
					// named too: no value is passed over in silence.
					ps = append(ps, sample.Err(fmt.Sprintf("Gap!L%d", r), `is not read: the header of its column is reported`))
				}
				return ps
			}()},
	}
	for _, tc := range cases {
		for _, file := range tc.files {
			t.Run(file, func(t *testing.T) {
				b, err := formats.ReadFiles([]string{filepath.Join(acceptanceDir, file)}, formats.ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				sample.CheckProblems(t, b.Problems, tc.problems)
				for _, p := range b.Problems {
					for _, w := range tc.not {
						if strings.Contains(p.Message, w) {
							t.Errorf("%s: the message names %s: %s", p.Origin.Ref(), w, p.Message)
						}
					}
					if want, ok := tc.suggest[p.Origin.Ref()]; ok && (len(p.Suggestions) == 0 || p.Suggestions[0] != want) {
						t.Errorf("%s: suggestions %q, want %q first", p.Origin.Ref(), p.Suggestions, want)
					}
				}
				for ref := range tc.suggest {
					found := false
					for _, p := range b.Problems {
						found = found || (p.Origin.Ref() == ref && len(p.Suggestions) > 0)
					}
					if !found {
						t.Errorf("%s: no problem with suggestions", ref)
					}
				}
				if len(b.Plans) != 1 || b.Plans[0].Name != tc.plan {
					t.Fatalf("read %d plans (%v); want one plan %q", len(b.Plans), planNames(b.Plans), tc.plan)
				}
				p := b.Plans[0]
				got := map[string]map[string]int64{}
				for _, tg := range p.Targets {
					y := tg.YearNumber
					if y == 0 {
						y = int(tg.FinancialYear) - int(pipeline.FinancialYearOf(p.StartDate)) + 1
					}
					got[fmt.Sprintf("%d|%s", y, tg.TargetType)] = tg.Counters.Map()
				}
				if !slices.Equal(sortedKeys(got), sortedKeys(tc.targets)) {
					t.Fatalf("targets %v; want %v", sortedKeys(got), sortedKeys(tc.targets))
				}
				for k, want := range tc.targets {
					if !maps.Equal(got[k], want) {
						t.Errorf("%s: %d counters read, want %d; first differences: %s", k, len(got[k]), len(want), counterDiff(got[k], want))
					}
				}
			})
		}
	}
}

func planNames(ps []*pipeline.InputPlan) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	sort.Strings(out)
	return out
}

// counterDiff lists up to five counters that differ.
func counterDiff(got, want map[string]int64) string {
	var out []string
	for _, k := range sortedKeys(want) {
		if g, ok := got[k]; !ok || g != want[k] {
			out = append(out, fmt.Sprintf("%s=%d (read %d, %v)", k, want[k], g, ok))
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s read as %d, not expected", k, got[k]))
		}
	}
	return strings.Join(out[:min(5, len(out))], "; ")
}

// fromTSV reads a sheet built from tab-separated lines as a grid sheet.
func fromTSV(t *testing.T, text string) ([]pipeline.Record, pipeline.Problems) {
	t.Helper()
	wb := excelize.NewFile()
	defer wb.Close()
	for r, line := range strings.Split(text, "\n") {
		for c, v := range strings.Split(line, "\t") {
			if v == "" {
				continue
			}
			var err error
			if n, perr := strconv.Atoi(v); perr == nil {
				err = wb.SetCellInt("Sheet1", cellName(c+1, r+1), int64(n))
			} else {
				err = wb.SetCellStr("Sheet1", cellName(c+1, r+1), v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return readback.ReadGridSheet(t, wb, "t.xlsx", "Sheet1")
}

// TestGridStrayCells: inside a grid's rows, a cell in a column without a
// race and gender header is an error when it holds a number, within the
// header's columns and right of them; text there is a note, with one
// warning per column; a metadata label with its value beside the grid is
// neither.
func TestGridStrayCells(t *testing.T) {
	recs, ps := fromTSV(t, strings.Join([]string{
		"Year 1 all employees",
		"Level\tMale\t\tFemale\t\t\tForeign nationals",
		"\tA\tW\tA\tW\t\tMale\tFemale",
		"Top management\t1\t2\t3\t4\tn/a\t5\t6\ta note\tPlan ID\t4711",
		"Senior management\t1\t\t1\t\t7\t\t\t\t\t\t99",
	}, "\n"))
	var got []string
	for _, p := range ps {
		got = append(got, p.Origin.Cell+": "+p.Message)
	}
	want := []struct {
		cell string
		sev  pipeline.Severity
		text string
	}{
		{"F5", pipeline.Error, `"7" is in a column this grid does not read`},
		{"L5", pipeline.Error, `"99" is in a column this grid does not read`},
		{"F4", pipeline.Warning, `column F has no header and holds text beside the grid ("n/a" in row 4)`},
		{"I4", pipeline.Warning, `column I has no header and holds text beside the grid ("a note" in row 4)`},
	}
	if len(ps) != len(want) {
		t.Fatalf("problems %q; want %v", got, want)
	}
	for i, p := range ps {
		if p.Origin.Cell != want[i].cell || p.Severity != want[i].sev || !strings.Contains(p.Message, want[i].text) {
			t.Errorf("problem %d: %s; want %v", i, got[i], want[i])
		}
	}
	if len(recs) != 1 || recs[0].Cells["plan_id"].Text != "4711" || len(recs[0].Cells) != 8+3 {
		t.Errorf("records %+v", recs)
	}
}

// TestGridBadHeaderCellsNamed: the cells under a header the reader cannot
// read are each an error at the cell, besides the error at the header.
func TestGridBadHeaderCellsNamed(t *testing.T) {
	_, ps := fromTSV(t, strings.Join([]string{
		"Year 1 all employees",
		"Level\tAfircan\t\tWhite",
		"\tMale\tFemale\tMale\tFemale",
		"Top management\t1\t2\t3\t4",
		"Senior management\t\t5\t\t",
	}, "\n"))
	cells := map[string]bool{}
	for _, p := range ps {
		if p.Severity == pipeline.Error {
			cells[p.Origin.Cell] = true
		}
	}
	for _, want := range []string{"B2", "B4", "C4", "C5"} {
		if !cells[want] {
			t.Errorf("no error at %s; problems %v", want, ps)
		}
	}
	for _, not := range []string{"D4", "E4", "B5"} {
		if cells[not] {
			t.Errorf("error at %s, a read or blank cell; problems %v", not, ps)
		}
	}
}

// TestGridTotalColumn: a Total column is not read, but a row whose counters
// do not add up to its total is a warning at the total; a "Total male"
// column and a row with a blank counter are not compared.
func TestGridTotalColumn(t *testing.T) {
	recs, ps := fromTSV(t, strings.Join([]string{
		"Year 1 all employees",
		"Level\tAM\tAF\tTotal\tTotal male",
		"Top management\t1\t2\t3\t1",
		"Senior management\t1\t2\t4\t9",
		"Unskilled\t1\t\t4\t9",
	}, "\n"))
	if len(ps) != 1 || ps[0].Origin.Cell != "D4" || ps[0].Severity != pipeline.Warning ||
		!strings.Contains(ps[0].Message, "the Total column says 4, but the 2 counters of this row add up to 3") {
		t.Errorf("problems %v; want one warning at D4", ps)
	}
	if len(recs) != 1 || len(recs[0].Cells) != 5+2 {
		t.Errorf("records %+v", recs)
	}
}
