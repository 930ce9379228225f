package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestValidateBoundedOutput: 30 rows each with a negative counter print
// five with their cells and one count line; --report lists all 30 and
// --annotate marks all 30 cells, the printout staying bounded.
func TestValidateBoundedOutput(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.xlsx")
	x := excelize.NewFile()
	_ = x.SetSheetName("Sheet1", "Targets")
	_ = x.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_african_male_top_managers"})
	for i := range 30 {
		_ = x.SetSheetRow("Targets", "A"+itoa(i+2), &[]any{"Acme " + itoa(i), "2026-09-01", "2030-08-31", 1, "all_employees", -5})
	}
	if err := x.SaveAs(src); err != nil {
		t.Fatal(err)
	}
	x.Close()
	report, dst := filepath.Join(dir, "problems.csv"), filepath.Join(dir, "checked.xlsx")
	for _, annotate := range []bool{false, true} {
		args := []string{"validate", src, "--report", report}
		if annotate {
			args = append(args, "--annotate", dst)
		}
		code, out, stderr := vtRun(t, args...)
		if code != ExitInvalid {
			t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
		}
		if n := strings.Count(out, "Targets!F"); n != 5 {
			t.Errorf("annotate %v: %d negative counters printed, want 5:\n%s", annotate, n, out)
		}
		if !strings.Contains(out, "… and 25 more errors:") || !strings.Contains(out, "30 errors") {
			t.Errorf("annotate %v: no count of the 25 not printed, or not 30 errors in all:\n%s", annotate, out)
		}
		fh, err := os.Open(report)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := csv.NewReader(fh).ReadAll()
		fh.Close()
		negative := 0
		for _, r := range recs {
			if strings.Contains(strings.Join(r, ","), "is negative") {
				negative++
			}
		}
		if negative != 30 {
			t.Errorf("annotate %v: the report lists %d negative counters, want 30", annotate, negative)
		}
	}
	a, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	comments, _ := a.GetComments("Targets")
	marked := 0
	for _, c := range comments {
		if strings.HasPrefix(c.Cell, "F") {
			marked++
		}
	}
	if marked != 30 {
		t.Errorf("the annotated copy marks %d counter cells, want 30", marked)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
