package statestore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// BenchmarkRecordWrite measures recording one target write of 20 counters
// at a time (each a batch of one: its own transaction) in an SQLite store.
func BenchmarkRecordWrite(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "svc"})
	if err != nil {
		b.Fatal(err)
	}
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
				s, err := Open(ctx, loc(b))
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
