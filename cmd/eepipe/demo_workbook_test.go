package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

var updateDemo = flag.Bool("update-demo", false, "regenerate the demo workbook (testdata/demo and cmd/eepipe/demo)")

// demoColumns are the plan columns of the demo workbook.
var demoColumns = []string{"company_vat_number", "company_registration_number", "plan_name", "start_date", "end_date",
	"sector", "scorecard_id", "financial_year", "target_type"}

// demoCounters are the counter columns the demo workbook fills.
var demoCounters = []string{
	"number_of_african_male_top_managers", "number_of_african_female_top_managers",
	"number_of_african_male_senior_managers", "number_of_african_female_senior_managers",
	"number_of_coloured_female_middle_managers", "number_of_indian_male_middle_managers",
	"number_of_white_female_senior_managers", "number_of_african_female_junior_managers",
	"number_of_african_male_semi_skilled_employees", "number_of_african_female_unskilled_employees",
}

// demoRows are the demo's rows: plan columns, then counters ("" = blank:
// leave the service's value, which for a prefilled plan is the scorecard's).
var demoRows = [][]string{
	// Acme Foods: a five-year plan pre-filled from its 2025 scorecard; the
	// file sets a few counters and leaves the rest to the prefill.
	{"4012345678", "", "Acme Foods EE Plan 2025-2030", "2025-09-01", "2030-08-31", "Accommodation and Food Service Activities", "scorecard_acme_2025", "2025/26", "all_employees",
		"2", "1", "3", "3", "", "", "", "6", "", ""},
	{"4012345678", "", "Acme Foods EE Plan 2025-2030", "2025-09-01", "2030-08-31", "Accommodation and Food Service Activities", "scorecard_acme_2025", "2026/27", "all_employees",
		"2", "2", "3", "4", "2", "", "", "7", "", ""},
	{"4012345678", "", "Acme Foods EE Plan 2025-2030", "2025-09-01", "2030-08-31", "Accommodation and Food Service Activities", "scorecard_acme_2025", "2025/26", "disabled_employees",
		"", "", "", "", "", "", "", "1", "", ""},
	// Acme Foods: a short graduate plan without a scorecard (starts at zero).
	{"4012345678", "", "Acme Foods Graduate Programme", "2026-09-01", "2028-08-31", "", "", "2026/27", "all_employees",
		"", "", "", "", "1", "1", "", "4", "10", "6"},
	{"4012345678", "", "Acme Foods Graduate Programme", "2026-09-01", "2028-08-31", "", "", "2027/28", "all_employees",
		"", "", "", "", "2", "1", "", "6", "12", "8"},
	// Blue Crane Logistics, found by its registration number: a plan
	// pre-filled from its scorecard; its first two years (no year skipped).
	{"", "2015/123456/07", "Blue Crane EE Plan 2025-2028", "2025-09-01", "2028-08-31", "Transport and Storage", "scorecard_bluecrane_2025", "2025/26", "all_employees",
		"1", "1", "2", "2", "", "", "1", "", "25", ""},
	{"", "2015/123456/07", "Blue Crane EE Plan 2025-2028", "2025-09-01", "2028-08-31", "Transport and Storage", "scorecard_bluecrane_2025", "2026/27", "all_employees",
		"1", "2", "2", "3", "", "", "1", "", "30", ""},
	// Blue Crane: a drivers' plan without a scorecard.
	{"4098765432", "", "Blue Crane Drivers Plan", "2026-09-01", "2030-08-31", "Transport and Storage", "", "2026/27", "all_employees",
		"", "", "", "", "", "", "", "", "40", "5"},
	{"4098765432", "", "Blue Crane Drivers Plan", "2026-09-01", "2030-08-31", "Transport and Storage", "", "2026/27", "disabled_employees",
		"", "", "", "", "", "", "", "", "2", ""},
}

// writeDemoWorkbook writes the demo workbook: a flat Targets sheet with a
// title and a note above the header row.
func writeDemoWorkbook(path string) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Targets"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"DDEBF7"}}})
	if err != nil {
		return err
	}
	title, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true, Size: 14}})
	if err != nil {
		return err
	}
	f.SetCellValue(sheet, "A1", "eepipe demo: Employment Equity plan targets for two clients")
	f.SetCellStyle(sheet, "A1", "A1", title)
	f.SetCellValue(sheet, "A2", "Blank counter cells leave the service's value as it is (for a plan with a scorecard: the prefilled baseline).")
	head := append(append([]string{}, demoColumns...), demoCounters...)
	for i, h := range head {
		cell, _ := excelize.CoordinatesToCellName(i+1, 4)
		f.SetCellValue(sheet, cell, h)
		f.SetCellStyle(sheet, cell, cell, bold)
	}
	for r, row := range demoRows {
		for c, v := range row {
			if v == "" {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(c+1, r+5)
			if c >= len(demoColumns) {
				n := 0
				for _, ch := range v {
					n = n*10 + int(ch-'0')
				}
				f.SetCellValue(sheet, cell, n)
				continue
			}
			f.SetCellStr(sheet, cell, v)
		}
	}
	f.SetColWidth(sheet, "A", "B", 18)
	f.SetColWidth(sheet, "C", "C", 32)
	f.SetColWidth(sheet, "D", "E", 12)
	f.SetColWidth(sheet, "F", "F", 30)
	f.SetColWidth(sheet, "G", "G", 26)
	f.SetColWidth(sheet, "H", "I", 18)
	f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 4, TopLeftCell: "A5", ActivePane: "bottomLeft"})
	f.SetDocProps(&excelize.DocProperties{Creator: "eepipe", Title: "eepipe demo workbook", Created: "2026-01-01T00:00:00Z", Modified: "2026-01-01T00:00:00Z"})
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

const (
	demoCopy     = "../../testdata/demo/" + demoWorkbookName
	demoEmbedded = "demo/" + demoWorkbookName
)

// TestDemoWorkbook checks that the embedded demo workbook and its
// documented copy under testdata/demo are the same file, and that it reads
// without problems into the plans the demo describes. Run with
// -update-demo to regenerate both.
func TestDemoWorkbook(t *testing.T) {
	if *updateDemo {
		for _, p := range []string{demoCopy, demoEmbedded} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := writeDemoWorkbook(p); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := os.ReadFile(demoEmbedded)
		if err := os.WriteFile(demoCopy, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := os.ReadFile(demoCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, demoWorkbook) {
		t.Fatalf("%s differs from the embedded %s; run go test ./cmd/eepipe -run TestDemoWorkbook -update-demo", demoCopy, demoEmbedded)
	}
	batch, err := formats.ReadFiles([]string{demoCopy}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Problems) != 0 {
		var b bytes.Buffer
		reports.WriteProblemsText(&b, batch)
		t.Fatalf("the demo workbook has problems:\n%s", b.String())
	}
	if len(batch.Plans) != 4 {
		t.Fatalf("%d plans, want 4", len(batch.Plans))
	}
	targets := 0
	for _, p := range batch.Plans {
		targets += len(p.Targets)
	}
	if targets != len(demoRows) {
		t.Errorf("%d targets, want %d", targets, len(demoRows))
	}
	want := map[string]int64{"number_of_african_female_junior_managers": 6}
	for _, p := range batch.Plans {
		if p.Name == "Acme Foods EE Plan 2025-2030" {
			tg := p.Targets[0]
			if tg.TargetType != pipeline.TargetAll || tg.Counters.Map()["number_of_african_female_junior_managers"] != want["number_of_african_female_junior_managers"] {
				t.Errorf("first target %+v", tg)
			}
			if _, set := tg.Counters.Map()["number_of_coloured_female_middle_managers"]; set {
				t.Error("a blank cell was read as a value")
			}
		}
	}
}

func TestDemoCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var out, errb bytes.Buffer
	f := &Factory{IO: &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &syncWriter{w: &errb}}, Now: time.Now,
		Getenv: func(k string) string {
			if k == envBaseURL {
				return "http://127.0.0.1:1" // the user's own configuration is ignored
			}
			return ""
		}}
	code := Execute(context.Background(), f, []string{"demo", "--out", dir, "--latency", "1ms", "--recalc-duration", "5s"}) // long enough that a slow (race, loaded) apply still meets the running recalculation
	if code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"4 to create", "(prefill) ->", "The second apply sent", "and 0 writes", "Stored now: 2 plans on account acme, 2 on bluecrane",
		"The diff counted 9 targets / 37 counters to change, the apply patched 8 targets / 32 counters: the diff cannot know what a scorecard\nprefill",
		"A consultant changes one cell", "1 counter differs", "eepipe demo --serve"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "already running (409)") {
		t.Errorf("the 409 wait is not shown:\n%s", errb.String())
	}
	for _, name := range []string{demoWorkbookName, "eepipe.yaml", "diff.json", "run.xlsx", "run-again.json", demoGridName, "reconcile.xlsx"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("output %s: %v", name, err)
		}
	}
	rows, err := excelize.OpenFile(filepath.Join(dir, "run.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got, err := rows.GetRows("Rows")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(demoRows)+1 {
		t.Errorf("run.xlsx has %d rows, want a header and one per input row (%d)", len(got), len(demoRows))
	}
	for _, r := range got[1:] {
		if r[9] != "created" {
			t.Errorf("run.xlsx row %v", r)
		}
	}
	// Run again in the same folder: a new sandbox at a new address, and a
	// new history (the old one's key pairs are under the old address).
	out.Reset()
	errb.Reset()
	if code := Execute(context.Background(), f, []string{"demo", "--out", dir, "--latency", "1ms", "--recalc-duration", "10ms"}); code != 0 {
		t.Fatalf("the demo again in its folder: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
}
