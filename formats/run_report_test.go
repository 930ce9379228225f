package formats

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/xuri/excelize/v2"
)

// sampleRunReport is a run with a created plan (two rows), a failed plan
// and a recalculation that gave up.
func sampleRunReport() *run.RunReport {
	o := func(row int) pipeline.Origin { return pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Row: row} }
	cell := pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Cell: "J2", Row: 2, Column: 10}
	t1 := &pipeline.InputTarget{Origin: o(2), YearNumber: 1, TargetType: pipeline.TargetAll,
		Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3}), Cells: map[string]pipeline.Origin{"number_of_african_male_top_managers": cell}}
	t2 := &pipeline.InputTarget{Origin: o(3), YearNumber: 2, TargetType: pipeline.TargetDisabled}
	good := &pipeline.InputPlan{Origin: o(2), Name: "Good, \"quoted\"", StartDate: date("2025-09-01"), Targets: []*pipeline.InputTarget{t1, t2}}
	bad := &pipeline.InputPlan{Origin: o(4), Name: "Bad", StartDate: date("2026-09-01"),
		Targets: []*pipeline.InputTarget{{Origin: o(4), YearNumber: 1, TargetType: pipeline.TargetAll}}}
	change := diff.CounterChange{Name: "number_of_african_male_top_managers", Old: 0, OldKnown: true, New: 3, Origin: cell}
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	return &run.RunReport{
		Started: start, Finished: start.Add(1500 * time.Millisecond),
		Plans: []*run.PlanResult{
			{Diff: &diff.PlanDiff{Input: good, Account: "acme", Company: &pipeline.Company{ID: "8ovHrj"}, Action: diff.ActionCreate},
				Outcome: run.OutcomeCreated, PlanID: 7, Wrote: true,
				Targets: []run.TargetResult{
					{Diff: diff.TargetDiff{Input: t1, YearNumber: 1, FinancialYear: 2025, TargetType: pipeline.TargetAll, MilestoneID: 8, TargetID: 9,
						Changes: []diff.CounterChange{change}}, Patched: true},
					{Diff: diff.TargetDiff{Input: t2, YearNumber: 2, FinancialYear: 2026, TargetType: pipeline.TargetDisabled, MilestoneID: 10, TargetID: 12}},
				}},
			{Diff: diff.Failed(bad, "company not found: no company has VAT 1"), Outcome: run.OutcomeFailed,
				Err: errors.New("company not found: no company has VAT 1")},
		},
		Recalcs:  []*run.RecalcResult{{Account: "acme", ScorecardID: "scorecard_acme_2025", Attempts: 3, Waited: 2 * time.Second, Err: errors.New("still running")}},
		Requests: run.RequestCounts{Total: 5, Writes: 3, ByKind: map[string]int64{"create": 1}},
	}
}

func TestWriteRunReport(t *testing.T) {
	dir := t.TempDir()
	rep := sampleRunReport()
	want := [][]string{
		{"in.xlsx", "Targets row 2", "acme", "8ovHrj", "Good, \"quoted\"", "2025-09-01", "1", "2025/26", "all_employees", "created", "7", "8", "9", "1",
			"number_of_african_male_top_managers 0 -> 3", "", ""},
		{"in.xlsx", "Targets row 3", "acme", "8ovHrj", "Good, \"quoted\"", "2025-09-01", "2", "2026/27", "disabled_employees", "created", "7", "10", "12", "0", "", "", ""},
		{"in.xlsx", "Targets row 4", "", "", "Bad", "2026-09-01", "1", "", "all_employees", "failed", "", "", "", "0", "", "company not found: no company has VAT 1", ""},
	}

	csvPath := filepath.Join(dir, "run.csv")
	if err := reports.WriteRunReport(csvPath, rep); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(csvPath)
	got, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got[0], ",") != strings.Join(runReportColumns, ",") {
		t.Errorf("CSV header %v", got[0])
	}
	compareRows(t, "CSV", got[1:], want)

	xlsxPath := filepath.Join(dir, "run.xlsx")
	if err := reports.WriteRunReport(xlsxPath, rep); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(xlsxPath)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	xrows, err := x.GetRows("Rows")
	if err != nil {
		t.Fatal(err)
	}
	for i := range xrows {
		for len(xrows[i]) < len(runReportColumns) {
			xrows[i] = append(xrows[i], "")
		}
	}
	compareRows(t, "XLSX", xrows[1:], want)
	summary, _ := x.GetRows("Summary")
	if len(summary) < 10 || summary[4][0] != "plans created" || summary[4][1] != "1" {
		t.Errorf("Summary sheet %v", summary)
	}
	// The labels column holds its longest label (a recalculation's), so
	// the printed label is not cut off by its value.
	if w, _ := x.GetColWidth("Summary", "A"); w < float64(len("recalculation scorecard_acme_2025 (acme)")) {
		t.Errorf("Summary column A is %.0f characters wide, narrower than its labels", w)
	}

	jsonPath := filepath.Join(dir, "run.json")
	if err := reports.WriteRunReport(jsonPath, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(jsonPath)
	var j reports.RunReportJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Schema != reports.RunReportSchema || len(j.Rows) != 3 || j.Summary.PlansCreated != 1 || j.Summary.PlansFailed != 1 ||
		j.Summary.CountersChanged != 1 || len(j.Recalculations) != 1 || j.Recalculations[0].Error != "still running" ||
		j.Plans[1].Error == "" || j.Summary.Elapsed != 1500*time.Millisecond {
		t.Errorf("JSON report %s", b)
	}
	if c := j.Rows[0].Changes; len(c) != 1 || !c[0].OldKnown || c[0].New != 3 || !strings.Contains(string(b), `"cell": "Targets!J2"`) {
		t.Errorf("JSON changes %+v\n%s", c, b)
	}

	if err := reports.WriteRunReport(filepath.Join(dir, "run.txt"), rep); err == nil {
		t.Error("a .txt report must be refused")
	}
	if _, err := os.Stat(filepath.Join(dir, "run.txt")); !os.IsNotExist(err) {
		t.Error("a refused report must not leave a file")
	}
}

// TestWriteRunReportRunNotes: the notes on the run as a whole (its end
// not recorded in the state store) are in the JSON report, on the XLSX
// report's Summary sheet and in the printed summary.
func TestWriteRunReportRunNotes(t *testing.T) {
	dir := t.TempDir()
	rep := sampleRunReport()
	note := "the end of run 3 could not be recorded in the state store: disk full"
	rep.Notes = []string{note}

	jsonPath := filepath.Join(dir, "run.json")
	if err := reports.WriteRunReport(jsonPath, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(jsonPath)
	var j reports.RunReportJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Notes) != 1 || j.Notes[0] != note {
		t.Errorf("JSON notes %q\n%s", j.Notes, b)
	}

	xlsxPath := filepath.Join(dir, "run.xlsx")
	if err := reports.WriteRunReport(xlsxPath, rep); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(xlsxPath)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	summary, _ := x.GetRows("Summary")
	found := false
	for _, row := range summary {
		found = found || len(row) == 2 && row[0] == "note" && row[1] == note
	}
	if !found {
		t.Errorf("no note on the Summary sheet: %q", summary)
	}

	var printed strings.Builder
	if err := rep.WriteSummary(&printed); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(printed.String(), "  note: "+note+"\n") {
		t.Errorf("the printed summary lacks the note:\n%s", printed.String())
	}
}

func compareRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d: %q", what, len(got), len(want), got)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("%s row %d:\n got %q\nwant %q", what, i+1, got[i], want[i])
		}
	}
}

// runReportColumns are the run report's columns (docs/scheduling.md), in
// order.
var runReportColumns = []string{"file", "location", "account", "company_id", "plan_name", "start_date", "year_number",
	"financial_year", "target_type", "outcome", "plan_id", "milestone_id", "target_id", "counters_changed", "changes", "error", "held"}
