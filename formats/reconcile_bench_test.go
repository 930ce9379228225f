package formats

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// rrBenchReconciliation returns a reconciliation of the workbook at path
// that marks one counter of every target (the first counter it holds), as
// after one counter changed on the service for every target.
func rrBenchReconciliation(b *testing.B, path string) (*diff.Reconciliation, int) {
	batch, err := ReadFiles([]string{path}, costReadOptions())
	if err != nil || costCount(batch, pipeline.Error) != 0 {
		b.Fatalf("read: %v %v", err, firstProblems(batch.Problems))
	}
	rec := &diff.Reconciliation{Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{path}, Complete: true}
	marks := 0
	for _, p := range batch.Plans {
		rp := diff.ReconciledPlan{Presence: diff.PresencePresent, Account: "acme", PlanName: p.Name, Origin: p.Origin}
		for _, t := range p.Targets {
			name := "number_of_african_male_top_managers"
			o := t.CellOf(name)
			if o.Sheet == "" || o.Cell == "" {
				continue
			}
			marks++
			rp.Targets = append(rp.Targets, diff.TargetDifference{YearNumber: t.YearNumber, TargetType: string(t.TargetType),
				Counters: []diff.CounterDifference{{Counter: name, Workbook: 1, Server: 99, Origin: o, Location: diff.LocationOf(o)}}})
		}
		rec.Plans = append(rec.Plans, rp)
	}
	return rec, marks
}

// BenchmarkCostReconcileCopy writes the annotated copy of a 500-plan grid
// export (no charts) in sync (nothing marked) and with one counter of
// every target marked (about 4,500 cells), reporting CPU time and the
// peak heap (the reading of the workbook is not part of it).
func BenchmarkCostReconcileCopy(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "plans.xlsx")
	if err := writeExportXLSX(src, benchExportPlans(500), export.Options{NoCharts: true}); err != nil {
		b.Fatal(err)
	}
	changed, marks := rrBenchReconciliation(b, src)
	inSync := &diff.Reconciliation{Schema: changed.Schema, GeneratedAt: changed.GeneratedAt, Files: changed.Files, Complete: true, InSync: true}
	for _, bc := range []struct {
		name string
		rec  *diff.Reconciliation
		n    int
	}{{"plans=500", inSync, 0}, {fmt.Sprintf("plans=500/marks=%d", marks), changed, marks}} {
		b.Run(bc.name, func(b *testing.B) {
			dst := filepath.Join(dir, "rec.xlsx")
			var ms []costMeasure
			for range b.N {
				ms = append(ms, costRun(func() {
					if _, err := reports.WriteReconcileXLSX(dst, src, bc.rec); err != nil {
						b.Fatal(err)
					}
				}))
			}
			costReport(b, ms)
			b.ReportMetric(float64(bc.n), "marks")
		})
	}
}
