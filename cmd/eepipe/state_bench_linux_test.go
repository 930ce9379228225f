package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkApplyInSyncWithState re-applies 200 plans (2,000 targets, each
// plan with a name and sector) that the service already holds, with an
// SQLite state store: the run writes nothing and records what it found in
// sync (counters and plan fields). It reports the process CPU time per
// apply next to the wall time.
//
//	go test ./cmd/eepipe -run '^$' -bench BenchmarkApplyInSyncWithState -benchtime 5x
func BenchmarkApplyInSyncWithState(b *testing.B) {
	dir := b.TempDir()
	var rows []row
	for p := range 200 {
		for y := 1; y <= 5; y++ {
			for _, typ := range pipeline.TargetTypes {
				rows = append(rows, row{name: fmt.Sprintf("Bench plan %03d", p), start: "2025-09-01", end: "2030-08-31", year: y, typ: typ,
					sector: pipeline.Sectors[p%len(pipeline.Sectors)], counters: counters(cAMT, p%7+1, cWFS, y, cIFU, 3)})
			}
		}
	}
	t := &testing.T{}
	file := writeCSV(t, filepath.Join(dir, "bench.csv"), rows)
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	e := &env{t: t, srv: srv, dir: dir, vars: map[string]string{}}
	e.singleAccount()
	state := filepath.Join(dir, "state.db")
	if r := e.runApply(context.Background(), "", nil, file, "--no-recalc", "--state", state); r.code != 0 {
		b.Fatalf("exit %d\n%s", r.code, r.err)
	}
	var cpu, wall time.Duration
	b.ResetTimer()
	for range b.N {
		c0, t0 := cpuTime(), time.Now()
		r := e.runApply(context.Background(), "", nil, file, "--no-recalc", "--state", state)
		cpu, wall = cpu+cpuTime()-c0, wall+time.Since(t0)
		if r.code != 0 {
			b.Fatalf("exit %d\n%s", r.code, r.err)
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/op")
}

// cpuTime is the process's user and system CPU time so far (the sandbox
// serves in the same process).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
