package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestTemplateYearsStopAtLatestEnd: with --start, the default number of
// years stops at 2030-08-31 (the service clamps later ends, so later grids
// could never be applied), and an explicit --years beyond it is refused.
func TestTemplateYearsStopAtLatestEnd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "plan.xlsx")
	if code, stderr := runTemplateCmd(t, "template", "-o", out, "--start", "2026-09-01"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows("Plan")
	f.Close()
	var labels []string
	for _, r := range rows {
		if len(r) > 0 && strings.HasPrefix(r[0], "Year ") {
			labels = append(labels, r[0])
		}
	}
	if len(labels) != 8 || !strings.Contains(labels[7], "2029/30") {
		t.Errorf("grid labels %q: want 4 years x 2 target types, the last in 2029/30", labels)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--start", "2026-09-01", "--years", "5"}, ExitInvalid, "give --years 4 or fewer"},
		{[]string{"--start", "2031-01-01"}, ExitInvalid, "after 2030-08-31"},
		{[]string{"--start", "2026-09-01", "--years", "4"}, ExitOK, ""},
	} {
		args := append([]string{"template", "-o", filepath.Join(dir, "t.xlsx"), "--force"}, tc.args...)
		code, stderr := runTemplateCmd(t, args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestTemplateFlatYearsAndStart: --years and --start shape the flat
// template too (they were silently ignored): one plan's rows, each year
// with both target types, the dates and financial years with --start; the
// rows read back as the grid template's would (a plan name and counters
// filled in, validate reads it).
func TestTemplateFlatYearsAndStart(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "flat.xlsx")
	if code, stderr := runTemplateCmd(t, "template", "-o", out, "--layout", "flat", "--years", "3", "--start", "2026-09-01"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows("Targets")
	if len(rows) != 1+3*2 {
		t.Fatalf("%d rows, want the header and 3 years x 2 target types", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	cell := func(r int, name string) string {
		if c, ok := col[name]; ok && c < len(rows[r]) {
			return rows[r][c]
		}
		return ""
	}
	want := [][]string{{"1", "all_employees", "2026/27"}, {"1", "disabled_employees", "2026/27"}, {"2", "all_employees", "2027/28"},
		{"2", "disabled_employees", "2027/28"}, {"3", "all_employees", "2028/29"}, {"3", "disabled_employees", "2028/29"}}
	for i, w := range want {
		got := []string{cell(i+1, "year_number"), cell(i+1, "target_type")}
		if _, ok := col["financial_year"]; ok {
			got = append(got, cell(i+1, "financial_year"))
		} else {
			w = w[:2]
		}
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %d: %q, want %q", i+2, got, w)
		}
	}
	// Filled in by a consultant: a name and one counter per row.
	for r := 2; r <= 7; r++ {
		f.SetCellStr("Targets", cellName(t, col["plan_name"], r), "Flat from template")
		f.SetCellInt("Targets", cellName(t, col["number_of_african_male_top_managers"], r), int64(r))
	}
	if err := f.SaveAs(out); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e := newCkEnv(t)
	if r := e.run("validate", out); r.code != ExitOK {
		t.Errorf("validate the filled flat template: exit %d\n%s%s", r.code, r.out, r.err)
	}
	// Without --years and --start the flat table stays empty below its header.
	plain := filepath.Join(dir, "plain.xlsx")
	if code, stderr := runTemplateCmd(t, "template", "-o", plain, "--layout", "flat"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if f, err := excelize.OpenFile(plain); err == nil {
		rows, _ := f.GetRows("Targets")
		f.Close()
		if len(rows) != 1 {
			t.Errorf("plain flat template: %d rows, want the header only", len(rows))
		}
	}
	// --years past the service's latest end is refused for flat as for grid.
	if code, stderr := runTemplateCmd(t, "template", "-o", filepath.Join(dir, "late.xlsx"), "--layout", "flat", "--start", "2026-09-01", "--years", "5"); code != ExitInvalid ||
		!strings.Contains(stderr, "give --years 4 or fewer") {
		t.Errorf("flat --years 5 from 2026-09-01: exit %d %s", code, stderr)
	}
}

func cellName(t *testing.T, col0, row int) string {
	t.Helper()
	c, err := excelize.CoordinatesToCellName(col0+1, row)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
