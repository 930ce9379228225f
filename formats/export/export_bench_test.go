package export_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// The export benchmarks build the XLSX exports of generated plans (four or
// five financial years each, every counter set, as the service returns
// them) and write them to a temporary folder:
//
//	go test ./formats/export -run '^$' -bench Export -benchtime 3x
//
// Each reports ms/export (wall time), cpu-ms/export (CPU time of the
// process, garbage collection included, which other load on the machine
// does not inflate), the peak live heap while exporting (peak-heap-MB) and
// sheets or rows per second. Compare the 100- and 500-plan runs: time and
// memory must grow linearly with the plans.

// BenchmarkExportGrid builds and writes the grid XLSX export (Overview,
// one grid sheet per plan, the charts) of 100 and 500 plans.
func BenchmarkExportGrid(b *testing.B) {
	for _, n := range []int{100, 500} {
		plans := books.ManyExportPlans(n)
		for _, charts := range []bool{true, false} {
			name := fmt.Sprintf("plans=%d", n)
			if !charts {
				name += "/nocharts"
			}
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "plans.xlsx")
				opts := export.Options{NoCharts: !charts, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
				done := measure.Exports(b)
				for b.Loop() {
					if err := books.WriteExport(path, plans, opts); err != nil {
						b.Fatal(err)
					}
				}
				done()
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sheets/s")
			})
		}
	}
}

// BenchmarkExportGrid500 is the 500-plan grid export with charts, the
// command's default for an .xlsx file.
func BenchmarkExportGrid500(b *testing.B) {
	plans := books.ManyExportPlans(500)
	path := filepath.Join(b.TempDir(), "plans.xlsx")
	done := measure.Exports(b)
	for b.Loop() {
		if err := books.WriteExport(path, plans, export.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkExportGrid2000 is the grid XLSX export of 2,000 plans, with
// and without charts, as the command writes it (with the Sector targets
// sheet and its charts; less the service reads). peak-heap-MB is the live
// heap's peak, sampled.
//
//	go test ./formats/export -run '^$' -bench ExportGrid2000 -benchtime 1x
func BenchmarkExportGrid2000(b *testing.B) {
	plans := books.ManyExportPlans(2000)
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	for _, charts := range []bool{true, false} {
		name := "charts"
		if !charts {
			name = "nocharts"
		}
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "plans.xlsx")
			report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
			opts := export.Options{NoCharts: !charts, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
				Sector: &export.Sector{Plans: report.Plans, Source: report.TargetsSource}}
			done := measure.Exports(b)
			for b.Loop() {
				if err := books.WriteExport(path, plans, opts); err != nil {
					b.Fatal(err)
				}
			}
			done()
			b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "sheets/s")
		})
	}
}

// BenchmarkExportFlatXLSX writes the flat XLSX export (Overview and the
// Targets table through the StreamWriter) of 100 and 500 plans.
func BenchmarkExportFlatXLSX(b *testing.B) {
	for _, n := range []int{100, 500} {
		plans := books.ManyExportPlans(n)
		rows := 0
		for _, p := range plans {
			rows += len(p.Plan.Targets)
		}
		b.Run(fmt.Sprintf("plans=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "flat.xlsx")
			done := measure.Exports(b)
			for b.Loop() {
				if err := export.WriteFlatXLSX(path, plans, export.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			done()
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
