package grid_test

import (
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/internal/sample"
)

// BenchmarkGridRead reads a 20-plan grid workbook (200 grids).
func BenchmarkGridRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "grid.xlsx")
	if err := books.WriteGrid(path, sample.Plans(20), nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		recs, _ := readback.ReadGridWorkbook(b, path, nil)
		if n := len(recs); n != 200 {
			b.Fatalf("%d grids", n)
		}
	}
}
