package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats"
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

// exHiddenNames are the names of exHostileNames that hold characters no
// workbook may send in a plan name (docs/formats.md, "Values"): exported
// as they are, an export of them is an error at each of their cells.
var exHiddenNames = []string{"Tab\there", "Line1\nLine2", "Ctl\x01\x1fX\x7f", "x\u2028y\u200f"}

// createHostilePlans creates a plan for each name of exHostileNames, those
// of exHiddenNames only with hidden.
func (e *exEnv) createHostilePlans(c *apiclient.Client, hidden bool) {
	e.t.Helper()
	ctx := context.Background()
	for i, name := range exHostileNames {
		if !hidden && slices.Contains(exHiddenNames, name) {
			continue
		}
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
	e.createHostilePlans(e.acme, false)
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
// generate.sh), reads back to the service's counters, but for an error at
// the name of each plan of exHiddenNames, and so applies nothing.
func TestExportGridLibreOfficeResave(t *testing.T) {
	e := newExEnv(t, nil)
	e.createHostilePlans(e.acme, true)
	path := filepath.Join("testdata", "lo-resave", "hostile-grid-export.xlsx")
	want, plans := e.serverState("acme")
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if msg := hiddenNameErrors(batch.Problems); msg != "" {
		t.Fatal(msg)
	}
	got := map[exTargetKey]map[string]int64{}
	for _, p := range batch.Plans {
		for _, tg := range p.Targets {
			n, _ := tg.Year(p.StartDate)
			got[exTargetKey{p.PlanID, n, tg.TargetType}] = tg.Counters.Map()
		}
	}
	for k := range want {
		if slices.Contains(exHiddenNames, plans[k.plan].Name) {
			delete(want, k)
			delete(got, k)
		}
	}
	if d := diffStates(want, got); d != "" {
		t.Errorf("%s:\n%s", path, d)
	}
	e.srv.Sandbox.ResetStats()
	for _, cmd := range []string{"diff", "apply"} {
		if code, stdout, stderr := e.run(cmd, path); code != ExitInvalid || e.srv.Sandbox.Stats().Writes != 0 {
			t.Errorf("%s: exit %d, %d writes; want 2 and none\n%s\n%s", cmd, code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
		}
	}
}

// hiddenNameErrors describes how problems differ from plan_name errors
// at each name of exHiddenNames (one a grid sheet, one a flat row), and
// nothing else ("" when they do not).
func hiddenNameErrors(problems pipeline.Problems) string {
	var b strings.Builder
	found := map[string]bool{}
	for _, p := range problems {
		name := ""
		for _, n := range exHiddenNames {
			if p.Value == n {
				name = n
			}
		}
		if p.Severity != pipeline.Error || p.Origin.Header != pipeline.ColPlanName || name == "" ||
			!strings.Contains(p.Message, "which hides or moves text") {
			fmt.Fprintf(&b, "unexpected problem: %s\n", p.String())
		}
		found[name] = true
	}
	for _, n := range exHiddenNames {
		if !found[n] {
			fmt.Fprintf(&b, "no error at the name %q\n", n)
		}
	}
	return b.String()
}

// TestExportHiddenNamesRefusedOnReapply: plans whose names hold control
// characters, line or paragraph separators or bidirectional marks export
// (grid XLSX, flat CSV), but the export is an error at each such name's
// cell in validate, and apply sends nothing (docs/formats.md, "Values").
func TestExportHiddenNamesRefusedOnReapply(t *testing.T) {
	e := newExEnv(t, nil)
	for _, name := range exHiddenNames {
		if _, err := e.acme.CreatePlan(context.Background(), apiclient.PlanCreate{Name: name, StartDate: "2025-09-01", EndDate: "2030-08-31"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, out := range []string{e.path("hidden.xlsx"), e.path("hidden.csv")} {
		if code, stdout, stderr := e.run("export", "-o", out); code != 0 {
			t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
		}
		batch, err := formats.ReadFiles([]string{out}, formats.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if msg := hiddenNameErrors(batch.Problems); msg != "" {
			t.Errorf("%s:\n%s", filepath.Base(out), msg)
		}
		code, stdout, stderr := e.run("validate", out)
		if code != ExitInvalid || strings.Count(stdout+stderr, "which hides or moves text") < len(exHiddenNames) {
			t.Errorf("validate %s: exit %d\n%s\n%s", filepath.Base(out), code, stdout, stderr)
		}
		e.srv.Sandbox.ResetStats()
		if code, stdout, stderr := e.run("apply", out); code != ExitInvalid || e.srv.Sandbox.Stats().Writes != 0 {
			t.Errorf("apply %s: exit %d, %d writes\n%s\n%s", filepath.Base(out), code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
		}
	}
}
