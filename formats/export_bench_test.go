package formats

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// The export benchmarks build the XLSX exports of generated plans (four or
// five financial years each, every counter set, as the service returns
// them) and write them to a temporary folder:
//
//	go test ./formats/ -run '^$' -bench 'Export|WriteFlatXLSX|WriteGrid' -benchtime 3x
//
// Each reports ms/export (wall time), cpu-ms/export (CPU time of the
// process, garbage collection included, which other load on the machine
// does not inflate), the peak live heap while exporting (peak-heap-MB) and
// sheets or rows per second. Compare the 100- and 500-plan runs: time and
// memory must grow linearly with the plans.

// benchExportPlans returns n export plans of 4 or 5 financial years (9
// targets on average, as in the 500-plan command benchmark).
func benchExportPlans(n int) []export.Plan {
	ids := pipeline.CompanyIDs{VAT: "4012345678", Registration: "2009/012345/07"}
	out := make([]export.Plan, n)
	for i := range out {
		start, years := "2025-09-01", 5
		if i%2 == 1 {
			start, years = "2026-09-01", 4
		}
		sp := exStoredPlan(int64(1000+i), fmt.Sprintf("Bench plan %d", i), start, years)
		out[i] = export.Plan{Plan: pipeline.FromServer(sp, ids), Account: "acme", CompanyName: "Acme Foods (Pty) Ltd",
			Era: sp.Era, Milestones: len(sp.Milestones), UpdatedAt: sp.UpdatedAt}
	}
	return out
}

// benchPeakHeap samples the live heap every 5 ms until the returned
// function is called, which returns the highest value seen in MB.
func benchPeakHeap() func() float64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(stop)
		wg.Wait()
		return float64(peak.Load()) / (1 << 20)
	}
}

// benchMeasure starts measuring a benchmark's peak heap and CPU time; the
// returned function reports them with the wall time per export.
func benchMeasure(b *testing.B) func() {
	peak := benchPeakHeap()
	cpu0 := benchCPUTime()
	b.ReportAllocs()
	return func() {
		b.ReportMetric(peak(), "peak-heap-MB")
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/export")
		if cpu := benchCPUTime() - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/export")
		}
	}
}

// BenchmarkExportGrid builds and writes the grid XLSX export (Overview,
// one grid sheet per plan, the charts) of 100 and 500 plans.
func BenchmarkExportGrid(b *testing.B) {
	for _, n := range []int{100, 500} {
		plans := benchExportPlans(n)
		for _, charts := range []bool{true, false} {
			name := fmt.Sprintf("plans=%d", n)
			if !charts {
				name += "/nocharts"
			}
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "plans.xlsx")
				opts := export.Options{NoCharts: !charts, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
				done := benchMeasure(b)
				for b.Loop() {
					if err := writeExportXLSX(path, plans, opts); err != nil {
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
	plans := benchExportPlans(500)
	path := filepath.Join(b.TempDir(), "plans.xlsx")
	done := benchMeasure(b)
	for b.Loop() {
		if err := writeExportXLSX(path, plans, export.Options{}); err != nil {
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
//	go test ./formats/ -run '^$' -bench ExportGrid2000 -benchtime 1x
func BenchmarkExportGrid2000(b *testing.B) {
	plans := benchExportPlans(2000)
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
			done := benchMeasure(b)
			for b.Loop() {
				if err := writeExportXLSX(path, plans, opts); err != nil {
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
		plans := benchExportPlans(n)
		rows := 0
		for _, p := range plans {
			rows += len(p.Plan.Targets)
		}
		b.Run(fmt.Sprintf("plans=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "flat.xlsx")
			done := benchMeasure(b)
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
