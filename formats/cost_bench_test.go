package formats

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
)

// The cost benchmarks cover the rows of the cost tables: each
// reports its wall time, CPU time (cpu-ms/op, all threads, garbage
// collection included), the peak live heap (peak-MB) and, where the work
// has a floor (excelize's bare streaming iteration, bare encoding/csv),
// the CPU time as a multiple of that floor's (x-floor-cpu). Read
// benchmarks do not fail on warnings: a noisy file is a case to measure.
//
//	go test ./formats/ -run '^$' -bench 'Cost' -benchtime 1x -timeout 60m
//
// The inputs are generated in the benchmark (never committed, never built
// by tests).

// costMeasure measures one run of work: wall time, CPU time and the peak
// live heap above the heap at its start.
type costMeasure struct {
	cpu, peak float64 // CPU ms, MB
	live      float64 // MB: the peak of the live heap as each collection found it
}

func costRun(work func()) costMeasure {
	runtime.GC()
	base := heapInuseAfterGC()
	peak := measure.PeakHeap()
	live := measure.Peak("/gc/heap/live:bytes", true) // the memory the work held, without garbage not yet reclaimed
	cpu0 := measure.CPUTime()
	work()
	cpu := measure.CPUTime() - cpu0
	p := peak() - float64(base)/(1<<20)
	l := live() - float64(base)/(1<<20)
	return costMeasure{cpu: float64(cpu.Microseconds()) / 1000, peak: max(p, 0), live: max(l, 0)}
}

// costReport reports the b.N runs: the mean CPU time, the worst peaks.
func costReport(b *testing.B, ms []costMeasure) {
	var cpu, peak, live float64
	for _, m := range ms {
		cpu += m.cpu
		peak = max(peak, m.peak)
		live = max(live, m.live)
	}
	b.ReportMetric(cpu/float64(len(ms)), "cpu-ms/op")
	b.ReportMetric(peak, "peak-MB")
	b.ReportMetric(live, "live-peak-MB")
}

// costHeader is the flat header with the first n counters of the catalog.
func costHeader(n int) []string {
	h := benchHeader()
	return h[:8+n]
}

// costRow is row i of benchRow's table with n counters; noisy makes the
// disabled_employees counters exceed the all_employees ones (a warning
// each, the totals still adding up).
func costRow(i, n int, noisy bool) []string {
	r := benchRow(i)
	if noisy && r[7] == pipeline.TargetDisabled {
		// The all-employees values of this year are at most 8 per level;
		// 9 + v is above every one of them. Totals add up again below.
		cat := pipeline.DefaultCatalog()
		idx := map[string]int{}
		for j, name := range cat.Names() {
			idx[name] = 8 + j
		}
		for _, race := range pipeline.Races {
			for _, gender := range pipeline.Genders {
				total := 0
				for _, level := range pipeline.OccupationalLevels {
					k := idx[pipeline.CounterName(race, gender, level)]
					v, _ := strconv.Atoi(r[k])
					r[k] = strconv.Itoa(v + 9)
					total += v + 9
				}
				temp, _ := strconv.Atoi(r[idx[pipeline.CounterName(race, gender, "temporary_employees")]])
				r[idx[pipeline.CounterName(race, gender, "total_permanent_employees")]] = strconv.Itoa(total)
				r[idx[pipeline.CounterName(race, gender, "grand_total_employees")]] = strconv.Itoa(total + temp)
			}
		}
	}
	return r[:8+n]
}

// writeCostXLSX writes a flat workbook of rows rows with n counters.
func writeCostXLSX(b *testing.B, path string, rows, n int, noisy bool) {
	b.Helper()
	writeTableXLSX(b, path, costHeader(n), rows, func(i int) []string { return costRow(i, n, noisy) })
}

// writeCostCSV writes a flat CSV of rows rows with n counters.
func writeCostCSV(b *testing.B, path string, rows, n int) {
	b.Helper()
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	w := csv.NewWriter(bufio.NewWriter(fh))
	_ = w.Write(costHeader(n))
	for i := range rows {
		_ = w.Write(costRow(i, n, false))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		b.Fatal(err)
	}
}

// costValidate reads path as eepipe validate does (bounded problems,
// the text report written to a counting writer) and fails only on errors.
func costValidate(b *testing.B, path string, rows int) (lines int, warnings int) {
	b.Helper()
	batch, err := ReadFiles([]string{path}, costReadOptions())
	if err != nil {
		b.Fatal(err)
	}
	if errs := costCount(batch, pipeline.Error); errs != 0 || len(batch.Plans) != (rows+9)/10 {
		b.Fatalf("%d plans, %d errors %v", len(batch.Plans), errs, firstProblems(batch.Problems))
	}
	lc := &lineCounter{}
	if err := reports.WriteProblemsText(lc, batch); err != nil {
		b.Fatal(err)
	}
	return lc.lines, costCount(batch, pipeline.Warning)
}

type lineCounter struct{ lines int }

func (l *lineCounter) Write(p []byte) (int, error) {
	l.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// BenchmarkCostValidateFlatXLSX validates clean flat workbooks of 20,000
// and 100,000 rows of 60 counters. model-MB is the live heap the batch
// keeps; beyond-model-MB the peak above it, which must not grow with the
// rows ("flat in rows"). The test binary runs with the runtime's default
// collector settings (GOGC=100); the eepipe process also paces its
// collector (cmd/eepipe/gcpace), which cmd/eepipe's
// BenchmarkCostValidateFlatXLSX measures as a whole process.
func BenchmarkCostValidateFlatXLSX(b *testing.B) {
	dir := b.TempDir()
	for _, rows := range []int{20_000, 100_000} {
		path := filepath.Join(dir, fmt.Sprintf("flat-%d.xlsx", rows))
		writeCostXLSX(b, path, rows, 60, false)
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			var ms []costMeasure
			var model float64
			for range b.N {
				var batch *pipeline.Batch
				base := heapInuseAfterGC()
				m := costRun(func() {
					var err error
					batch, err = ReadFiles([]string{path}, costReadOptions())
					if err != nil || costCount(batch, pipeline.Error) != 0 {
						b.Fatalf("read: %v %v", err, firstProblems(batch.Problems))
					}
				})
				model = float64(heapInuseAfterGC()-min(base, heapInuseAfterGC())) / (1 << 20)
				runtime.KeepAlive(batch)
				ms = append(ms, m)
			}
			costReport(b, ms)
			b.ReportMetric(model, "model-MB")
			b.ReportMetric(max(ms[len(ms)-1].peak-model, 0), "beyond-model-MB")
			b.ReportMetric(max(ms[len(ms)-1].live-model, 0), "live-beyond-model-MB")
		})
	}
}

// BenchmarkCostValidateNoisy validates 20,000 rows whose disabled counters
// exceed the all-employees ones (about 270,000 warnings at 60 counters; 90
// counters give about 556,000) and writes the text report: lines is the
// output's length.
func BenchmarkCostValidateNoisy(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{90} {
		path := filepath.Join(dir, fmt.Sprintf("noisy-%d.xlsx", n))
		writeCostXLSX(b, path, 20_000, n, true)
		b.Run(fmt.Sprintf("counters=%d", n), func(b *testing.B) {
			var ms []costMeasure
			var lines, warnings int
			for range b.N {
				ms = append(ms, costRun(func() { lines, warnings = costValidate(b, path, 20_000) }))
			}
			costReport(b, ms)
			b.ReportMetric(float64(lines), "lines")
			b.ReportMetric(float64(warnings), "warnings")
		})
	}
}

// costExcelizeFloor iterates every cell of every sheet of path with
// excelize's streaming Rows iterator: the floor a workbook reader is
// measured against.
func costExcelizeFloor(b *testing.B, path string) int {
	f, err := excelize.OpenFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cells := 0
	for _, s := range f.GetSheetList() {
		rows, err := f.Rows(s)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			cols, err := rows.Columns()
			if err != nil {
				b.Fatal(err)
			}
			cells += len(cols)
		}
		_ = rows.Close()
	}
	return cells
}

// BenchmarkCostGridRead reads grid workbooks of 50, 200 and 500 plan
// sheets (five years each, every counter set) as validate does, against
// the excelize floor on the same file.
func BenchmarkCostGridRead(b *testing.B) {
	dir := b.TempDir()
	for _, sheets := range []int{50, 200, 500} {
		path := filepath.Join(dir, fmt.Sprintf("grid-%d.xlsx", sheets))
		var plans []*pipeline.InputPlan
		for _, p := range books.ManyExportPlans(sheets) {
			plans = append(plans, p.Plan)
		}
		if err := books.WriteGrid(path, plans, nil); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("sheets=%d", sheets), func(b *testing.B) {
			floor := costRun(func() { costExcelizeFloor(b, path) })
			var ms []costMeasure
			for range b.N {
				ms = append(ms, costRun(func() {
					batch, err := ReadFiles([]string{path}, costReadOptions())
					if err != nil || len(batch.Plans) != sheets || costCount(batch, pipeline.Error) != 0 {
						b.Fatalf("read: %v, %d plans %v", err, len(batch.Plans), firstProblems(batch.Problems))
					}
				}))
			}
			costReport(b, ms)
			b.ReportMetric(ms[len(ms)-1].cpu/floor.cpu, "x-floor-cpu")
			b.ReportMetric(floor.cpu, "floor-cpu-ms")
			b.ReportMetric(floor.peak, "floor-peak-MB")
		})
	}
}

// BenchmarkCostFlatCSV validates a flat CSV of 100,000 rows of 90
// counters against bare encoding/csv reading every record of it.
func BenchmarkCostFlatCSV(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flat-100k.csv")
	const rows = 100_000
	writeCostCSV(b, path, rows, 90)
	floor := costRun(func() {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer fh.Close()
		r := csv.NewReader(bufio.NewReader(fh))
		r.ReuseRecord = true
		n := 0
		for {
			_, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != rows+1 {
			b.Fatalf("%d records", n)
		}
	})
	var ms []costMeasure
	var model float64
	for range b.N {
		var batch *pipeline.Batch
		base := heapInuseAfterGC()
		ms = append(ms, costRun(func() {
			var err error
			batch, err = ReadFiles([]string{path}, costReadOptions())
			if err != nil || costCount(batch, pipeline.Error) != 0 || len(batch.Plans) != rows/10 {
				b.Fatalf("read: %v %v", err, firstProblems(batch.Problems))
			}
		}))
		model = float64(heapInuseAfterGC()-min(base, heapInuseAfterGC())) / (1 << 20)
		runtime.KeepAlive(batch)
	}
	costReport(b, ms)
	b.ReportMetric(ms[len(ms)-1].cpu/floor.cpu, "x-floor-cpu")
	b.ReportMetric(floor.cpu, "floor-cpu-ms")
	b.ReportMetric(model, "model-MB")
}
