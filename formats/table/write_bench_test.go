package table_test

import (
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/formats/internal/sample"
)

// BenchmarkWriteFlatXLSX writes 10,000 rows (1,000 five-year plans) with
// the StreamWriter.
func BenchmarkWriteFlatXLSX(b *testing.B) {
	plans := sample.Plans(1000)
	path := filepath.Join(b.TempDir(), "flat.xlsx")
	done := measure.Exports(b)
	for b.Loop() {
		if err := books.WriteFlat(path, plans, nil); err != nil {
			b.Fatal(err)
		}
	}
	done()
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "rows/s")
}
