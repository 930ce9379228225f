package main

import (
	"strings"
	"testing"
)

// TestExportGridWithChartsReimports: the grid export with its charts and
// the Sector targets sheet (written part by part, formats.GridWorkbook)
// validates without a warning, applies with no write and reconciles in
// sync.
func TestExportGridWithChartsReimports(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 3)
	out := e.path("grid.xlsx")
	if code, stdout, stderr := e.run("export", "-o", out, "--layout", "grid", "--company", exAcmeVAT); code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := e.run("validate", out)
	if code != 0 || strings.Contains(stdout+stderr, ": warning:") || !strings.Contains(stdout, ": no problems") {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	e.srv.Sandbox.ResetStats()
	code, stdout, stderr = e.run("apply", out)
	if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 {
		t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
	}
	code, stdout, stderr = e.run("reconcile", out)
	if code != 0 || !strings.Contains(stdout, "in sync") {
		t.Fatalf("reconcile of the export: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestExportChartDataIsReadQuietly: the hidden Chart data sheet of a grid
// export whose plan names a financial year ("EE plan 2026/27 to 2030/31",
// so that the chart titles read like grid labels over a header of races
// and genders) is recognised as eepipe's and passed over without a
// warning; the export still validates clean and applies with 0 writes.
func TestExportChartDataIsReadQuietly(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme EE 2026/27 to 2030/31", 2)
	out := e.path("grid.xlsx")
	if code, stdout, stderr := e.run("export", "-o", out, "--layout", "grid", "--company", exAcmeVAT); code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := e.run("validate", out)
	if code != 0 || strings.Contains(stdout+stderr, "Chart data") || strings.Contains(stdout+stderr, ": warning:") || !strings.Contains(stdout, ": no problems") {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	e.srv.Sandbox.ResetStats()
	code, stdout, stderr = e.run("apply", out)
	if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 || strings.Contains(stdout+stderr, "Chart data") {
		t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
	}
}
