package statestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// BenchmarkRecordWrite measures recording one target write of 20 counters
// (its own transaction, fsynced) in an SQLite store.
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
