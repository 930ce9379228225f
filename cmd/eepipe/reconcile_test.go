package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// rcChange is one counter the test changes on the server after export.
type rcChange struct {
	key     exTargetKey
	counter string
	old     int64
	new     int64
	cell    pipeline.Origin // where the export holds it
}

// changeOnServer changes counters through the API and returns what changed,
// with the export's cell of each.
func changeOnServer(t *testing.T, e *exEnv, exportPath string, picks []struct {
	plan, target int
	counter      string
}) []rcChange {
	t.Helper()
	batch, _ := fileState(t, exportPath)
	ctx := context.Background()
	var out []rcChange
	for i, pk := range picks {
		p := batch.Plans[pk.plan]
		tg := p.Targets[pk.target]
		year, _ := tg.Year(p.StartDate)
		sp, err := e.acme.GetPlan(ctx, p.PlanID)
		if err != nil {
			t.Fatal(err)
		}
		var mid, tid int64
		for _, m := range sp.Milestones {
			if m.YearNumber != year {
				continue
			}
			for _, st := range m.Targets {
				if st.TargetType == tg.TargetType {
					mid, tid = m.ID, st.ID
				}
			}
		}
		old := tg.Counters.Map()[pk.counter]
		nv := old + int64(100+i)
		if _, err := e.acme.UpdateTarget(ctx, p.PlanID, mid, tid, map[string]int64{pk.counter: nv}); err != nil {
			t.Fatal(err)
		}
		out = append(out, rcChange{exTargetKey{p.PlanID, year, tg.TargetType}, pk.counter, old, nv, tg.CellOf(pk.counter)})
	}
	return out
}

func TestReconcileReportsExactlyTheChangedCells(t *testing.T) {
	for _, file := range []string{"client.xlsx", "client.csv"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			e := newExEnv(t, nil)
			e.createPlans(e.acme, "Acme", 2)
			export := e.path(file)
			if code, _, stderr := e.run("export", "-o", export, "--company", exAcmeVAT, "--no-charts"); code != 0 {
				t.Fatalf("export exit %d: %s", code, stderr)
			}
			code, stdout, stderr := e.run("reconcile", export)
			if code != 0 {
				t.Fatalf("reconcile of a fresh export: exit %d\n%s\n%s", code, stdout, stderr)
			}
			changes := changeOnServer(t, e, export, []struct {
				plan, target int
				counter      string
			}{
				{0, 0, "number_of_african_male_top_managers"},
				{1, 3, "number_of_white_female_semi_skilled_employees"},
				{1, 3, "number_of_foreign_male_grand_total_employees"},
				{0, 5, "number_of_coloured_female_unskilled_employees"},
			})
			stem := strings.TrimSuffix(file, ".xlsx")
			stem = strings.TrimSuffix(stem, ".csv")
			rx, rj, rc := e.path(stem+"-report.xlsx"), e.path(stem+"-report.json"), e.path(stem+"-report.csv")
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("reconcile", export, "--report", rx, "--report", rj, "--report", rc)
			if code != ExitDiff {
				t.Fatalf("reconcile exit %d, want 1\n%s\n%s", code, stdout, stderr)
			}
			if w := e.srv.Sandbox.Stats().Writes; w != 0 {
				t.Fatalf("reconcile sent %d writes", w)
			}
			for _, c := range changes {
				if !strings.Contains(stdout, fmt.Sprintf("%s  workbook %d, service %d", c.counter, c.old, c.new)) &&
					!strings.Contains(stdout, fmt.Sprintf("workbook %d, service %d", c.old, c.new)) {
					t.Errorf("stdout does not show %s %d -> %d:\n%s", c.counter, c.old, c.new, stdout)
				}
			}

			// JSON: exactly the changed counters, with both values and the cell.
			var rec diff.Reconciliation
			if err := json.Unmarshal([]byte(exReadFile(t, rj)), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Schema != diff.ReconcileSchema || rec.InSync || !rec.Complete {
				t.Fatalf("report header: %+v", rec)
			}
			type found struct {
				key     exTargetKey
				counter string
				wb, srv int64
				loc     diff.Location
			}
			var got []found
			for _, p := range rec.Plans {
				if p.Presence != diff.PresencePresent {
					t.Errorf("plan %d: presence %s", p.PlanID, p.Presence)
				}
				for _, tg := range p.Targets {
					for _, c := range tg.Counters {
						got = append(got, found{exTargetKey{p.PlanID, tg.YearNumber, tg.TargetType}, c.Counter, c.Workbook, c.Server, c.Location})
					}
				}
			}
			if len(got) != len(changes) || rec.Summary.CountersDiffering != len(changes) {
				t.Fatalf("report lists %d differing counters (summary %d), want %d: %+v", len(got), rec.Summary.CountersDiffering, len(changes), got)
			}
			for _, c := range changes {
				i := slices.IndexFunc(got, func(g found) bool { return g.key == c.key && g.counter == c.counter })
				if i < 0 {
					t.Errorf("report misses %v %s", c.key, c.counter)
					continue
				}
				g := got[i]
				if g.wb != c.old || g.srv != c.new || g.loc != diff.LocationOf(c.cell) {
					t.Errorf("%v %s: report workbook %d server %d at %+v; want %d, %d at %+v", c.key, c.counter, g.wb, g.srv, g.loc, c.old, c.new, diff.LocationOf(c.cell))
				}
			}

			// CSV: one row per changed counter.
			csvText := exReadFile(t, rc)
			if n := strings.Count(csvText, ",counter,"); n != len(changes) {
				t.Errorf("CSV report has %d counter rows, want %d:\n%s", n, len(changes), csvText)
			}

			// XLSX: the consultant's copy with fills and comments on exactly those cells.
			checkAnnotatedCopy(t, rx, export, changes)
			// The copy still reads as the consultant's plans (the Summary
			// sheet is not mistaken for data), so it can be fixed and applied.
			_, wantTargets := fileState(t, export)
			_, copyTargets := fileState(t, rx)
			if d := diffStates(wantTargets, copyTargets); d != "" {
				t.Errorf("the annotated copy reads differently from the workbook:\n%s", d)
			}

			// Apply the workbook: the server goes back to it, and reconcile is clean.
			if code, stdout, stderr := e.run("apply", export, "--no-recalc"); code != 0 {
				t.Fatalf("apply exit %d\n%s\n%s", code, stdout, stderr)
			}
			if code, stdout, stderr := e.run("reconcile", export, "--report", rj); code != 0 {
				t.Fatalf("reconcile after apply: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if err := json.Unmarshal([]byte(exReadFile(t, rj)), &rec); err != nil || !rec.InSync {
				t.Fatalf("report after apply: in_sync %v (%v)", rec.InSync, err)
			}
		})
	}
}

// checkAnnotatedCopy checks that the XLSX report is the source workbook
// with a fill and a comment holding the service value on exactly the
// changed cells, and a Summary sheet, the active one.
func checkAnnotatedCopy(t *testing.T, report, source string, changes []rcChange) {
	t.Helper()
	f, err := excelize.OpenFile(report)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	// The Summary and Changes sheets come before the workbook's own, the
	// Summary the sheet the report opens and prints on.
	if len(sheets) < 3 || sheets[0] != reports.SummarySheet || sheets[1] != reports.ChangesSheet || f.GetActiveSheetIndex() != 0 {
		t.Errorf("sheets %q, active %q; want %q first and active, then %q", sheets, f.GetSheetName(f.GetActiveSheetIndex()), reports.SummarySheet, reports.ChangesSheet)
	}
	sheets = sheets[2:]
	fills := map[int]string{} // style id -> fill colour
	want := map[[2]string]rcChange{}
	for _, c := range changes {
		sheet, cell := c.cell.Sheet, c.cell.Cell
		if sheet == "" { // CSV source: the copy's sheet, row = line, column = column
			sheet = sheets[0]
			cell, _ = excelize.CoordinatesToCellName(c.cell.Column, c.cell.Row)
		}
		want[[2]string{sheet, cell}] = c
	}
	for _, sheet := range sheets {
		comments, err := f.GetComments(sheet)
		if err != nil {
			t.Fatal(err)
		}
		commented := map[string]string{}
		for _, c := range comments {
			commented[c.Cell] = commentText(c)
		}
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			for c := range row {
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				filled := cellFill(t, f, sheet, ref, fills)
				ch, isChange := want[[2]string{sheet, ref}]
				switch {
				case isChange && filled != templates.DiffFill:
					t.Errorf("%s!%s: fill %q, want %s", sheet, ref, filled, templates.DiffFill)
				case !isChange && filled == templates.DiffFill:
					t.Errorf("%s!%s is filled but did not change", sheet, ref)
				}
				text, hasComment := commented[ref]
				switch {
				case isChange && !strings.Contains(text, fmt.Sprintf("service holds %d", ch.new)):
					t.Errorf("%s!%s: comment %q, want the service value %d", sheet, ref, text, ch.new)
				case !isChange && hasComment:
					t.Errorf("%s!%s has a comment but did not change: %q", sheet, ref, text)
				}
			}
		}
		if len(comments) > 0 {
			for ref := range commented {
				if _, ok := want[[2]string{sheet, ref}]; !ok {
					t.Errorf("%s!%s: unexpected comment", sheet, ref)
				}
			}
		}
	}
	// The workbook values are the consultant's, untouched.
	for k, c := range want {
		v, _ := f.GetCellValue(k[0], k[1])
		if v != fmt.Sprint(c.old) {
			t.Errorf("%s!%s holds %q in the copy, want the workbook's %d", k[0], k[1], v, c.old)
		}
	}
}

func cellFill(t *testing.T, f *excelize.File, sheet, ref string, cache map[int]string) string {
	id, err := f.GetCellStyle(sheet, ref)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cache[id]; ok {
		return c
	}
	st, err := f.GetStyle(id)
	c := ""
	if err == nil && st != nil && st.Fill.Pattern == 1 && len(st.Fill.Color) > 0 {
		c = rgbOf(st.Fill.Color[0])
	}
	cache[id] = c
	return c
}

// rgbOf drops the alpha byte of an ARGB colour.
func rgbOf(c string) string {
	c = strings.ToUpper(c)
	if len(c) == 8 {
		return c[2:]
	}
	return c
}

// TestReconcileMissingOnServer: a plan deleted on the service after export
// is reported missing, its row marked in the annotated copy.
func TestReconcileMissingOnServer(t *testing.T) {
	e := newExEnv(t, nil)
	plans := e.createPlans(e.acme, "Acme", 2)
	export := e.path("client.csv")
	if code, _, stderr := e.run("export", "-o", export); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if err := e.acme.DeletePlan(context.Background(), plans[1].ID); err != nil {
		t.Fatal(err)
	}
	rj, rx := e.path("r.json"), e.path("r.xlsx")
	code, stdout, stderr := e.run("reconcile", export, "--report", rj, "--report", rx)
	if code != ExitDiff || !strings.Contains(stdout, "missing on the service") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rec diff.Reconciliation
	if err := json.Unmarshal([]byte(exReadFile(t, rj)), &rec); err != nil {
		t.Fatal(err)
	}
	s := rec.Summary
	if s.PlansMissingOnServer != 1 || s.PlansInSync != 1 || s.CountersDiffering != 0 {
		t.Fatalf("summary %+v", s)
	}
	var missing diff.ReconciledPlan
	for _, p := range rec.Plans {
		if p.Presence == diff.PresenceMissing {
			missing = p
		}
	}
	if missing.PlanID != plans[1].ID || missing.Location == nil || missing.Location.Line == 0 {
		t.Fatalf("missing plan %+v", missing)
	}
	f, err := excelize.OpenFile(rx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, _ := excelize.CoordinatesToCellName(1, missing.Location.Line)
	if got := cellFill(t, f, "client", ref, map[int]string{}); got != templates.PlanFill {
		t.Errorf("%s fill %q, want %s", ref, got, templates.PlanFill)
	}
}
