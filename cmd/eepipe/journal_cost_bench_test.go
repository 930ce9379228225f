package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// The cost of the run history (docs/performance.md, "Cost at scale"): the same apply of
// new plans with the state store and with --no-state, run as eepipe
// processes of their own, one after the other in each iteration (each
// against a fresh sandbox in this process, so both have the same work),
// so that the two are compared under the same load:
//
//	GOCACHE=$(go env GOCACHE) go test ./cmd/eepipe -run '^$' -bench 'BenchmarkCostApplyHistory|BenchmarkApplyEfficiency' -benchtime 3x
//
// Each reports, per apply, the eepipe process's wall time, CPU time and
// peak resident memory with the store (store-*) and without (nostate-*),
// the ratios (wall-x, cpu-x) and the load average when the benchmark
// started (load1).

// journalRun is one apply process's figures.
type journalRun struct {
	wall, cpu time.Duration
	rss       int64
	requests  int64
}

// applyProcess applies file (new plans) as an eepipe process against a
// fresh sandbox with latency, with the extra arguments, and returns its
// figures.
func applyProcess(b *testing.B, file string, latency time.Duration, args ...string) journalRun {
	b.Helper()
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures(), Latency: latency})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	dir := b.TempDir()
	env := append(os.Environ(), envNoSupervisor+"=1",
		envBaseURL+"="+srv.URL, envAPIKey+"=mpk_sandbox_acme", envAPISecret+"=sandbox-secret-acme",
		envLookupURL+"="+srv.URL, envLookupUsername+"=consultant", envLookupPassword+"=sandbox-lookup-pass",
		envLockDir+"="+filepath.Join(dir, "locks"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	cmd := exec.Command(journalBinary(b), append([]string{"apply", file, "--no-recalc"}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	hwm := costWatchRSS(cmd.Process.Pid)
	err = cmd.Wait()
	wall := time.Since(start)
	if code := cmd.ProcessState.ExitCode(); err != nil || code != 0 {
		b.Fatalf("apply %v: exit %d (%v): %s", args, code, err, stderr.String())
	}
	return journalRun{wall: wall, cpu: costUsage(cmd.ProcessState), rss: hwm(), requests: srv.Sandbox.Stats().Requests}
}

var (
	journalBinOnce sync.Once
	journalBin     string
	journalBinErr  error
)

// journalBinary builds eepipe once, with the build cache GOCACHE names
// when it is set (go test -bench ... with GOCACHE=$(go env GOCACHE) saves
// building the SQLite driver again), else as costBinary does.
func journalBinary(b *testing.B) string {
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		return costBinary(b)
	}
	journalBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "eepipe-bench-")
		if err != nil {
			journalBinErr = err
			return
		}
		journalBin = filepath.Join(dir, "eepipe")
		build := exec.Command("go", "build", "-o", journalBin, ".")
		build.Env = append(os.Environ(), "GOCACHE="+cache)
		if out, err := build.CombinedOutput(); err != nil {
			journalBinErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if journalBinErr != nil {
		b.Fatal(journalBinErr)
	}
	return journalBin
}

// existingStore creates the store at location (its schema migrated), as
// a user's store exists before an apply, and returns location.
func existingStore(b *testing.B, location string) string {
	st, err := statestore.OpenWith(context.Background(), location, testStoreOptions)
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	return location
}

// newPlansCSV writes plans new plans of 5 years x 2 target types (10
// targets each, 3 counters a target) to dir.
func newPlansCSV(b *testing.B, dir string, plans int) string {
	var rows []row
	for p := range plans {
		for y := 1; y <= 5; y++ {
			for _, typ := range pipeline.TargetTypes {
				rows = append(rows, row{name: fmt.Sprintf("History plan %04d", p), start: "2025-09-01", end: "2030-08-31", year: y, typ: typ,
					counters: counters(cAMT, p%7+1, cWFS, y, cIFU, 3)})
			}
		}
	}
	return writeCSV(&testing.T{}, filepath.Join(dir, "plans.csv"), rows)
}

// loadAverage is the 1-minute load average (0 without /proc).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(strings.Fields(string(b))[0], &l)
	return l
}

// pairedApply runs, b.N times, the apply with stateArgs(i) and the same
// apply with --no-state, alternately, and reports both and their ratios.
// It returns the summed figures (store, no store).
func pairedApply(b *testing.B, file string, latency time.Duration, concurrency int, stateArgs func() []string) (journalRun, journalRun) {
	b.Helper()
	load := loadAverage()
	c := []string{"--concurrency", fmt.Sprint(concurrency)}
	var st, ns journalRun
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		sargs := stateArgs()
		b.StartTimer()
		// Alternate which goes first, so neither always runs warmer.
		runs := []func(){
			func() { r := applyProcess(b, file, latency, append(c, sargs...)...); st = sum(st, r) },
			func() { r := applyProcess(b, file, latency, append(c, "--no-state")...); ns = sum(ns, r) },
		}
		if i%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for _, run := range runs {
			run()
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(st.wall.Milliseconds())/n, "store-wall-ms")
	b.ReportMetric(float64(ns.wall.Milliseconds())/n, "nostate-wall-ms")
	b.ReportMetric(st.wall.Seconds()/ns.wall.Seconds(), "wall-x")
	b.ReportMetric(float64(st.cpu.Milliseconds())/n, "store-cpu-ms")
	b.ReportMetric(float64(ns.cpu.Milliseconds())/n, "nostate-cpu-ms")
	b.ReportMetric(st.cpu.Seconds()/ns.cpu.Seconds(), "cpu-x")
	b.ReportMetric(float64(st.rss)/(1<<20), "store-rss-MB")
	b.ReportMetric(float64(ns.rss)/(1<<20), "nostate-rss-MB")
	b.ReportMetric(load, "load1")
	return st, ns
}

func sum(a, r journalRun) journalRun {
	return journalRun{wall: a.wall + r.wall, cpu: a.cpu + r.cpu, rss: max(a.rss, r.rss), requests: a.requests + r.requests}
}

// BenchmarkCostApplyHistory applies 500 new plans x 10 targets (5,500
// writes: 500 creates and 5,000 target patches) against the sandbox
// without latency, at concurrency 8 and 32, with the default SQLite store
// and, when a PostgreSQL server is given (EEPIPE_TEST_POSTGRES, see
// .ci/postgres.sh), with a PostgreSQL store, each against --no-state.
func BenchmarkCostApplyHistory(b *testing.B) {
	file := newPlansCSV(b, b.TempDir(), 500)
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, n := range []int{8, 32} {
			b.Run(fmt.Sprintf("store=%s/concurrency=%d", backend, n), func(b *testing.B) {
				args := func() []string { return []string{"--state", existingStore(b, filepath.Join(b.TempDir(), "state.db"))} }
				if backend == "postgres" {
					args = func() []string { return []string{"--state", existingStore(b, statestoretest.PostgresURL(b))} }
				}
				pairedApply(b, file, 0, n, args)
			})
		}
	}
}

// BenchmarkApplyEfficiency applies 200 new plans x 10 targets against the
// sandbox with 20 ms latency at concurrency 8 and 32, with the default
// SQLite store and with --no-state, and reports each one's efficiency:
// the ideal time (requests / (concurrency / latency)) over the wall time,
// and the store's over --no-state's (eff-x).
func BenchmarkApplyEfficiency(b *testing.B) {
	const latency = 20 * time.Millisecond
	file := newPlansCSV(b, b.TempDir(), 200)
	for _, n := range []int{8, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			st, ns := pairedApply(b, file, latency, n, func() []string {
				return []string{"--state", existingStore(b, filepath.Join(b.TempDir(), "state.db"))}
			})
			ideal := func(r journalRun) float64 {
				return float64(r.requests) / (float64(n) / latency.Seconds())
			}
			effS, effN := ideal(st)/st.wall.Seconds(), ideal(ns)/ns.wall.Seconds()
			b.ReportMetric(effS, "store-eff")
			b.ReportMetric(effN, "nostate-eff")
			b.ReportMetric(effS/effN, "eff-x")
		})
	}
}
