package formats

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkGridReadExport reads back a 1,000-plan grid export (the
// command's default: Overview, one plan sheet each, the charts), written
// by the production export writer, as reconcile and apply read it
// (ReadFiles): the read's CPU per file beside its allocations.
//
//	go test ./formats/ -run '^$' -bench GridReadExport -benchmem -benchtime 3x
func BenchmarkGridReadExport(b *testing.B) {
	const n = 1000
	plans := books.ManyExportPlans(n)
	path := filepath.Join(b.TempDir(), "plans.xlsx")
	if err := books.WriteExport(path, plans, export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := measure.CPUTime()
	for b.Loop() {
		batch, err := ReadFiles([]string{path}, costReadOptions())
		if err != nil || len(batch.Plans) != n || costCount(batch, pipeline.Error) != 0 {
			b.Fatalf("read: %v, %d plans %v", err, len(batch.Plans), firstProblems(batch.Problems))
		}
	}
	if cpu := measure.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/read")
	}
}
