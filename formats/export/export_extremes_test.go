package export_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
	"github.com/eepipe/eepipe/pipeline"
)

// exExtremePlans returns plans at the edges of what an export holds: a
// catalog with counters beyond the default ones, counters at the largest
// value a spreadsheet number holds exactly, identifiers of digits with
// leading zeros or too long for a number, a plan with one year, one
// with no target, the service's earliest start and latest end.
func exExtremePlans(cat *pipeline.Catalog) []export.Plan {
	var out []export.Plan
	mk := func(id int64, name, start string, years int, scorecard string, ids pipeline.CompanyIDs, value func(i int) int64) {
		sp := &pipeline.Plan{ID: id, Name: name, StartDate: sample.Date(start), EndDate: pipeline.LatestEnd,
			Era: pipeline.EraPost2025, Sector: "Manufacturing", ScorecardID: scorecard, UpdatedAt: "2026-11-01T10:00:00Z"}
		fy0 := pipeline.FinancialYearOf(sp.StartDate)
		for y := 1; y <= years; y++ {
			fy := fy0 + pipeline.FinancialYear(y-1)
			m := pipeline.Milestone{ID: id*100 + int64(y), YearNumber: y, StartDate: fy.Start(), EndDate: fy.End()}
			for k, tt := range pipeline.TargetTypes {
				c := map[string]int64{}
				for i, n := range cat.Names() {
					c[n] = value(i + k)
				}
				m.Targets = append(m.Targets, pipeline.Target{ID: m.ID*10 + int64(k), TargetType: tt, Counters: pipeline.CountersOf(c)})
			}
			sp.Milestones = append(sp.Milestones, m)
		}
		out = append(out, export.Plan{Plan: pipeline.FromServer(sp, ids), Era: sp.Era, Milestones: len(sp.Milestones), UpdatedAt: sp.UpdatedAt})
	}
	mk(1<<53, "Biggest id", "2025-09-01", 5, "scorecard_000123", pipeline.CompanyIDs{VAT: "0012345678", Registration: "0001/000001/07", IDNumber: "0001015800088"},
		func(i int) int64 { return []int64{0, 1, 1 << 53, 999999999999999}[i%4] })
	mk(1, "One year", "2029-09-01", 1, "scorecard_12345678901234567890", pipeline.CompanyIDs{VAT: "4012345678"}, func(i int) int64 { return int64(i) })
	mk(2, "No targets", "2025-09-01", 0, "", pipeline.CompanyIDs{VAT: "4012345678"}, nil)
	return out
}

// TestExportExtremesReimport: an export of exExtremePlans, with and
// without charts, reads back to the same plans and counters.
func TestExportExtremesReimport(t *testing.T) {
	names := append(pipeline.DefaultCatalog().Names(), "number_of_extra_counter_one", "number_of_white_male_apprentices")
	cat, err := pipeline.NewCatalog(names)
	if err != nil {
		t.Fatal(err)
	}
	plans := exExtremePlans(cat)
	dir := os.Getenv("EEPIPE_KEEP_EXPORT")
	if dir == "" {
		dir = t.TempDir()
	}
	var paths []string
	for _, noCharts := range []bool{false, true} {
		path := filepath.Join(dir, "extremes-charts.xlsx")
		if noCharts {
			path = filepath.Join(dir, "extremes-nocharts.xlsx")
		}
		os.Remove(path)
		if err := books.WriteExport(path, plans, export.Options{Catalog: cat, NoCharts: noCharts}); err != nil {
			t.Fatal(err)
		}
		xlsxtest.CheckStrict(t, path)
		paths = append(paths, path)
	}
	// EEPIPE_REREAD: more files to compare (LibreOffice's re-save).
	for _, path := range append(paths, strings.Fields(os.Getenv("EEPIPE_REREAD"))...) {
		batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{Catalog: cat})
		if err != nil {
			t.Fatal(err)
		}
		// A plan sheet without a grid is no plan to the readers, and is
		// named (a warning), never skipped in silence.
		named := false
		for _, p := range batch.Problems {
			switch {
			case p.Severity == pipeline.Warning && p.Origin.Sheet == "No targets" && strings.Contains(p.Message, "no grid of targets"):
				named = true
			case p.Severity == pipeline.Error || strings.Contains(p.Origin.String(), "No targets"):
				t.Errorf("%s", p)
			}
		}
		if !named {
			t.Errorf("%s: the plan sheet without a grid is not named", path)
		}
		var wants []*pipeline.InputPlan
		for _, p := range plans {
			if len(p.Plan.Targets) > 0 {
				wants = append(wants, p.Plan)
			}
		}
		if len(batch.Plans) != len(wants) {
			t.Fatalf("%d plans read, want %d", len(batch.Plans), len(wants))
		}
		for i, got := range batch.Plans {
			want := wants[i]
			if got.PlanID != want.PlanID || got.Company != want.Company || got.Name != want.Name || got.StartDate != want.StartDate ||
				got.EndDate != want.EndDate || got.ScorecardID != want.ScorecardID {
				t.Errorf("plan %d read as %+v, want %+v", i, got, want)
			}
			if len(got.Targets) != len(want.Targets) {
				t.Fatalf("plan %d: %d targets, want %d", i, len(got.Targets), len(want.Targets))
			}
			for j, tg := range got.Targets {
				if g, w := tg.Counters.Map(), want.Targets[j].Counters.Map(); len(g) != len(w) {
					t.Errorf("plan %d target %d: %d counters, want %d", i, j, len(g), len(w))
				} else {
					for n, v := range w {
						if g[n] != v {
							t.Errorf("plan %d target %d %s: %d, want %d", i, j, n, g[n], v)
						}
					}
				}
			}
		}
	}
}

// TestExportOfOnlyPlansWithoutTargets: an export whose plans all have no
// targets reads as no plan with a warning per plan sheet, not as a file
// without a table (an error).
func TestExportOfOnlyPlansWithoutTargets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.xlsx")
	plan := &pipeline.InputPlan{PlanID: 7, Name: "Empty", StartDate: sample.Date("2025-09-01"), EndDate: sample.Date("2030-08-31"),
		Company: pipeline.CompanyIDs{VAT: "4012345678"}}
	if err := books.WriteExport(path, []export.Plan{{Plan: plan}}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Plans) != 0 || len(batch.Problems) != 1 || batch.Problems[0].Severity != pipeline.Warning ||
		batch.Problems[0].Origin.Sheet != "Empty" || batch.Problems[0].Origin.Cell == "" {
		t.Fatalf("%d plans, problems %v", len(batch.Plans), batch.Problems)
	}
}
