package main

import (
	"fmt"
	"maps"
	"runtime"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkCostValidateFlatXLSX runs `eepipe validate` as a process of its
// own (costCommand) on clean flat workbooks of 20,000 and 100,000 rows of
// 60 counters, the cost row "memory flat in rows":
//
//	go test ./cmd/eepipe -run '^$' -bench CostValidateFlatXLSX -benchtime 1x -count 3
//
// rss-MB is the process's peak resident memory; model-MB the heap the
// read batch keeps (the plans and their counters), measured here in the
// benchmark's process by reading the same file with formats.ReadFiles and
// comparing the heap in use after a collection before and after (the
// eepipe process holds the same batch until it exits: validate keeps the
// plans to check them); beyond-model-MB is rss-MB minus model-MB, the
// memory that must not grow with the rows. It includes what every run
// has (the binary, the runtime, goroutine stacks), which is the same at
// both sizes.
//
// The gc=GOGC100 runs set GOGC=100 in the command's environment, which
// turns eepipe's collector pacing (gcpace) off: the runtime's default
// (the next collection at twice the live heap); comparing cpu-ms/op of
// the two is the pacing's CPU cost.
func BenchmarkCostValidateFlatXLSX(b *testing.B) {
	e := newExEnv(b, nil)
	plain := *e
	plain.env = maps.Clone(e.env)
	plain.env["GOGC"] = "100"
	for _, rows := range []int{20_000, 100_000} {
		path := e.path(fmt.Sprintf("flat-%d.xlsx", rows))
		writeCostFlatXLSX(b, path, rows, 60)
		model := costModelMB(b, path, rows)
		for _, run := range []struct {
			name string
			env  *exEnv
		}{{"gc=paced", e}, {"gc=GOGC100", &plain}} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, run.name), func(b *testing.B) {
				rss := costCommand(b, run.env, exitZero, "validate", path)
				b.ReportMetric(model, "model-MB")
				b.ReportMetric(rss-model, "beyond-model-MB")
			})
		}
	}
}

// costModelMB reads path as validate does and returns the heap the batch
// keeps, in MB: the heap in use after a collection with the batch held,
// less the same before the read.
func costModelMB(b *testing.B, path string, rows int) float64 {
	b.Helper()
	inuse := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	base := inuse()
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{Bound: &pipeline.ProblemBound{Keep: problemsPerKind}})
	if err != nil || len(batch.Plans) != (rows+9)/10 || batch.Count(pipeline.Error) != 0 {
		b.Fatalf("read %s: %v, %d plans, %d errors", path, err, len(batch.Plans), batch.Count(pipeline.Error))
	}
	held := inuse()
	runtime.KeepAlive(batch)
	return float64(held-min(base, held)) / (1 << 20)
}

// writeCostFlatXLSX writes a clean flat workbook (sheet Targets, streamed)
// of rows rows with the first n counters of the catalog: plans of five
// years and two target types, totals adding up and the disabled
// employees never above all employees, as formats' cost benchmarks
// generate them.
func writeCostFlatXLSX(b *testing.B, path string, rows, n int) {
	b.Helper()
	cat := pipeline.DefaultCatalog()
	names := cat.Names()[:n]
	f := excelize.NewFile()
	defer f.Close()
	_ = f.SetSheetName("Sheet1", "Targets")
	sw, err := f.NewStreamWriter("Targets")
	if err != nil {
		b.Fatal(err)
	}
	header := []any{pipeline.ColCompanyVAT, pipeline.ColPlanName, pipeline.ColStartDate, pipeline.ColEndDate, pipeline.ColSector, pipeline.ColYearNumber, pipeline.ColFinancialYear, pipeline.ColTargetType}
	for _, name := range names {
		header = append(header, name)
	}
	if err := sw.SetRow("A1", header); err != nil {
		b.Fatal(err)
	}
	values := make(map[string]int, cat.Len())
	row := make([]any, 0, len(header))
	for i := range rows {
		plan, rest := i/10, i%10
		year, tt := rest/2+1, pipeline.TargetTypes[rest%2]
		row = append(row[:0], fmt.Sprintf("40%08d", plan%100000000), fmt.Sprintf("Bench plan %d", plan), "2025-09-01", "2030-08-31", "Manufacturing",
			strconv.Itoa(year), pipeline.FinancialYear(2024+year).String(), tt)
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
		for _, name := range names {
			row = append(row, values[name])
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, row); err != nil {
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
