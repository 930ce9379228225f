package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
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

// BenchmarkApplyUpdate applies changes to 200 stored plans (2 years x 2
// target types each; one counter changed on every fourth plan, 50 plans)
// through the sandbox with 5 ms (and 20 ms) latency per response at
// concurrency 32, with the SQLite state store and without (--no-state):
// the update path, where each stored plan is read, compared
// and patched. It reports the wall time of the apply (apply-ms/op), the
// requests per apply, the reads and patches among them, and how many
// plan reads were answered before the first PATCH went out (200 when
// every read comes before any write). Each timed
// apply switches the 50 plans between two values, so each one has the
// same work to do.
//
//	go test ./cmd/eepipe -run '^$' -bench BenchmarkApplyUpdate -benchtime 5x -count 3
func BenchmarkApplyUpdate(b *testing.B) {
	const (
		latency     = 5 * time.Millisecond
		concurrency = 32
	)
	dir := b.TempDir()
	t := &testing.T{}
	files := make([]string, 2)
	for v := range files {
		var rows []row
		for p := range 200 {
			for y := 1; y <= 2; y++ {
				for _, typ := range pipeline.TargetTypes {
					amt := p%7 + 1
					if p%4 == 0 && y == 1 && typ == pipeline.TargetAll {
						amt = 10 + v
					}
					rows = append(rows, row{name: fmt.Sprintf("Update plan %03d", p), start: "2025-09-01", end: "2030-08-31", year: y, typ: typ,
						counters: counters(cAMT, amt, cWFS, y, cIFU, 3)})
				}
			}
		}
		files[v] = writeCSV(t, filepath.Join(dir, fmt.Sprintf("update%d.csv", v)), rows)
	}
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	e := &env{t: t, srv: srv, dir: b.TempDir(), vars: map[string]string{}}
	e.singleAccount()
	if r := e.runApply(context.Background(), "", nil, files[1], "--no-recalc"); r.code != 0 {
		b.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	defer srv.Sandbox.SetLatency(0)
	flip := 1 // the file applied last: each apply switches, changing the 50 plans
	for _, latency := range []time.Duration{latency, 4 * latency} {
		for _, state := range []string{"sqlite", "none"} {
			b.Run(fmt.Sprintf("latency=%s/state=%s", latency, state), func(b *testing.B) {
				srv.Sandbox.SetLatency(latency)
				args := []string{"--concurrency", fmt.Sprint(concurrency), "--no-recalc"}
				if state == "none" {
					args = append(args, "--no-state")
				}
				var requests, gets, patches, readsFirst int64
				var elapsed time.Duration
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					srv.Sandbox.ResetStats()
					flip = 1 - flip
					b.StartTimer()
					start := time.Now()
					order := &requestOrder{next: http.DefaultTransport}
					hc := &http.Client{Transport: order}
					r := e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, append([]string{files[flip]}, args...)...)
					elapsed += time.Since(start)
					b.StopTimer()
					if r.code != 0 {
						b.Fatalf("exit %d\n%s", r.code, r.err)
					}
					readsFirst += int64(order.readsAtFirstPatch)
					st := srv.Sandbox.Stats()
					requests += st.Requests
					for route, n := range st.ByRoute {
						switch {
						case route == "GET /api/public/v1/employment_equity_plans/{id}":
							gets += n
						case strings.HasPrefix(route, "PATCH "):
							patches += n
						}
					}
					// Not checked against concurrency: the sandbox counts a
					// request until its handler returns, after the client
					// has its answer and may send the next.
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "apply-ms/op")
				b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
				b.ReportMetric(float64(gets)/float64(b.N), "gets/op")
				b.ReportMetric(float64(patches)/float64(b.N), "patches/op")
				b.ReportMetric(float64(readsFirst)/float64(b.N), "reads-before-1st-write")
			})
		}
	}
}
