package statestore

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// BenchmarkRecordWrite measures recording one target write of 20 counters
// at a time (each a batch of one: its own transaction) in an SQLite store.
func BenchmarkRecordWrite(b *testing.B) {
	s, run := benchRun(b)
	ctx := context.Background()
	names := pipeline.DefaultCatalog().Names()[:20]
	b.ResetTimer()
	for i := range b.N {
		w := pipeline.TargetWrite{Account: "acme", PlanID: 1, TargetID: int64(i), TargetType: "all_employees", Outcome: "ok"}
		for j, n := range names {
			v := int64(j)
			w.Counters = append(w.Counters, pipeline.CounterWrite{Counter: n, Before: &v, After: v + 1, Sent: true})
		}
		if err := s.RecordWrite(ctx, run, w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalConcurrent records target writes of 3 counters as apply
// does (pending before the request, the answer after) from 8 or 32
// goroutines at once, in an SQLite store and (with EEPIPE_TEST_POSTGRES)
// a PostgreSQL one: the journal's group commit. ns/op is per target
// write (two records).
//
//	go test ./pipeline/statestore -run '^$' -bench JournalConcurrent -benchmem
func BenchmarkJournalConcurrent(b *testing.B) {
	for name, loc := range map[string]func(b *testing.B) string{
		"sqlite":   func(b *testing.B) string { return filepath.Join(b.TempDir(), "state.db") },
		"postgres": func(b *testing.B) string { return statestoretest.PostgresURL(b) },
	} {
		for _, n := range []int{8, 32} {
			b.Run(fmt.Sprintf("store=%s/writers=%d", name, n), func(b *testing.B) {
				ctx := context.Background()
				s, err := OpenWith(ctx, loc(b), testOptions)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "svc"})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				var next sync.Mutex
				i := 0
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							next.Lock()
							k := i
							i++
							next.Unlock()
							if k >= b.N {
								return
							}
							w := pipeline.TargetWrite{Account: "acme", PlanID: 1, TargetID: int64(k), TargetType: "all_employees",
								Counters: []pipeline.CounterWrite{{Counter: "a", After: 1, Sent: true}, {Counter: "b", After: 2, Sent: true}, {Counter: "c", After: 3}}}
							ids, err := s.RecordPending(ctx, run, []pipeline.TargetWrite{w})
							if err == nil {
								w.ID, w.Outcome = ids[0], "ok"
								err = s.RecordWrite(ctx, run, w)
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}

// BenchmarkJournalPlans records plans of 10 target writes of 3 counters
// as apply records new plans (the plan request and the writes pending
// before their requests, then their answers together) from 8 or 32
// goroutines at once, and reports the process's CPU time per plan
// (cpu-us/plan): what the journal costs apply, without the service.
//
//	go test ./pipeline/statestore -run '^$' -bench JournalPlans -benchtime 500x
func BenchmarkJournalPlans(b *testing.B) {
	for name, loc := range map[string]func(b *testing.B) string{
		"sqlite":   func(b *testing.B) string { return filepath.Join(b.TempDir(), "state.db") },
		"postgres": func(b *testing.B) string { return statestoretest.PostgresURL(b) },
	} {
		for _, n := range []int{8, 32} {
			b.Run(fmt.Sprintf("store=%s/writers=%d", name, n), func(b *testing.B) {
				ctx := context.Background()
				s, err := OpenWith(ctx, loc(b), testOptions)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://service.example", Command: "apply"})
				if err != nil {
					b.Fatal(err)
				}
				cpu0 := processCPU()
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				var next atomic.Int64
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							p := next.Add(1) - 1
							if p >= int64(b.N) {
								return
							}
							if err := recordPlan(ctx, s, run, p); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				if err := s.FinishRun(ctx, run, "ok", time.Now()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/plan")
			})
		}
	}
}

// recordPlan records plan p (new, 10 targets of 3 counters) as apply
// does.
func recordPlan(ctx context.Context, s *Store, run, p int64) error {
	planID := 1000 + p
	if err := s.RecordPlanWrite(ctx, run, pipeline.PlanWrite{Account: "default", PlanID: planID, PlanName: fmt.Sprintf("History plan %04d", p),
		Action: "create", Outcome: "ok", At: time.Now()}); err != nil {
		return err
	}
	ws := planWrites(p)
	ids, err := s.RecordPending(ctx, run, ws)
	if err != nil {
		return err
	}
	for t := range ws {
		ws[t].ID, ws[t].Outcome, ws[t].At = ids[t], "ok", time.Now()
	}
	return s.RecordWrites(ctx, run, ws)
}

// planWrites returns the 10 target writes of 3 counters of new plan p.
func planWrites(p int64) []pipeline.TargetWrite {
	planID := 1000 + p
	ws := make([]pipeline.TargetWrite, 10)
	for t := range ws {
		ws[t] = pipeline.TargetWrite{Account: "default", PlanID: planID, PlanName: fmt.Sprintf("History plan %04d", p), MilestoneID: planID*10 + int64(t/2),
			TargetID: planID*100 + int64(t), YearNumber: t/2 + 1, FinancialYear: "2025/26", TargetType: "all_employees", File: "/home/consultant/plans/plans.csv",
			Counters: []pipeline.CounterWrite{{Counter: "african_male_top", After: 1, Sent: true}, {Counter: "white_female_senior", After: 2, Sent: true}, {Counter: "indian_female_unskilled", After: 3, Sent: true}}}
	}
	return ws
}

// BenchmarkJournalBatch commits the batches of BenchmarkJournalPlans
// with a fixed shape, on the journal's SQLite connection without its
// goroutines: in each transaction the plan requests and pending writes
// of 2 or 8 plans with the answers of the plans before (held for it),
// as apply's journal gathers them at about concurrency 8 or 32. Without
// the variance of the batching, it tells what a change to a
// transaction's statements saves per plan (cpu-us/plan).
//
//	go test ./pipeline/statestore -run '^$' -bench JournalBatch -benchtime 1000x
func BenchmarkJournalBatch(b *testing.B) {
	for _, plans := range []int{2, 8} {
		b.Run(fmt.Sprintf("plans=%d", plans), func(b *testing.B) {
			ctx := context.Background()
			s, err := OpenWith(ctx, filepath.Join(b.TempDir(), "state.db"), testOptions)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://service.example", Command: "apply"})
			if err != nil {
				b.Fatal(err)
			}
			conn, err := s.db.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			j := &journal{s: s}
			defer func() {
				if j.sqlite != nil {
					for _, st := range j.sqlite.byQ {
						st.Close()
					}
				}
				conn.Close()
			}()
			var answers []*op
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				batch := answers
				var pending []*op
				for k := range plans {
					p := int64(i*plans + k)
					ws := planWrites(p)
					o := &op{kind: opWrites, run: run, ws: ws}
					batch = append(batch, &op{kind: opPlan, run: run, later: true, pw: pipeline.PlanWrite{Account: "default", PlanID: 1000 + p,
						PlanName: ws[0].PlanName, Action: "create", Outcome: "ok", At: time.Now()}}, o)
					pending = append(pending, o)
				}
				errs, unreported := j.commit(ctx, conn, batch, false)
				for _, err := range append(errs, unreported) {
					if err != nil {
						b.Fatal(err)
					}
				}
				answers = answers[:0:0]
				for _, o := range pending {
					ws := slices.Clone(o.ws)
					for t := range ws {
						ws[t].ID, ws[t].Outcome, ws[t].At = o.ids[t], "ok", time.Now()
					}
					answers = append(answers, &op{kind: opWrites, run: run, later: true, ws: ws})
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N*plans), "cpu-us/plan")
		})
	}
}

// processCPU is the CPU time (user and system) of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecordInSync records what a first apply of a grid export
// records for plans the store never saw: every target in sync, with every
// counter of the catalog as agreed (Sent false), 10 targets a plan in one
// record (RecordWrites), in an SQLite store. ns/op is per plan.
//
//	go test ./pipeline/statestore -run '^$' -bench RecordInSync -benchmem
func BenchmarkRecordInSync(b *testing.B) {
	s, run := benchRun(b)
	ctx := context.Background()
	names := pipeline.DefaultCatalog().Names()
	b.ResetTimer()
	for i := range b.N {
		ws := make([]pipeline.TargetWrite, 10)
		for t := range ws {
			w := pipeline.TargetWrite{Account: "acme", PlanID: int64(i), TargetID: int64(i*10 + t), TargetType: "all_employees", Outcome: "ok", File: "plans.xlsx"}
			for j, n := range names {
				v := int64(j)
				w.Counters = append(w.Counters, pipeline.CounterWrite{Counter: n, Before: &v, After: v})
			}
			ws[t] = w
		}
		if err := s.RecordWrites(ctx, run, ws); err != nil {
			b.Fatal(err)
		}
	}
}

// inSyncStore returns an SQLite store in which a first apply recorded
// plans of 8 targets (ids plan*8 ...) with every counter of the catalog
// in sync, as the grid round trip's first apply does (docs/performance.md).
func inSyncStore(b *testing.B, plans int) *Store {
	b.Helper()
	ctx := context.Background()
	s, err := OpenWith(ctx, filepath.Join(b.TempDir(), "state.db"), testOptions)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "svc"})
	if err != nil {
		b.Fatal(err)
	}
	names := pipeline.DefaultCatalog().Names()
	for p := range plans {
		ws := make([]pipeline.TargetWrite, 8)
		for t := range ws {
			w := pipeline.TargetWrite{Account: "acme", PlanID: int64(p), TargetID: int64(p*8 + t), TargetType: "all_employees", Outcome: "ok", File: "plans.xlsx"}
			for j, n := range names {
				v := int64(j * t)
				w.Counters = append(w.Counters, pipeline.CounterWrite{Counter: n, Before: &v, After: v})
			}
			ws[t] = w
		}
		if err := s.RecordWrites(ctx, run, ws); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.FinishRun(ctx, run, "ok", time.Now()); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReadInSync reads what apply reads of a plan whose 8 targets
// are all in sync (the grid round trip's re-apply): their last values
// (LastValues) and the writes left pending to them (PendingWrites), from
// 8 plans at once as apply's default concurrency does, in an SQLite
// store of 1,000 such plans (720,000 last values). ns/op is per plan.
//
//	go test ./pipeline/statestore -run '^$' -bench ReadInSync -benchmem
func BenchmarkReadInSync(b *testing.B) {
	const plans = 1000
	s := inSyncStore(b, plans)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ids := make([]int64, 8)
		for pb.Next() {
			p := next.Add(1) % plans
			for t := range ids {
				ids[t] = p*8 + int64(t)
			}
			vs, err := s.LastValues(ctx, "svc", ids)
			if err != nil || len(vs) != 8*len(pipeline.DefaultCatalog().Names()) {
				b.Errorf("%d last values, %v", len(vs), err)
				return
			}
			if _, err := s.PendingWrites(ctx, "svc", ids); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/plan")
}

// BenchmarkRecordInSyncBatches records what a first apply of the grid
// round trip records (docs/performance.md): targets of the catalog's 90
// counters in sync, in records of about 10,000 counters (111 targets, as
// apply gathers them) from 2 goroutines at once, in an SQLite store.
// ns/op and cpu-us/target are per target.
//
//	go test ./pipeline/statestore -run '^$' -bench RecordInSyncBatches -benchtime 24000x
func BenchmarkRecordInSyncBatches(b *testing.B) {
	s, run := benchRun(b)
	ctx := context.Background()
	names := pipeline.DefaultCatalog().Names()
	const perRecord = 111
	var next atomic.Int64
	cpu0 := processCPU()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := next.Add(perRecord) - perRecord
				if start >= int64(b.N) {
					return
				}
				ws := make([]pipeline.TargetWrite, min(perRecord, int64(b.N)-start))
				for t := range ws {
					id := start + int64(t)
					w := pipeline.TargetWrite{Account: "acme", PlanID: id / 8, TargetID: id, TargetType: "all_employees", Outcome: "ok", File: "plans.xlsx",
						Counters: make([]pipeline.CounterWrite, len(names))}
					before := make([]int64, len(names))
					for j, n := range names {
						before[j] = int64(j) * id % 1000
						w.Counters[j] = pipeline.CounterWrite{Counter: n, Before: &before[j], After: before[j]}
					}
					ws[t] = w
				}
				if err := s.RecordWrites(ctx, run, ws); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := s.FinishRun(ctx, run, "ok", time.Now()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/target")
}

// benchRun opens a new SQLite store (closed when b ends) and begins a run
// in it.
func benchRun(b *testing.B) (*Store, int64) {
	b.Helper()
	s, err := OpenWith(context.Background(), filepath.Join(b.TempDir(), "state.db"), testOptions)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	run, err := s.BeginRun(context.Background(), pipeline.RunRecord{Started: time.Now(), Service: "svc"})
	if err != nil {
		b.Fatal(err)
	}
	return s, run
}
