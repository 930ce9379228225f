package formats

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// The benchmarks read and validate generated flat files (never committed):
//
//	go test ./formats/ -run '^$' -bench 'BenchmarkRead' -benchtime 1x -timeout 30m
//
// Each reports rows/s, the peak heap while reading and validating
// (peak-MB), the heap the resulting domain model keeps (model-MB), and the
// peak heap of the reader alone with the records discarded (stream-MB):
// the reader's own memory, which must stay flat as the row count grows
// (compare the sub-benchmarks of different sizes); everything above it is
// the model (and garbage the collector has not reclaimed yet).
// stream-rows/s is the reader's own speed, without validation and the model.
// cpu-rows/s is rows per second of CPU time (all threads, garbage
// collection included) spent reading and validating: on a loaded machine
// it varies much less than rows/s, which is per second of wall time.

// benchHeader returns the flat header with every counter of the catalog.
func benchHeader() []string {
	h := []string{pipeline.ColCompanyVAT, pipeline.ColPlanName, pipeline.ColStartDate, pipeline.ColEndDate, pipeline.ColSector, pipeline.ColYearNumber, pipeline.ColFinancialYear, pipeline.ColTargetType}
	return append(h, pipeline.DefaultCatalog().Names()...)
}

// benchRow returns row i (0-based) of the generated table: plans of 5
// years x 2 target types, with consistent counters (totals add up,
// disabled employees never above all employees), as real files have.
func benchRow(i int) []string {
	plan, rest := i/10, i%10
	year, tt := rest/2+1, pipeline.TargetTypes[rest%2]
	out := []string{
		fmt.Sprintf("40%08d", plan%100000000), fmt.Sprintf("Bench plan %d", plan), "2025-09-01", "2030-08-31", "Manufacturing",
		strconv.Itoa(year), pipeline.FinancialYear(2024 + year).String(), tt,
	}
	cat := pipeline.DefaultCatalog()
	values := make(map[string]int, cat.Len())
	base := i - rest%2 // the all_employees row of the same year
	for ri, race := range pipeline.Races {
		for gi, gender := range pipeline.Genders {
			total := 0
			for li, level := range pipeline.OccupationalLevels {
				v := (base + ri*7 + gi*3 + li) % 9
				if tt == pipeline.TargetDisabled {
					v /= 4
				}
				values[pipeline.CounterName(race, gender, level)] = v
				total += v
			}
			temp := (base + ri) % 3
			if tt == pipeline.TargetDisabled {
				temp /= 4
			}
			values[pipeline.CounterName(race, gender, "total_permanent_employees")] = total
			values[pipeline.CounterName(race, gender, "temporary_employees")] = temp
			values[pipeline.CounterName(race, gender, "grand_total_employees")] = total + temp
		}
	}
	for _, name := range cat.Names() {
		out = append(out, strconv.Itoa(values[name]))
	}
	return out
}

func writeBenchXLSX(b *testing.B, path string, rows int) {
	b.Helper()
	writeTableXLSX(b, path, benchHeader(), rows, benchRow)
}

// writeTableXLSX writes a flat workbook (sheet Targets, streamed): the
// header, then rows rows from row(i), whose fields from the ninth on
// (the counters) are written as numbers.
func writeTableXLSX(b *testing.B, path string, header []string, rows int, row func(i int) []string) {
	b.Helper()
	f := excelize.NewFile()
	defer f.Close()
	_ = f.SetSheetName("Sheet1", "Targets")
	sw, err := f.NewStreamWriter("Targets")
	if err != nil {
		b.Fatal(err)
	}
	toAny := func(ss []string, numericFrom int) []any {
		out := make([]any, len(ss))
		for i, s := range ss {
			if i >= numericFrom {
				n, _ := strconv.Atoi(s)
				out[i] = n
			} else {
				out[i] = s
			}
		}
		return out
	}
	if err := sw.SetRow("A1", toAny(header, 1<<30)); err != nil {
		b.Fatal(err)
	}
	for i := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, toAny(row(i), 8)); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		b.Fatal(err)
	}
}

// writeBenchCSV writes rows until the file reaches size bytes and returns
// the number of data rows.
func writeBenchCSV(b *testing.B, path string, size int64) int {
	b.Helper()
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	w := bufio.NewWriter(fh)
	var n int64
	write := func(ss []string) {
		for i, s := range ss {
			if i > 0 {
				_ = w.WriteByte(',')
				n++
			}
			k, _ := w.WriteString(s)
			n += int64(k)
		}
		_ = w.WriteByte('\n')
		n++
	}
	write(benchHeader())
	rows := 0
	for n < size {
		write(benchRow(rows))
		rows++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return rows
}

// heapSampler records the peak HeapInuse while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.peak.Load() {
				s.peak.Store(ms.HeapInuse)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) Stop() uint64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak.Load()
}

func heapInuseAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// benchRead reads path b.N times and reports throughput and memory.
func benchRead(b *testing.B, path string, rows int) {
	b.Helper()
	var peak, model, base uint64
	var cpu float64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		base = heapInuseAfterGC()
		s := startHeapSampler()
		b.StartTimer()
		cpu0 := measure.CPUTime().Seconds()
		batch, err := ReadFiles([]string{path}, ReadOptions{})
		cpu += measure.CPUTime().Seconds() - cpu0
		b.StopTimer()
		peak = max(peak, s.Stop()-min(s.peak.Load(), base))
		if err != nil || len(batch.Problems) != 0 || len(batch.Plans) != (rows+9)/10 {
			b.Fatalf("read: %v, %d plans, %d problems %v", err, len(batch.Plans), len(batch.Problems), firstProblems(batch.Problems))
		}
		model = heapInuseAfterGC() - base
		runtime.KeepAlive(batch)
		b.StartTimer()
	}
	b.StopTimer()
	// The reader alone, records discarded: its own memory.
	kind, ok := readKindOf(path)
	if !ok {
		b.Fatalf("%s: not a .csv or .xlsx file", path)
	}
	base = heapInuseAfterGC()
	s := startHeapSampler()
	n := 0
	var ps pipeline.Problems
	start := time.Now()
	_ = readInputFile(path, kind, xlsx.Limits{}, pipeline.DefaultCatalog(), nil, func(pipeline.Record) { n++ }, &ps)
	streamTime := time.Since(start)
	stream := s.Stop() - min(s.peak.Load(), base)
	if n != rows || len(ps) != 0 {
		b.Fatalf("stream read %d of %d rows, problems %v", n, rows, firstProblems(ps))
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)*float64(b.N)/cpu, "cpu-rows/s")
	}
	b.ReportMetric(float64(stream)/(1<<20), "stream-MB")
	b.ReportMetric(float64(rows)/streamTime.Seconds(), "stream-rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	b.ReportMetric(float64(model)/(1<<20), "model-MB")
}

func firstProblems(ps pipeline.Problems) pipeline.Problems {
	if len(ps) > 3 {
		return ps[:3]
	}
	return ps
}

func BenchmarkReadFlatXLSX(b *testing.B) {
	dir := b.TempDir()
	for _, rows := range []int{20_000, 100_000} {
		path := filepath.Join(dir, fmt.Sprintf("flat-%d.xlsx", rows))
		writeBenchXLSX(b, path, rows)
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchRead(b, path, rows) })
	}
}

func BenchmarkReadFlatCSV(b *testing.B) {
	dir := b.TempDir()
	for _, mb := range []int64{1, 10} {
		path := filepath.Join(dir, fmt.Sprintf("flat-%dMB.csv", mb))
		rows := writeBenchCSV(b, path, mb<<20)
		b.Run(fmt.Sprintf("size=%dMB", mb), func(b *testing.B) { benchRead(b, path, rows) })
	}
}
