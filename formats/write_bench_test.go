package formats

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/books"

	"github.com/eepipe/eepipe/formats/internal/sample"

	"github.com/eepipe/eepipe/pipeline"
)

// benchPlans returns n five-year plans with every counter set: 10 rows of
// the flat table each.
func benchPlans(n int) []*pipeline.InputPlan {
	plans := make([]*pipeline.InputPlan, n)
	for i := range plans {
		p := sample.Plan()
		p.Name = fmt.Sprintf("Plan %d", i)
		p.EndDate = date("2030-08-31")
		base := p.Targets
		for y := 3; y <= 5; y++ {
			for _, t := range base[:2] {
				c := *t
				c.YearNumber, c.FinancialYear = y, pipeline.FinancialYear(2025+y)
				p.Targets = append(p.Targets, &c)
			}
		}
		plans[i] = p
	}
	return plans
}

// BenchmarkWriteFlatXLSX writes 10,000 rows (1,000 five-year plans) with
// the StreamWriter.
func BenchmarkWriteFlatXLSX(b *testing.B) {
	plans := benchPlans(1000)
	path := filepath.Join(b.TempDir(), "flat.xlsx")
	done := benchMeasure(b)
	for b.Loop() {
		if err := books.WriteFlat(path, plans, nil); err != nil {
			b.Fatal(err)
		}
	}
	done()
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGridRead reads a 20-plan grid workbook (200 grids).
func BenchmarkGridRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "grid.xlsx")
	if err := books.WriteGrid(path, benchPlans(20), nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		recs, _ := readGridWorkbook(b, path, nil)
		if n := len(recs); n != 200 {
			b.Fatalf("%d grids", n)
		}
	}
}
