package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// BenchmarkApplyChangeSet applies a signed change set of 250 and 1000
// plans, as a JSON file and as a sign-off workbook, each writing every counter of its 5 years' 2 targets (900
// counters, about 110 KB of JSON a plan), to the sandbox over HTTP on
// 127.0.0.1, with the SQLite state store: the whole apply (verify and
// check, drift check, writes). It reports the set's size and the peak
// heap and live heap of the apply above those before it (the sandbox's own
// store of the plans, and of its answers and plan encodings, is in the
// baseline: a first apply is not measured, then every plan is read), sampled every 5 ms (README
// "Saved change sets", "Memory").
//
//	go test ./cmd/eepipe -run '^$' -bench BenchmarkApplyChangeSet -benchtime 1x
func BenchmarkApplyChangeSet(b *testing.B) {
	for _, form := range []string{"json", "xlsx"} {
		for _, n := range []int{250, 1000} {
			b.Run(fmt.Sprintf("form=%s/plans=%d", form, n), func(b *testing.B) {
				benchApplyChangeSet(b, form, n)
			})
		}
	}
}

// benchApplyChangeSet measures one case of BenchmarkApplyChangeSet: a set
// of n plans written as form (json or xlsx).
func benchApplyChangeSet(b *testing.B, form string, n int) {
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	e := &env{t: &testing.T{}, srv: srv, dir: b.TempDir(), vars: map[string]string{}}
	e.singleAccount()
	f, _, _ := e.factory()
	cfg, err := loadConfig(f, connFlags{}, configNeeds{Plans: true})
	if err != nil {
		b.Fatal(err)
	}
	acct := cfg.Accounts[0]
	client, err := apiclient.New(apiclient.Options{BaseURL: srv.URL, APIKey: acct.APIKey, APISecret: acct.APISecret})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := client.CreatePlan(context.Background(), apiclient.PlanCreate{Name: fmt.Sprintf("Bench plan %04d", i),
			StartDate: "2025-09-01", EndDate: "2030-08-31"}); err != nil {
			b.Fatal(err)
		}
	}
	fixture := ""
	for _, a := range sandbox.DefaultFixtures().Accounts {
		if a.APIKey == acct.APIKey {
			fixture = a.Name
		}
	}
	// A first apply, not measured: the sandbox keeps the answer to
	// each target update it served, so that its own memory is in
	// the baseline of the measured apply.
	warm := filepath.Join(e.dir, "warm.json")
	benchChangeSet(b, srv.Sandbox.Plans(fixture), cfg, acct.Name, warm, -1)
	if r := e.run("apply", warm, "--no-recalc"); r.code != 0 {
		b.Fatalf("warm-up: exit %d\n%s", r.code, r.err)
	}
	// The sandbox keeps each plan's encoding once it is read, until
	// it changes: kept for every plan in the baseline too.
	for _, p := range srv.Sandbox.Plans(fixture) {
		if _, err := client.GetPlan(context.Background(), p.ID); err != nil {
			b.Fatal(err)
		}
	}
	var fileMB, peakMB, liveMB float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		path := filepath.Join(e.dir, fmt.Sprintf("set%d.%s", i, form))
		benchChangeSet(b, srv.Sandbox.Plans(fixture), cfg, acct.Name, path, i)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		fileMB = float64(st.Size()) / (1 << 20)
		// The workbook writer's temporary files are freed by their
		// finalizers, after a first collection: a second one leaves them
		// out of the baseline.
		runtime.GC()
		peak := sampleHeapAbove()
		b.StartTimer()
		r := e.run("apply", path, "--no-recalc")
		b.StopTimer()
		o, l := peak()
		peakMB, liveMB = max(peakMB, o), max(liveMB, l)
		if r.code != 0 {
			b.Fatalf("exit %d\n%s", r.code, r.err)
		}
		b.StartTimer()
	}
	b.ReportMetric(fileMB, "file-MB")
	b.ReportMetric(peakMB, "peak-heap-MB")
	b.ReportMetric(liveMB, "peak-live-MB")
}

// benchChangeSet writes to path a change set, signed for cfg, that adds
// 1 to every counter of every target of plans (as round i found them).
func benchChangeSet(b *testing.B, plans []apiclient.Plan, cfg *Config, account, path string, round int) {
	names := pipeline.DefaultCatalog().Names()
	s := &savedset.SavedChangeSet{Schema: savedset.SavedSetSchema, Created: time.Date(2026, 11, 27, 0, 0, round+1, 0, time.UTC),
		Service: serviceKey(cfg), Accounts: []string{account}}
	for _, p := range plans {
		sp := savedset.SavedPlan{Account: account, Action: diff.ActionUpdate, PlanID: p.ID, Title: fmt.Sprintf("plan %d %q", p.ID, p.Name)}
		for _, m := range p.Milestones {
			for _, t := range m.Targets {
				st := savedset.SavedTarget{YearNumber: m.YearNumber, TargetType: t.TargetType, MilestoneID: m.ID, TargetID: t.ID, File: "bench.xlsx"}
				for j, c := range names {
					old := t.Counters[c]
					st.Counters = append(st.Counters, savedset.SavedCounter{Counter: c, Expected: &old, New: old + 1,
						Cell: fmt.Sprintf("Plan %d!%c%d", p.ID, 'C'+j%20, 10+j)})
				}
				sp.Targets = append(sp.Targets, st)
			}
		}
		s.Plans = append(s.Plans, sp)
	}
	if err := s.Sign(setKeys(cfg)); err != nil {
		b.Fatal(err)
	}
	if err := reports.WriteChangeSet(path, s); err != nil {
		b.Fatal(err)
	}
}

// sampleHeapAbove samples the heap every 5 ms until the returned
// function is called, which returns the peaks above the heap at the start,
// in MiB: of the heap's objects (live, and dead ones not yet swept: it
// includes the collector's headroom, which grows with the whole process's
// live heap, the sandbox's included) and of the live heap as each
// collection marked it.
func sampleHeapAbove() func() (objects, live float64) {
	runtime.GC()
	names := []string{"/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes"}
	read := func(s []metrics.Sample) (uint64, uint64) {
		metrics.Read(s)
		return s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	samples := func() []metrics.Sample {
		return []metrics.Sample{{Name: names[0]}, {Name: names[1]}}
	}
	baseObj, baseLive := read(samples())
	var peakObj, peakLive atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := samples()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			o, l := read(s)
			if o > peakObj.Load() {
				peakObj.Store(o)
			}
			if l > peakLive.Load() {
				peakLive.Store(l)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() (float64, float64) {
		close(stop)
		wg.Wait()
		return float64(max(peakObj.Load(), baseObj)-baseObj) / (1 << 20), float64(max(peakLive.Load(), baseLive)-baseLive) / (1 << 20)
	}
}
