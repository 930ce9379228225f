package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// exHostileNames are plan names that a grid export must turn into valid,
// unique sheet names and quote correctly in every formula.
var exHostileNames = []string{
	"O'Brien & Sons",
	"'Quoted' plan",
	`Say "hi" <b>&amp;</b>`,
	"Suid-Afrikaanse Beleggings (Edms) Bpk — 2025",
	"Inkampani yakwaZulu ngokuphelele",
	"Plan 🚀 emoji 😀😀😀😀😀😀😀😀😀😀😀😀😀😀",
	"שלום עולם مرحبا",
	"A very long plan name that is truncated one",
	"A very long plan name that is truncated two",
	"Overview",
	"Chart data",
	"Lists",
	"Sector targets",
	"History",
	"_x0041_ escaped",
	"1234567890123456789012",
	"00123",
	"Plan [1]: a/b\\c*d?",
	"Tab\there",
	"Line1\nLine2",
	"Ctl\x01\x1fX\x7f",
	"  padded  ",
	"double  inner   spaces",
	"x\u2028y\u200f",
}

func (e *exEnv) createHostilePlans(c *apiclient.Client) {
	e.t.Helper()
	ctx := context.Background()
	for i, name := range exHostileNames {
		start, end := "2025-09-01", "2030-08-31"
		switch i % 4 {
		case 1:
			end = "2026-08-31" // one year
		case 2:
			start, end = "2025-09-01", "2037-08-31" // 12 years
		}
		p, err := c.CreatePlan(ctx, apiclient.PlanCreate{Name: name, StartDate: start, EndDate: end, Sector: pipeline.Sectors[i%len(pipeline.Sectors)]})
		if err != nil {
			e.t.Fatalf("create %q: %v", name, err)
		}
		for _, m := range p.Milestones {
			for _, tg := range m.Targets {
				if _, err := c.UpdateTarget(ctx, p.ID, m.ID, tg.ID, exCounters(int64(i*100+m.YearNumber*3), tg.TargetType == pipeline.TargetDisabled)); err != nil {
					e.t.Fatal(err)
				}
			}
		}
	}
}

// TestExportGridHostileNames: plans named with quotes, markup, unicode
// (emoji count twice towards the 31 characters of a sheet name), names
// that truncate alike or equal the export's own sheets, of one year or
// twelve, export as a grid workbook (with and without charts) that
// validates without a warning, applies with no write and reads back to
// the service's counters. EEPIPE_KEEP_EXPORT names a folder that keeps
// the files, to open them in other programs.
func TestExportGridHostileNames(t *testing.T) {
	e := newExEnv(t, nil)
	dir := os.Getenv("EEPIPE_KEEP_EXPORT")
	if dir == "" {
		dir = e.dir
	}
	e.createHostilePlans(e.acme)
	for _, noCharts := range []bool{false, true} {
		out := filepath.Join(dir, "charts.xlsx")
		if noCharts {
			out = filepath.Join(dir, "nocharts.xlsx")
		}
		args := []string{"export", "-o", out, "--layout", "grid"}
		if noCharts {
			args = append(args, "--no-charts")
		}
		os.Remove(out)
		if code, stdout, stderr := e.run(args...); code != 0 {
			t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr := e.run("validate", out)
		if code != 0 || strings.Contains(stdout+stderr, ": warning:") {
			t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if code, stdout, stderr := e.run("diff", out); code != 0 {
			t.Errorf("diff: exit %d\n%s\n%s", code, stdout, stderr)
		}
		e.srv.Sandbox.ResetStats()
		code, stdout, stderr = e.run("apply", out)
		if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 {
			t.Errorf("apply: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
		}
		if code, stdout, stderr := e.run("reconcile", out); code != 0 || !strings.Contains(stdout, "in sync") {
			t.Errorf("reconcile: exit %d\n%s\n%s", code, stdout, stderr)
		}
	}
	want, _ := e.serverState("acme")
	files := []string{filepath.Join(dir, "charts.xlsx"), filepath.Join(dir, "nocharts.xlsx")}
	for _, f := range append(files, strings.Fields(os.Getenv("EEPIPE_REREAD"))...) {
		_, got := fileState(t, f)
		if d := diffStates(want, got); d != "" {
			t.Errorf("%s:\n%s", f, d)
		}
	}
}

// TestOutputFolderMissing: export and template to a folder that does not
// exist is a usage error naming the folder (exit 2), found before any
// work, not a fatal error naming the temporary file of the write.
func TestOutputFolderMissing(t *testing.T) {
	e := newExEnv(t, nil)
	out := e.path(filepath.Join("missing", "x.xlsx"))
	for _, args := range [][]string{{"export", "-o", out, "--layout", "grid"}, {"template", "-o", out}} {
		code, stdout, stderr := e.run(args...)
		if code != 2 || !strings.Contains(stderr, "the folder "+filepath.Dir(out)+" does not exist") || strings.Contains(stderr, ".tmp-") {
			t.Errorf("%s: exit %d\n%s\n%s", args[0], code, stdout, stderr)
		}
	}
}

// TestExportGridLibreOfficeResave: the grid export of the hostile names,
// opened and saved again by LibreOffice (testdata/lo-resave, see its
// generate.sh), reads back to the service's counters and applies with no
// write.
func TestExportGridLibreOfficeResave(t *testing.T) {
	e := newExEnv(t, nil)
	e.createHostilePlans(e.acme)
	path := filepath.Join("testdata", "lo-resave", "hostile-grid-export.xlsx")
	want, _ := e.serverState("acme")
	_, got := fileState(t, path)
	if d := diffStates(want, got); d != "" {
		t.Errorf("%s:\n%s", path, d)
	}
	if code, stdout, stderr := e.run("diff", path); code != 0 {
		t.Errorf("diff: exit %d\n%s\n%s", code, stdout, stderr)
	}
	e.srv.Sandbox.ResetStats()
	code, stdout, stderr := e.run("apply", path)
	if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 {
		t.Errorf("apply: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
	}
}
