package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkApply applies 200 new plans (5 years x 2 target types = 2,000
// targets, each with counters to patch) to the sandbox with 20 ms latency
// per response, at concurrency 1, 8 and 32, and reports the requests per
// second achieved next to the ideal concurrency / latency.
//
//	go test ./cmd/eepipe -run '^$' -bench BenchmarkApply -benchtime 1x
func BenchmarkApply(b *testing.B) {
	const latency = 20 * time.Millisecond
	dir := b.TempDir()
	var rows []row
	for p := range 200 {
		for y := 1; y <= 5; y++ {
			for _, typ := range pipeline.TargetTypes {
				rows = append(rows, row{name: fmt.Sprintf("Bench plan %03d", p), start: "2025-09-01", end: "2030-08-31", year: y, typ: typ,
					counters: counters(cAMT, p%7+1, cWFS, y, cIFU, 3)})
			}
		}
	}
	t := &testing.T{}
	file := writeCSV(t, filepath.Join(dir, "bench.csv"), rows)
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			var requests, maxInFlight int64
			var elapsed time.Duration
			for range b.N {
				b.StopTimer()
				srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures(), Latency: latency})
				if err != nil {
					b.Fatal(err)
				}
				e := &env{t: t, srv: srv, dir: b.TempDir(), vars: map[string]string{}}
				e.singleAccount()
				b.StartTimer()
				start := time.Now()
				r := e.runApply(context.Background(), "", nil, file, "--concurrency", fmt.Sprint(n), "--no-recalc")
				elapsed += time.Since(start)
				b.StopTimer()
				if r.code != 0 {
					b.Fatalf("exit %d\n%s", r.code, r.err)
				}
				st := srv.Sandbox.Stats()
				requests += st.Requests
				maxInFlight = max(maxInFlight, st.MaxInFlight)
				if st.MaxInFlight > int64(n) {
					b.Fatalf("max in flight %d > %d", st.MaxInFlight, n)
				}
				srv.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(requests)/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(n)/latency.Seconds(), "ideal_req/s")
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(maxInFlight), "max_in_flight")
		})
	}
}
