package formats

import (
	"crypto/rand"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

func TestChangeSetFilesRoundTrip(t *testing.T) {
	in := inPlanForTest()
	d := diff.Diff(in, storedForTest(), diff.DiffOptions{})
	d.Account = "acme"
	s, err := savedset.SaveChangeSet(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, testSetService, []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, time.Now(), pipeline.DefaultCatalog(), testSetKeys)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"c.json", "c.xlsx"} {
		path := filepath.Join(dir, name)
		if err := reports.WriteChangeSet(path, s); err != nil {
			t.Fatal(err)
		}
		back, err := readChangeSet(path)
		if err == nil {
			err = back.Verify(testSetService, testSetKeys)
		}
		if err != nil || back.Signature != s.Signature || len(back.Plans) != 1 {
			t.Fatalf("%s: %+v, %v", name, back, err)
		}
	}
	// The sign-off sheet is readable, the data sheet hidden.
	f, err := excelize.OpenFile(filepath.Join(dir, "c.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if vis, _ := f.GetSheetVisible(reports.ChangeSetData); vis {
		t.Error("the change set data sheet is visible")
	}
	rows, _ := f.GetRows(reports.ChangeSetSheet)
	if !slices.ContainsFunc(rows, func(r []string) bool {
		return len(r) > 7 && r[5] == "number_of_african_male_top_managers" && r[6] == "9" && r[7] == "1"
	}) {
		t.Errorf("sign-off sheet rows: %q", rows)
	}
	// A workbook of plans is not a change set.
	plain := filepath.Join(dir, "plans.xlsx")
	g := excelize.NewFile()
	g.SaveAs(plain)
	if _, err := readChangeSet(plain); !errors.Is(err, reports.ErrNotChangeSet) {
		t.Errorf("plain workbook: %v", err)
	}
	// An edited JSON change set is refused.
	b, _ := os.ReadFile(filepath.Join(dir, "c.json"))
	os.WriteFile(filepath.Join(dir, "e.json"), []byte(strings.Replace(string(b), `"new": 1`, `"new": 3`, 1)), 0o644)
	back, err := readChangeSet(filepath.Join(dir, "e.json"))
	if err == nil {
		err = back.Verify(testSetService, testSetKeys)
	}
	if err == nil || !strings.Contains(err.Error(), "signature does not match") {
		t.Errorf("edited: %v", err)
	}
}

const testSetService = "http://127.0.0.1:8080"

var testSetKeys = savedset.SetKeys{"acme": savedset.NewSetKey("acme", "8ovHrj", "mpk_acme_key_0001", "acme-secret")}

func inPlanForTest() *pipeline.InputPlan {
	return &pipeline.InputPlan{Name: "Acme", StartDate: date("2025-09-01"), EndDate: date("2030-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: "all_employees",
			Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 1})}}}
}

func storedForTest() *pipeline.Plan {
	return &pipeline.Plan{ID: 17, Name: "Acme", StartDate: date("2025-09-01"), EndDate: date("2030-08-31"),
		Milestones: []pipeline.Milestone{{ID: 170, YearNumber: 1, StartDate: date("2025-09-01"), Targets: []pipeline.Target{
			{ID: 1700, TargetType: "all_employees", Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 9})}}}}}
}

func TestHistoryReports(t *testing.T) {
	before := int64(1)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	h := &reports.HistoryReport{
		Runs: []pipeline.RunRecord{{ID: 1, Started: at, User: "ann", Host: "lap", Status: "ok", Accounts: []string{"acme"}}},
		Entries: []pipeline.HistoryEntry{{Run: pipeline.RunRecord{ID: 1, Started: at, User: "ann", Signer: "Thandi Nkosi"}, Account: "acme", PlanID: 17,
			TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "c", Before: &before, After: 5, Sent: true, Outcome: "ok", At: at, File: "v1.csv"}},
	}
	dir := t.TempDir()
	for _, name := range []string{"h.json", "h.csv", "h.xlsx"} {
		if err := reports.WriteHistoryReport(filepath.Join(dir, name), h); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "h.csv"))
	if !strings.Contains(string(b), "1,2026-11-24T10:00:00Z,ann,,,,Thandi Nkosi,acme,17,,1700,1,,all_employees,c,1,5,true,ok,2026-11-24T10:00:00Z,v1.csv") {
		t.Errorf("csv:\n%s", b)
	}
	f, err := excelize.OpenFile(filepath.Join(dir, "h.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Writes")
	if len(rows) != 2 || rows[1][14] != "c" || rows[1][6] != "Thandi Nkosi" {
		t.Errorf("xlsx writes: %q", rows)
	}
}

// TestChangeSetWorkbookEditedSheetRefused: the sign-off workbook applies
// the signed set on its hidden sheet, so an edit of the readable sheet (a
// new value typed over, a row deleted or added) would be silently ignored:
// it is refused like an edited JSON change set, and so is an edit of the
// signer the set's sign-off names. Filling in the free "Signed off by"
// and the date is what the sheet is for, and is accepted.
func TestChangeSetWorkbookEditedSheetRefused(t *testing.T) {
	in := inPlanForTest()
	in.Targets[0].Counters.Put("number_of_white_female_top_managers", 4)
	stored := storedForTest()
	stored.Milestones[0].Targets[0].Counters.Put("number_of_white_female_top_managers", 0)
	d := diff.Diff(in, stored, diff.DiffOptions{})
	d.Account = "acme"
	s, err := savedset.SaveChangeSet(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, testSetService, []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, time.Now(), pipeline.DefaultCatalog(), testSetKeys)
	if err != nil {
		t.Fatal(err)
	}
	// Signed off with a signer's key: the sheet shows the signer, from the
	// sign-off, as a row no edit may change.
	signer, err := savedset.NewSignerKey("Thandi Nkosi", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SignOff(signer, time.Now()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	orig := filepath.Join(dir, "c.xlsx")
	if err := reports.WriteChangeSet(orig, s); err != nil {
		t.Fatal(err)
	}
	// findCell returns the cell of the sheet reading text.
	findCell := func(f *excelize.File, text string) (col, row int) {
		rows, _ := f.GetRows(reports.ChangeSetSheet)
		for r, cells := range rows {
			for c, v := range cells {
				if v == text {
					return c + 1, r + 1
				}
			}
		}
		t.Fatalf("no cell reads %q", text)
		return 0, 0
	}
	for _, tc := range []struct {
		name string
		edit func(f *excelize.File)
		want string // "" accepted, else part of the refusal
	}{
		{"signed off", func(f *excelize.File) {
			_, r := findCell(f, "Signed off by (typed: not verified)")
			f.SetCellStr(reports.ChangeSetSheet, "B"+strconv.Itoa(r), "J. Client")
			f.SetCellStr(reports.ChangeSetSheet, "D"+strconv.Itoa(r), "2026-11-30")
		}, ""},
		{"saved with shared strings", func(f *excelize.File) {
			// As Excel or LibreOffice save it: every text cell of both
			// sheets in the shared string table, not inline.
			for _, sh := range []string{reports.ChangeSetSheet, reports.ChangeSetData} {
				rows, _ := f.GetRows(sh, excelize.Options{RawCellValue: true})
				for r, cells := range rows {
					for c, v := range cells {
						if _, err := strconv.ParseFloat(v, 64); v == "" || err == nil {
							continue
						}
						cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
						f.SetCellStr(sh, cell, v)
					}
				}
			}
		}, ""},
		{"verified signer typed over", func(f *excelize.File) {
			_, r := findCell(f, "Thandi Nkosi")
			f.SetCellStr(reports.ChangeSetSheet, "B"+strconv.Itoa(r), "Mallory")
		}, "was edited"},
		{"new value typed over", func(f *excelize.File) {
			_, r := findCell(f, "number_of_african_male_top_managers")
			f.SetCellInt(reports.ChangeSetSheet, "H"+strconv.Itoa(r), 25)
		}, "was edited"},
		{"counter renamed", func(f *excelize.File) {
			c, r := findCell(f, "number_of_white_female_top_managers")
			cell, _ := excelize.CoordinatesToCellName(c, r)
			f.SetCellStr(reports.ChangeSetSheet, cell, "number_of_white_male_top_managers")
		}, "was edited"},
		{"row deleted", func(f *excelize.File) {
			_, r := findCell(f, "number_of_white_female_top_managers")
			f.RemoveRow(reports.ChangeSetSheet, r)
		}, "was edited"},
		{"row added", func(f *excelize.File) {
			_, r := findCell(f, "number_of_white_female_top_managers")
			row := []any{"acme", "plan 17", 1, "2025/26", "all_employees", "number_of_indian_male_top_managers", 0, 7}
			f.SetSheetRow(reports.ChangeSetSheet, "A"+strconv.Itoa(r+1), &row)
		}, "was edited"},
		{"sheet deleted", func(f *excelize.File) {
			f.NewSheet("Other")
			f.DeleteSheet(reports.ChangeSetSheet)
		}, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := excelize.OpenFile(orig)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(f)
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".xlsx")
			if err := f.SaveAs(path); err != nil {
				t.Fatal(err)
			}
			f.Close()
			back, err := readChangeSet(path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && back.Signature != s.Signature:
				t.Fatalf("read back %s, want %s", back.Signature, s.Signature)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ReadChangeSet = %v, want a refusal saying %q", err, tc.want)
			}
			if tc.want != "" && !strings.Contains(err.Error(), path) {
				t.Errorf("the refusal does not name the file: %v", err)
			}
		})
	}
}

// TestHistoryCSVNeutralisesFormulas: the history CSV holds names from
// client workbooks (plan names, file names): like every CSV eepipe
// writes, a field a spreadsheet would run as a formula gets a leading
// quote.
func TestHistoryCSVNeutralisesFormulas(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	evil := `=HYPERLINK("http://evil","x")`
	h := &reports.HistoryReport{Entries: []pipeline.HistoryEntry{{Run: pipeline.RunRecord{ID: 1, Started: at, User: "@ann"}, Account: "acme",
		PlanID: 17, PlanName: evil, TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "c", After: 5, Sent: true,
		Outcome: "ok", At: at, File: "+v1.csv"}}}
	path := filepath.Join(t.TempDir(), "h.csv")
	if err := reports.WriteHistoryReport(path, h); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %q, %v", rows, err)
	}
	for _, field := range rows[1] {
		if !strings.HasPrefix(field, "'") && table.CSVSafeField(field) != field {
			t.Errorf("field %q would run as a formula", field)
		}
	}
	if !slices.Contains(rows[1], "'"+evil) {
		t.Errorf("the plan name is not neutralised: %q", rows[1])
	}
}
