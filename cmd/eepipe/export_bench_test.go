package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkExport500Plans exports 500 plans (4-5 financial years each, every
// counter set) from the sandbox over 127.0.0.1 through the whole command:
// list, 500 retrieves, conversion, the workbook and its atomic write. It
// reports the peak live heap seen while exporting (peak-heap-MB).
//
//	go test -run '^$' -bench Export500 -benchtime 3x ./cmd/eepipe/
func BenchmarkExport500Plans(b *testing.B) {
	e := newExEnv(b, nil)
	e.createPlans(e.acme, "Bench", 500)
	for _, bc := range []struct{ name, file, layout string }{
		{"xlsx-grid", "plans.xlsx", "grid"},
		{"xlsx-grid-nocharts", "plans.xlsx", "grid"},
		{"xlsx-flat", "flat.xlsx", "flat"},
		{"csv-flat", "plans.csv", "flat"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := []string{"export", "-o", e.path(bc.file), "--layout", bc.layout}
			if bc.name == "xlsx-grid-nocharts" {
				args = append(args, "--no-charts")
			}
			runtime.GC()
			peak := sampleHeap()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				os.Remove(e.path(bc.file)) // export refuses to replace a file
				if code, _, stderr := e.run(args...); code != 0 {
					b.Fatalf("export exit %d: %s", code, stderr)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/export")
		})
	}
}

// sampleHeap samples the live heap every 5 ms until the returned function
// is called, which returns the highest value seen.
func sampleHeap() func() uint64 {
	var max atomic.Uint64
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
			if v := s[0].Value.Uint64(); v > max.Load() {
				max.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		wg.Wait()
		return max.Load()
	}
}
