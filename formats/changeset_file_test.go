package formats

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
)

func TestChangeSetFilesRoundTrip(t *testing.T) {
	in := inPlanForTest()
	d := pipeline.Diff(in, storedForTest(), pipeline.DiffOptions{})
	d.Account = "acme"
	s, err := pipeline.SaveChangeSet(&pipeline.ChangeSet{Plans: []*pipeline.PlanDiff{d}}, "svc", []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"c.json", "c.xlsx"} {
		path := filepath.Join(dir, name)
		if err := WriteChangeSet(path, s); err != nil {
			t.Fatal(err)
		}
		back, err := ReadChangeSet(path)
		if err != nil || back.SHA256 != s.SHA256 || len(back.Plans) != 1 {
			t.Fatalf("%s: %+v, %v", name, back, err)
		}
	}
	// The sign-off sheet is readable, the data sheet hidden.
	f, err := excelize.OpenFile(filepath.Join(dir, "c.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if vis, _ := f.GetSheetVisible(ChangeSetData); vis {
		t.Error("the change set data sheet is visible")
	}
	rows, _ := f.GetRows(ChangeSetSheet)
	if !slices.ContainsFunc(rows, func(r []string) bool {
		return len(r) > 7 && r[5] == "number_of_african_male_top_managers" && r[6] == "9" && r[7] == "1"
	}) {
		t.Errorf("sign-off sheet rows: %q", rows)
	}
	// A workbook of plans is not a change set.
	plain := filepath.Join(dir, "plans.xlsx")
	g := excelize.NewFile()
	g.SaveAs(plain)
	if _, err := ReadChangeSet(plain); !errors.Is(err, ErrNotChangeSet) {
		t.Errorf("plain workbook: %v", err)
	}
	// An edited JSON change set is refused.
	b, _ := os.ReadFile(filepath.Join(dir, "c.json"))
	os.WriteFile(filepath.Join(dir, "e.json"), []byte(strings.Replace(string(b), `"new": 1`, `"new": 3`, 1)), 0o644)
	if _, err := ReadChangeSet(filepath.Join(dir, "e.json")); err == nil || !strings.Contains(err.Error(), "SHA-256 does not match") {
		t.Errorf("edited: %v", err)
	}
}

func inPlanForTest() *pipeline.InputPlan {
	return &pipeline.InputPlan{Name: "Acme", StartDate: pipeline.MustDate("2025-09-01"), EndDate: pipeline.MustDate("2030-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: "all_employees",
			Counters: map[string]int64{"number_of_african_male_top_managers": 1}}}}
}

func storedForTest() *pipeline.Plan {
	return &pipeline.Plan{ID: 17, Name: "Acme", StartDate: pipeline.MustDate("2025-09-01"), EndDate: pipeline.MustDate("2030-08-31"),
		Milestones: []pipeline.Milestone{{ID: 170, YearNumber: 1, StartDate: pipeline.MustDate("2025-09-01"), Targets: []pipeline.Target{
			{ID: 1700, TargetType: "all_employees", Counters: map[string]int64{"number_of_african_male_top_managers": 9}}}}}}
}

func TestHistoryReports(t *testing.T) {
	before := int64(1)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	h := &HistoryReport{
		Runs: []pipeline.RunRecord{{ID: 1, Started: at, User: "ann", Host: "lap", Status: "ok", Accounts: []string{"acme"}}},
		Entries: []pipeline.HistoryEntry{{Run: pipeline.RunRecord{ID: 1, Started: at, User: "ann"}, Account: "acme", PlanID: 17,
			TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "c", Before: &before, After: 5, Sent: true, Outcome: "ok", At: at, File: "v1.csv"}},
	}
	dir := t.TempDir()
	for _, name := range []string{"h.json", "h.csv", "h.xlsx"} {
		if err := WriteHistoryReport(filepath.Join(dir, name), h); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "h.csv"))
	if !strings.Contains(string(b), "1,2026-11-24T10:00:00Z,ann,,,,acme,17,,1700,1,,all_employees,c,1,5,true,ok,2026-11-24T10:00:00Z,v1.csv") {
		t.Errorf("csv:\n%s", b)
	}
	f, err := excelize.OpenFile(filepath.Join(dir, "h.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Writes")
	if len(rows) != 2 || rows[1][13] != "c" {
		t.Errorf("xlsx writes: %q", rows)
	}
}
