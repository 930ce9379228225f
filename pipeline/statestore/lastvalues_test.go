package statestore

import (
	"context"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestLastValues: the last values applied alone, by target id of the
// service whatever the account's name, in bounded chunks; a counter whose
// values under two names of its account differ is Mixed, one whose values
// agree is not.
func TestLastValues(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			write := func(account string, at time.Time, target int64, counter string, v int64) {
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: at, Service: "svc", Accounts: []string{account}})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RecordWrites(ctx, run, []pipeline.TargetWrite{{Account: account, TargetID: target, Outcome: "ok", At: at,
					Counters: []pipeline.CounterWrite{{Counter: counter, After: v}}}}); err != nil {
					t.Fatal(err)
				}
			}
			write("default", t0, 7, "a", 1)
			write("acme-prod", t0.Add(time.Hour), 7, "a", 5)
			write("default", t0, 7, "b", 2)
			write("acme-prod", t0.Add(time.Hour), 7, "b", 2)
			write("default", t0.Add(2*time.Hour), 8, "a", 3)
			write("default", t0, 9, "a", 4)
			var ids []int64
			for i := range 1200 {
				ids = append(ids, int64(100+i))
			}
			ids = append(ids, 8, 7, 7)
			got, err := s.LastValues(ctx, "svc", ids)
			if err != nil {
				t.Fatal(err)
			}
			want := map[pipeline.CounterKey]pipeline.LastValue{
				{TargetID: 7, Counter: "a"}: {Value: 1, Mixed: true},
				{TargetID: 7, Counter: "b"}: {Value: 2},
				{TargetID: 8, Counter: "a"}: {Value: 3},
			}
			if len(got) != len(want) {
				t.Errorf("LastValues = %v, want %v", got, want)
			}
			for k, w := range want {
				if g, ok := got[k]; !ok || g.Mixed != w.Mixed || !w.Mixed && g.Value != w.Value {
					t.Errorf("%+v: %+v, want %+v", k, g, w)
				}
			}
			if other, _ := s.LastValues(ctx, "other", ids); len(other) != 0 {
				t.Errorf("another service's: %v", other)
			}
		})
	}
}
