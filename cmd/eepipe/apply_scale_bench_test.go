package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkCostApplyNew2000 applies 2,000 new plans of 5 years x 2 target
// types, every counter of the default catalog set (20,000 targets, about
// 1.6 million counters to write), at concurrency 32 with the default
// SQLite state store, as an eepipe process of its own against a sandbox
// without latency in the benchmark's process: the first apply creates the
// plans (first), then the same file is applied again to the same sandbox
// and store (reapply), which finds everything in sync. Each reports the
// process's wall time (ms/op), CPU time (cpu-ms/op), peak resident memory
// (rss-MB) and peak heap: the largest heap a collection started at
// (heap-MB) and the largest it left live (live-MB), from the runtime's
// GODEBUG=gctrace lines (docs/performance.md, "Cost at scale"):
//
//	GOCACHE=$(go env GOCACHE) go test ./cmd/eepipe -run '^$' -bench BenchmarkCostApplyNew2000 -benchtime 1x
//
// The bound is under 200 MB for the first apply.
func BenchmarkCostApplyNew2000(b *testing.B) {
	file := everyCounterPlansCSV(b, b.TempDir(), 2000)
	for _, phase := range []string{"first", "reapply"} {
		b.Run(phase, func(b *testing.B) {
			var sum gcTraced
			for range b.N {
				b.StopTimer()
				srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
				if err != nil {
					b.Fatal(err)
				}
				args := []string{"--concurrency", "32", "--state", filepath.Join(b.TempDir(), "state.db")}
				if phase == "reapply" {
					gcTracedApply(b, srv.URL, file, args...) // the plans and their history
				}
				b.StartTimer()
				r := gcTracedApply(b, srv.URL, file, args...)
				b.StopTimer()
				srv.Close()
				sum.wall, sum.cpu = sum.wall+r.wall, sum.cpu+r.cpu
				sum.rss, sum.heapMB, sum.liveMB = max(sum.rss, r.rss), max(sum.heapMB, r.heapMB), max(sum.liveMB, r.liveMB)
			}
			n := float64(b.N)
			b.ReportMetric(float64(sum.wall.Milliseconds())/n, "ms/op")
			b.ReportMetric(float64(sum.cpu.Milliseconds())/n, "cpu-ms/op")
			b.ReportMetric(float64(sum.rss)/(1<<20), "rss-MB")
			b.ReportMetric(sum.heapMB, "heap-MB")
			b.ReportMetric(sum.liveMB, "live-MB")
		})
	}
}

// everyCounterPlansCSV writes plans new plans of 5 years x 2 target types
// to dir, with every counter of the default catalog set (a value from 0 to
// 8, so that about one in nine is 0, which a new plan already holds).
func everyCounterPlansCSV(b *testing.B, dir string, plans int) string {
	names := pipeline.DefaultCatalog().Names()
	var rows []row
	for p := range plans {
		for y := 1; y <= 5; y++ {
			for _, typ := range pipeline.TargetTypes {
				c := make(map[string]int64, len(names))
				for i, name := range names {
					c[name] = int64((p + i + y) % 9)
				}
				rows = append(rows, row{name: fmt.Sprintf("Scale plan %04d", p), start: "2025-09-01", end: "2030-08-31", year: y, typ: typ, counters: c})
			}
		}
	}
	return writeCSV(&testing.T{}, filepath.Join(dir, "plans.csv"), rows)
}

// gcTraced is one traced apply's figures.
type gcTraced struct {
	journalRun
	heapMB, liveMB float64
}

// gcTracedApply runs eepipe apply file with args against the sandbox at
// url, with GODEBUG=gctrace=1, and returns its figures; it fails unless
// the apply exits 0.
func gcTracedApply(b *testing.B, url, file string, args ...string) gcTraced {
	b.Helper()
	dir := b.TempDir()
	env := append(os.Environ(), envNoSupervisor+"=1", "GODEBUG=gctrace=1",
		envBaseURL+"="+url, envAPIKey+"=mpk_sandbox_acme", envAPISecret+"=sandbox-secret-acme",
		envLookupURL+"="+url, envLookupUsername+"=consultant", envLookupPassword+"=sandbox-lookup-pass",
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
	err := cmd.Wait()
	wall := time.Since(start)
	if code := cmd.ProcessState.ExitCode(); err != nil || code != 0 {
		b.Fatalf("apply %v: exit %d (%v): %s", args, code, err, stderr.String())
	}
	r := gcTraced{journalRun: journalRun{wall: wall, cpu: costUsage(cmd.ProcessState), rss: hwm()}}
	r.heapMB, r.liveMB = gcTracePeaks(stderr.Bytes())
	return r
}

// gcTracePeaks returns the largest heap at the start of a collection and
// the largest live heap after one, in MB, from gctrace lines ("gc 12 @1.2s
// 3%: ... 41->43->20 MB, 42 MB goal, ...").
func gcTracePeaks(log []byte) (heap, live float64) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		for _, f := range strings.Split(line, ",") {
			f = strings.TrimSpace(f)
			sizes, ok := strings.CutSuffix(f, " MB")
			parts := strings.Split(sizes, "->")
			if !ok || len(parts) != 3 {
				continue
			}
			start, err1 := strconv.ParseFloat(parts[0][strings.LastIndexByte(parts[0], ' ')+1:], 64)
			end, err2 := strconv.ParseFloat(parts[2], 64)
			if err1 == nil && err2 == nil {
				heap, live = max(heap, start), max(live, end)
			}
		}
	}
	return heap, live
}
