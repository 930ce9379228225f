package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// TestReconcileFieldDifferenceMarksItsCell: a plan field changed on the
// server after export (the sector) is marked, in the annotated copy, on the
// cell that holds it (the grid's Sector value, the flat row's sector
// column), with the server's value in the comment, for every layout.
func TestReconcileFieldDifferenceMarksItsCell(t *testing.T) {
	e := newExEnv(t, nil)
	plans := e.createPlans(e.acme, "Acme", 2) // plan 1 has a sector
	for _, tc := range []struct {
		file  string
		args  []string
		sheet string
	}{
		{"grid.xlsx", nil, ""},
		{"flat.xlsx", []string{"--layout", "flat"}, "Targets"},
		{"flat.csv", nil, "flat"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			export := e.path(tc.file)
			if code, _, stderr := e.run(append([]string{"export", "-o", export, "--no-charts"}, tc.args...)...); code != 0 {
				t.Fatalf("export: %s", stderr)
			}
			batch, _ := fileState(t, export)
			var p *pipeline.InputPlan
			for _, bp := range batch.Plans {
				if bp.PlanID == plans[0].ID {
					p = bp
				}
			}
			if p == nil || p.Sector == "" {
				t.Fatalf("the export has no sector for plan %d", plans[0].ID)
			}
			server := "Construction"
			if p.Sector == server {
				server = "Education"
			}
			ns := apiclient.NullString(server)
			if _, err := e.acme.UpdatePlan(context.Background(), p.PlanID, apiclient.PlanUpdate{Sector: &ns}); err != nil {
				t.Fatal(err)
			}
			defer func() {
				old := apiclient.NullString(p.Sector)
				e.acme.UpdatePlan(context.Background(), p.PlanID, apiclient.PlanUpdate{Sector: &old})
			}()
			rx, rj := e.path("r-"+tc.file+".xlsx"), e.path("r-"+tc.file+".json")
			code, stdout, stderr := e.run("reconcile", export, "--report", rx, "--report", rj)
			if code != ExitDiff || !strings.Contains(stdout, "sector") {
				t.Fatalf("reconcile: exit %d\n%s\n%s", code, stdout, stderr)
			}
			f, err := excelize.OpenFile(rx)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sheet := tc.sheet
			if sheet == "" {
				sheet = p.Origin.Sheet
			}
			comments, err := f.GetComments(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if len(comments) != 1 {
				t.Fatalf("%d comments on %s, want 1 (the sector): %+v", len(comments), sheet, comments)
			}
			ref := comments[0].Cell
			if v, _ := f.GetCellValue(sheet, ref); v != p.Sector {
				t.Errorf("the note is on %s!%s holding %q, want the cell holding the workbook's sector %q", sheet, ref, v, p.Sector)
			}
			if txt := commentText(comments[0]); !strings.Contains(txt, server) {
				t.Errorf("comment %q lacks the server's value %q", txt, server)
			}
			if got := cellFill(t, f, sheet, ref, map[int]string{}); got != templates.PlanFill {
				t.Errorf("%s fill %q, want %s", ref, got, templates.PlanFill)
			}
			// The JSON report names the same cell.
			var rec diff.Reconciliation
			if err := json.Unmarshal([]byte(exReadFile(t, rj)), &rec); err != nil {
				t.Fatal(err)
			}
			var loc *diff.Location
			for _, rp := range rec.Plans {
				for _, fd := range rp.Fields {
					if fd.Field == "sector" {
						loc = fd.Location
					}
				}
			}
			if loc == nil {
				t.Fatal("the JSON report has no location for the sector")
			}
			got := loc.Cell
			if got == "" {
				got, _ = excelize.CoordinatesToCellName(loc.Column, loc.Line)
			}
			if got != ref {
				t.Errorf("the JSON report places the sector at %+v, the annotated copy at %s", *loc, ref)
			}
		})
	}
}
