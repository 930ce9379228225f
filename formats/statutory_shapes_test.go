package formats

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// TestStatutoryShapeFixtures reads the fixtures of make_statutory_shapes.py (openpyxl,
// re-saved by LibreOffice): EEA2 tables off column A with merged headers,
// EEA13 titles, official and slash/comma level wordings, a counter typed
// as text, blank counters, real date cells; and a sheet with cells planted
// in unmapped columns of a grid's rows. Every counter is checked, and
// every problem at its cell (a problem not listed fails).
func TestStatutoryShapeFixtures(t *testing.T) {
	all, dis := pipeline.TargetAll, pipeline.TargetDisabled
	disBlank := statutoryCounters(dis)
	delete(disBlank, "number_of_white_female_unskilled_employees")
	delete(disBlank, "number_of_foreign_male_temporary_employees")
	if len(disBlank) != 88 {
		t.Fatalf("blanked counters are not in the catalog: %d left", len(disBlank))
	}
	stray := func(sheet string) []wantProblem {
		ps := []wantProblem{
			perr(sheet+"!B5", `"03/04/2026" is ambiguous: it could be day/month or month/day; write dates as YYYY-MM-DD: 2026-04-03 if it is day/month, 2026-03-04 if it is month/day`),
			perr(sheet+"!B6", `it can only be day/month/year (31 is no month), but the format requires ISO dates to rule out day/month mix-ups; write it as 2029-08-31`),
		}
		// Numbers (also typed as text) beside the rows are errors: they
		// could be counters. The words of column M (n/a, twelve) are notes:
		// one warning for the column.
		for _, ref := range []string{"M11", "N13", "O15"} {
			ps = append(ps, perr(sheet+"!"+ref, "in a column this grid does not read: the column has no header"))
		}
		return append(ps, pwarn(sheet+"!M12", `column M has no header and holds text beside the grid ("n/a" in 2 cells of rows 12 to 14), so it is read as notes`))
	}
	cases := []struct {
		files    []string
		plan     string
		start    string
		end      string
		targets  map[string]map[string]int64
		problems []wantProblem
	}{
		{files: []string{"rv_op_eea2_offset.xlsx", "rv_lo_eea2_offset.xlsx"}, plan: "Offset plan",
			start: "2026-09-01", end: "2029-08-31",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "1|" + dis: disBlank,
				"2|" + all: statutoryCounters(all)}},
		{files: []string{"rv_op_slash_variants.xlsx", "rv_lo_slash_variants.xlsx"}, plan: "Slash plan",
			start: "2026-09-01", end: "2029-08-31",
			targets: map[string]map[string]int64{"1|" + all: statutoryCounters(all), "1|" + dis: statutoryCounters(dis)}},
		{files: []string{"rv_op_eea2_stray.xlsx", "rv_lo_eea2_stray.xlsx"}, plan: "Stray plan",
			problems: stray("Stray")}, // its dates are invalid: no plan

	}
	for _, tc := range cases {
		for _, file := range tc.files {
			t.Run(file, func(t *testing.T) {
				b, err := ReadFiles([]string{filepath.Join(acceptanceDir, file)}, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				checkAcceptanceProblems(t, b.Problems, tc.problems)
				if tc.targets == nil {
					if len(b.Plans) != 0 {
						t.Errorf("read %d plans; want none", len(b.Plans))
					}
					return
				}
				if len(b.Plans) != 1 || b.Plans[0].Name != tc.plan {
					t.Fatalf("read %d plans (%v); want one plan %q", len(b.Plans), planNames(b.Plans), tc.plan)
				}
				p := b.Plans[0]
				if tc.start != "" && (p.StartDate.String() != tc.start || p.EndDate.String() != tc.end) {
					t.Errorf("dates %s to %s; want %s to %s", p.StartDate, p.EndDate, tc.start, tc.end)
				}
				got := map[string]map[string]int64{}
				for _, tg := range p.Targets {
					got[fmt.Sprintf("%d|%s", tg.YearNumber, tg.TargetType)] = tg.Counters.Map()
				}
				for k, want := range tc.targets {
					if !maps.Equal(got[k], want) {
						t.Errorf("%s: %d counters read, want %d; first differences: %s", k, len(got[k]), len(want), counterDiff(got[k], want))
					}
				}
				if len(got) != len(tc.targets) {
					t.Errorf("targets %v; want %v", sortedKeys(got), sortedKeys(tc.targets))
				}
			})
		}
	}
}

// TestAnnotateGridShapeFixturesStrict: validate --annotate over the stray
// grid fixtures (merged headers, openpyxl and LibreOffice) marks every
// problem cell and writes a workbook that passes the strict check.
func TestAnnotateGridShapeFixturesStrict(t *testing.T) {
	for _, file := range []string{"rv_op_eea2_stray.xlsx", "rv_lo_eea2_stray.xlsx"} {
		t.Run(file, func(t *testing.T) {
			src := filepath.Join(acceptanceDir, file)
			b, err := ReadFiles([]string{src}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "checked.xlsx")
			marked, err := reports.AnnotateWorkbook(src, dst, b.Problems)
			if err != nil || marked != len(b.Problems) || marked != 6 {
				t.Fatalf("marked %d cells of %d problems, %v; want 6", marked, len(b.Problems), err)
			}
			checkStrictXLSX(t, dst)
		})
	}
}

// TestGridOrphanLevelRow: a level row with numbers that a blank row and a
// row of other text cut off from its grid is an error at its label, never
// dropped; the grid above still reads, and a level row under a header
// already reported as unlabelled is not reported twice.
func TestGridOrphanLevelRow(t *testing.T) {
	recs, ps := gridFromTSV(t, strings.Join([]string{
		"Year 1 all employees",
		"Level\tMale\t\tFemale\t\tTotal",
		"\tA\tW\tA\tW",
		"Top management\t1\t2\t3\t4\t10",
		"Senior management\t1\t1\t1\t1\t4",
		"",
		"Comments: none",
		"Middle management\t1\t1\t1\t1\t4",
		"Unskilled employees\tn/a",
		"",
		"\tAfrican\t\tWhite",
		"\tMale\tFemale\tMale\tFemale",
		"Top management\t9\t9\t9\t9",
	}, "\n"))
	var got []string
	for _, p := range ps {
		got = append(got, p.Origin.Cell+": "+p.Message)
	}
	ps.Sort()
	if len(ps) != 2 || ps[0].Origin.Cell != "A8" || !strings.Contains(ps[0].Message, `the level row "Middle management" is outside every grid, so its numbers are not read`) ||
		ps[1].Origin.Cell != "B11" || !strings.Contains(ps[1].Message, "with no label above it") {
		t.Errorf("problems %q; want the orphan level row at A8 and the unlabelled header at B11", got)
	}
	if len(recs) != 1 || len(recs[0].Cells) != 8+2 {
		t.Errorf("records %+v", recs)
	}
}

// TestGridColumnBesideTotal: a column right of a Total header (not merged
// with it) whose own sub-header says something else ("Notes") is not a
// totals column: its header is an error, never a silent skip of its
// numbers; a Total merged across two columns still heads both.
func TestGridColumnBesideTotal(t *testing.T) {
	recs, ps := gridFromTSV(t, strings.Join([]string{
		"Year 1 all employees",
		"Occupational levels\tMale\t\tFemale\t\tForeign Nationals\t\tTotal\t",
		"\tA\tW\tA\tW\tMale\tFemale\t\tNotes",
		"Top management\t1\t2\t3\t4\t5\t6\t21\t7",
	}, "\n"))
	if len(ps) != 2 || ps[0].Origin.Cell != "I3" || ps[0].Severity != pipeline.Error || !strings.Contains(ps[0].Message, `"Notes" is not a race or gender of the counter catalog, nor a Total`) ||
		ps[1].Origin.Cell != "I4" || ps[1].Severity != pipeline.Error || !strings.Contains(ps[1].Message, `"7" is not read`) {
		t.Errorf("problems %v; want errors at I3 (the header) and I4 (its number)", ps)
	}
	if len(recs) != 1 || len(recs[0].Cells) != 6+2 {
		t.Errorf("records %+v", recs)
	}

	wb := excelize.NewFile()
	defer wb.Close()
	for ref, v := range map[string]any{"A1": "Year 1 all employees", "A2": "Level", "B2": "African", "B3": "Male", "C3": "Female", "D2": "Total", "D3": "Perm", "E3": "Temp",
		"A4": "Top management", "B4": 1, "C4": 2, "D4": 3, "E4": 0} {
		if err := wb.SetCellValue("Sheet1", ref, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.MergeCell("Sheet1", "D2", "E2"); err != nil {
		t.Fatal(err)
	}
	recs, ps = readGridSheet(t, wb, "t.xlsx", "Sheet1")
	if ps.HasErrors() || len(recs) != 1 || len(recs[0].Cells) != 2+2 {
		t.Errorf("merged Total over two columns: problems %v, records %+v", ps, recs)
	}
}

// TestLongPartsAgree: in a long table the counter column decides which
// counter a line sets; a race, gender or level that says another counter
// is an error at that cell (never a value filed under the wrong counter),
// while keys, labels and blanks that agree are accepted.
func TestLongPartsAgree(t *testing.T) {
	const head = "plan_id,year_number,target_type,race,gender,level,counter,value\n"
	for _, tc := range []struct{ lines, ref, text string }{
		{"7,1,all_employees,african,male,top_managers,number_of_african_male_top_managers,3\n" +
			"7,1,all_employees,African,Female,Top management,number_of_african_female_top_managers,4\n" +
			"7,1,all_employees,,,,number_of_white_male_top_managers,5\n", "", ""},
		{"7,1,all_employees,african,male,senior_managers,number_of_african_male_top_managers,3\n", "line 2, column 6", `the level "senior_managers" does not agree with the counter number_of_african_male_top_managers`},
		{"7,1,all_employees,white,male,top_managers,number_of_african_male_top_managers,3\n", "line 2, column 4", `the race "white" does not agree`},
		{"7,1,all_employees,african,F,top_managers,number_of_african_male_top_managers,3\n", "line 2, column 5", `the gender "F" does not agree`},
	} {
		path := filepath.Join(t.TempDir(), "long.csv")
		if err := os.WriteFile(path, []byte(head+tc.lines), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := ReadFiles([]string{path}, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.ref == "" {
			if len(b.Problems) != 0 || len(b.Plans) != 1 || b.Plans[0].Targets[0].Counters.Count() != 3 {
				t.Errorf("agreeing lines: problems %v, plans %v", b.Problems, b.Plans)
			}
			continue
		}
		if len(b.Problems) != 1 || !strings.HasPrefix(b.Problems[0].Origin.Ref(), tc.ref) || !strings.Contains(b.Problems[0].Message, tc.text) {
			t.Errorf("%q: problems %v; want one error at %s", tc.lines, b.Problems, tc.ref)
		}
	}
}

// TestReconcileXLSXOverGridShapeFixturesStrict: the XLSX reconcile report
// over the rv_ grid fixtures (merged headers, date cells; openpyxl and
// LibreOffice) passes the strict check.
func TestReconcileXLSXOverGridShapeFixturesStrict(t *testing.T) {
	for _, file := range []string{"rv_op_eea2_offset.xlsx", "rv_lo_eea2_offset.xlsx"} {
		t.Run(file, func(t *testing.T) {
			src := filepath.Join(acceptanceDir, file)
			o := pipeline.Origin{File: src, Sheet: "EEA2 Section C", Cell: "D11", Row: 11, Column: 4}
			rec := &diff.Reconciliation{
				Schema: diff.ReconcileSchema, Files: []string{src}, Complete: true,
				Plans: []diff.ReconciledPlan{{Presence: diff.PresencePresent, Account: "acme", PlanID: 17, PlanName: "Offset plan",
					Origin: pipeline.Origin{File: src, Sheet: "EEA2 Section C", Cell: "C8", Row: 8, Column: 3},
					Targets: []diff.TargetDifference{{YearNumber: 1, TargetType: pipeline.TargetAll,
						Counters: []diff.CounterDifference{{Counter: "number_of_african_male_top_managers", Workbook: 1, Server: 7, Origin: o}}}}}},
			}
			dst := filepath.Join(t.TempDir(), "report.xlsx")
			if _, err := reports.WriteReconcileXLSX(dst, src, rec); err != nil {
				t.Fatal(err)
			}
			checkStrictXLSX(t, dst)
		})
	}
}
