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
