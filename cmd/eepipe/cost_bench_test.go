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
)

// The cost benchmarks run the eepipe binary against the
// sandbox on 127.0.0.1 (in the benchmark's process) and report the
// command process's wall time, CPU time and peak resident memory:
//
//	go test ./cmd/eepipe -run '^$' -bench Cost -benchtime 1x -timeout 60m
//
// The 2,000-plan set-up creates its plans through the API (about 20,000
// requests), so it takes a minute or two before anything is measured.

// costCommand runs eepipe with args b.N times as a process of its own
// (built once), so that the figures are eepipe's alone, not the in-process
// sandbox's: wall time, the process's CPU time (cpu-ms/op) and its peak
// resident memory (rss-MB), the whole process's as the issue measures
// them. ok tells which exit codes are success. It returns the peak
// resident memory in MB.
func costCommand(b *testing.B, e *exEnv, ok func(int) bool, args ...string) (rssMB float64) {
	b.Helper()
	bin := journalBinary(b) // with GOCACHE set, built on the go build cache
	// The process doing the work, not the small supervisor that would
	// run it as a child on Linux.
	env := append(os.Environ(), envNoSupervisor+"=1")
	for k, v := range e.env {
		env = append(env, k+"="+v)
	}
	var cpu time.Duration
	var rss int64
	b.ResetTimer()
	for range b.N {
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				os.Remove(args[i+1]) // export refuses to replace a file
			}
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		hwm := costWatchRSS(cmd.Process.Pid)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 || !ok(code) {
			b.Fatalf("%v: exit %d (%v): %s", args, code, err, stderr.String())
		}
		if os.Getenv("COST_DEBUG") != "" {
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			b.Logf("%s", strings.Join(lines[max(0, len(lines)-8):], " | "))
		}
		cpu += costUsage(cmd.ProcessState)
		rss = max(rss, hwm())
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
	return float64(rss) / (1 << 20)
}

var (
	costBinOnce sync.Once
	costBin     string
	costBinErr  error
)

// costBinary builds eepipe once into a temporary folder.
func costBinary(b *testing.B) string {
	costBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "eepipe-bench-")
		if err != nil {
			costBinErr = err
			return
		}
		costBin = filepath.Join(dir, "eepipe")
		// A build cache of its own: TestMain points XDG_CACHE_HOME into
		// the folder the tests must leave empty, where go build would
		// put its default cache.
		cache := filepath.Join(dir, "gocache")
		defer os.RemoveAll(cache)
		build := exec.Command("go", "build", "-o", costBin, ".")
		build.Env = append(os.Environ(), "GOCACHE="+cache)
		out, err := build.CombinedOutput()
		if err != nil {
			costBinErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if costBinErr != nil {
		b.Fatal(costBinErr)
	}
	return costBin
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
