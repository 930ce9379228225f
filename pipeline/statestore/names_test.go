package statestore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestCounterIDsTwoStoresAddingAtOnce: two stores on one database (as two
// processes) add counter names at once, some the same, some their own;
// each reads back every write, its own and the other's, with its
// counters named as recorded: no id is given to two names, none cached
// stale.
func TestCounterIDsTwoStoresAddingAtOnce(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			stores := make([]*Store, 2)
			runs := make([]int64, 2)
			for i := range stores {
				s, err := OpenWith(ctx, where, testOptions)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				stores[i] = s
				if runs[i], err = s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "svc"}); err != nil {
					t.Fatal(err)
				}
			}
			const rounds = 20
			write := func(p, r int) pipeline.TargetWrite {
				return pipeline.TargetWrite{Account: "acme", PlanID: 1, TargetID: int64(p*1000 + r), TargetType: "all_employees", Outcome: "ok",
					Counters: []pipeline.CounterWrite{
						{Counter: fmt.Sprintf("shared_%d", r), After: int64(r), Sent: true},
						{Counter: fmt.Sprintf("own_%d_%d", p, r), After: int64(p*1000 + r), Sent: true},
					}}
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for p := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						if err := stores[p].RecordWrites(ctx, runs[p], []pipeline.TargetWrite{write(p, r)}); err != nil {
							errs[p] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			var ids []int64
			for p := range stores {
				for r := range rounds {
					ids = append(ids, int64(p*1000+r))
				}
			}
			for i, s := range stores {
				got, err := s.LastWrites(ctx, "svc", "acme", ids)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 2*len(ids) {
					t.Errorf("store %d read %d last values, want %d", i, len(got), 2*len(ids))
				}
				for p := range stores {
					for r := range rounds {
						for _, c := range write(p, r).Counters {
							k := pipeline.CounterKey{TargetID: int64(p*1000 + r), Counter: c.Counter}
							if lw, ok := got[k]; !ok || lw.Value != c.After {
								t.Errorf("store %d: %+v read %+v (%v), want %d", i, k, lw, ok, c.After)
							}
						}
					}
				}
			}
		})
	}
}
