package main

import (
	"context"
	"os"
	"runtime"
	"testing"
)

// The cost benchmarks (issue 11) run whole commands against the sandbox
// on 127.0.0.1 and report wall time, the process's CPU time (cpu-ms/op,
// the in-process sandbox included) and the peak live heap above the heap
// before the command (peak-heap-MB; base-heap-MB is that base, mostly the
// sandbox's plans):
//
//	go test ./cmd/eepipe -run '^$' -bench Cost -benchtime 1x -timeout 60m
//
// The 2,000-plan set-up creates its plans through the API (about 20,000
// requests), so it takes a minute or two before anything is measured.

// costCommand runs args b.N times and reports time, CPU and peak heap;
// ok tells which exit codes are success.
func costCommand(b *testing.B, e *exEnv, ok func(int) bool, args ...string) {
	b.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc // the sandbox's plans, held by the same process
	peak := sampleHeap()
	cpu0 := costCPUTime()
	b.ResetTimer()
	for range b.N {
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				os.Remove(args[i+1]) // export refuses to replace a file
			}
		}
		if code, _, stderr := e.run(args...); !ok(code) {
			b.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	b.StopTimer()
	top := peak()
	b.ReportMetric(float64(top-min(top, base))/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(base)/(1<<20), "base-heap-MB")
	b.ReportMetric(float64((costCPUTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

func exitZero(code int) bool { return code == 0 }

// BenchmarkCostExport2000Plans exports 2,000 plans as a flat CSV, a long
// CSV and a grid workbook (with and without charts).
func BenchmarkCostExport2000Plans(b *testing.B) {
	e := newExEnv(b, nil)
	e.createPlans(e.acme, "Bench", 2000)
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"csv-flat", []string{"-o", e.path("flat.csv"), "--layout", "flat"}},
		{"csv-long", []string{"-o", e.path("long.csv"), "--layout", "long"}},
		{"xlsx-grid-nocharts", []string{"-o", e.path("grid-nc.xlsx"), "--layout", "grid", "--no-charts"}},
		{"xlsx-grid", []string{"-o", e.path("grid.xlsx"), "--layout", "grid"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			costCommand(b, e, exitZero, append([]string{"export"}, bc.args...)...)
		})
	}
}

// BenchmarkCostReconcileGrid reconciles a grid export of 500 plans (no
// charts) against the service, writing the annotated XLSX copy: in sync,
// and after one counter of every target changed on the service (5,000
// cells to mark, 4,500 of them on plan sheets).
func BenchmarkCostReconcileGrid(b *testing.B) {
	for _, changed := range []bool{false, true} {
		name := "plans=500"
		if changed {
			name += "/changed"
		}
		b.Run(name, func(b *testing.B) {
			e := newExEnv(b, nil)
			plans := e.createPlans(e.acme, "Bench", 500)
			file := e.path("plans.xlsx")
			if code, _, stderr := e.run("export", "-o", file, "--layout", "grid", "--no-charts"); code != 0 {
				b.Fatalf("export: exit %d: %s", code, stderr)
			}
			if changed {
				ctx := context.Background()
				for _, p := range plans {
					for _, m := range p.Milestones {
						for _, t := range m.Targets {
							if _, err := e.acme.UpdateTarget(ctx, p.ID, m.ID, t.ID, map[string]int64{"number_of_african_male_top_managers": 99}); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
			}
			costCommand(b, e, func(c int) bool { return c == 0 || c == 1 }, "reconcile", file, "--report", e.path("rec.xlsx"))
		})
	}
}
