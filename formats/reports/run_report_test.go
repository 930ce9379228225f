package reports

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

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
	if err := WriteRunReport(csvPath, rep); err != nil {
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
	if err := WriteRunReport(xlsxPath, rep); err != nil {
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
	if err := WriteRunReport(jsonPath, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(jsonPath)
	var j RunReportJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Schema != runReportSchema || len(j.Rows) != 3 || j.Summary.PlansCreated != 1 || j.Summary.PlansFailed != 1 ||
		j.Summary.CountersChanged != 1 || len(j.Recalculations) != 1 || j.Recalculations[0].Error != "still running" ||
		j.Plans[1].Error == "" || j.Summary.Elapsed != 1500*time.Millisecond {
		t.Errorf("JSON report %s", b)
	}
	if c := j.Rows[0].Changes; len(c) != 1 || !c[0].OldKnown || c[0].New != 3 || !strings.Contains(string(b), `"cell": "Targets!J2"`) {
		t.Errorf("JSON changes %+v\n%s", c, b)
	}

	if err := WriteRunReport(filepath.Join(dir, "run.txt"), rep); err == nil {
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
	if err := WriteRunReport(jsonPath, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(jsonPath)
	var j RunReportJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Notes) != 1 || j.Notes[0] != note {
		t.Errorf("JSON notes %q\n%s", j.Notes, b)
	}

	xlsxPath := filepath.Join(dir, "run.xlsx")
	if err := WriteRunReport(xlsxPath, rep); err != nil {
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
