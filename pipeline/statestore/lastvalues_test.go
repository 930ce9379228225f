package statestore

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
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
			want := map[pipeline.CounterKey]diff.LastValue{
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

// TestMigrationLastValuesRowid: a store of schema version 8 with last
// values (two accounts' rows for one target) opens, migrates to version
// 9 and reads the same last values, runs and pending writes; on SQLite
// the table then has row ids (no longer WITHOUT ROWID), and a later write
// still merges into a target's row.
func TestMigrationLastValuesRowid(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := openAt(t, where, 8)
			t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
			record := func(s *Store, account string, at time.Time, ws ...pipeline.TargetWrite) int64 {
				t.Helper()
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: at, Service: "svc", Accounts: []string{account}})
				if err != nil {
					t.Fatal(err)
				}
				for i := range ws {
					ws[i].Account, ws[i].At, ws[i].File = account, at, account+".xlsx"
				}
				if err := s.RecordWrites(ctx, run, ws); err != nil {
					t.Fatal(err)
				}
				return run
			}
			run1 := record(s, "default", t0,
				pipeline.TargetWrite{TargetID: 7, Outcome: "ok", Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(1), After: 5, Sent: true}, {Counter: "b", Before: i64(2), After: 2}}},
				pipeline.TargetWrite{TargetID: 8, Outcome: "ok", Counters: []pipeline.CounterWrite{{Counter: "a", After: -3}}})
			run2 := record(s, "acme-prod", t0.Add(time.Hour),
				pipeline.TargetWrite{TargetID: 7, Outcome: "ok", Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(5), After: 6, Sent: true}}})
			pending, err := s.RecordPending(ctx, run2, []pipeline.TargetWrite{{Account: "acme-prod", TargetID: 8, At: t0.Add(time.Hour),
				Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(-3), After: 4, Sent: true}}}})
			if err != nil {
				t.Fatal(err)
			}
			read := func(s *Store) (map[pipeline.CounterKey]pipeline.LastWrite, map[pipeline.CounterKey]diff.LastValue, []pipeline.PendingWrite) {
				t.Helper()
				lw, err := s.LastWrites(ctx, "svc", "default", []int64{7, 8, 9})
				if err != nil {
					t.Fatal(err)
				}
				lv, err := s.LastValues(ctx, "svc", []int64{7, 8, 9})
				if err != nil {
					t.Fatal(err)
				}
				pw, err := s.PendingWrites(ctx, "svc", []int64{7, 8, 9})
				if err != nil {
					t.Fatal(err)
				}
				return lw, lv, pw
			}
			lw0, lv0, pw0 := read(s)
			want := map[pipeline.CounterKey]pipeline.LastWrite{
				{TargetID: 7, Counter: "a"}: {Value: 6, RunID: run2, At: t0.Add(time.Hour), File: "acme-prod.xlsx"},
				{TargetID: 7, Counter: "b"}: {Value: 2, RunID: run1, At: t0, File: "default.xlsx"},
				{TargetID: 8, Counter: "a"}: {Value: -3, RunID: run1, At: t0, File: "default.xlsx"},
			}
			if !reflect.DeepEqual(lw0, want) || len(lv0) != 3 || !lv0[pipeline.CounterKey{TargetID: 7, Counter: "a"}].Mixed ||
				len(pw0) != 1 || pw0[0].Write.ID != pending[0] {
				t.Fatalf("before the migration: %+v, %+v, %+v", lw0, lv0, pw0)
			}
			s.Close()

			s = open(t, where)
			var v int
			if err := s.db.QueryRow(`SELECT MAX(version) FROM eepipe_schema`).Scan(&v); err != nil || v != SchemaVersion() {
				t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
			}
			if name == "sqlite" {
				var ddl string
				if err := s.db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'eepipe_last_values'`).Scan(&ddl); err != nil ||
					strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
					t.Errorf("the last values' table after the migration: %s (%v), want row ids", ddl, err)
				}
			}
			if lw, lv, pw := read(s); !reflect.DeepEqual(lw, lw0) || !reflect.DeepEqual(lv, lv0) || !reflect.DeepEqual(pw, pw0) {
				t.Errorf("after the migration: %+v, %+v, %+v; want %+v, %+v, %+v", lw, lv, pw, lw0, lv0, pw0)
			}
			run3 := record(s, "default", t0.Add(2*time.Hour),
				pipeline.TargetWrite{TargetID: 7, Outcome: "ok", Counters: []pipeline.CounterWrite{{Counter: "c", Before: i64(0), After: 9, Sent: true}}})
			lw, _, _ := read(s)
			want[pipeline.CounterKey{TargetID: 7, Counter: "c"}] = pipeline.LastWrite{Value: 9, RunID: run3, At: t0.Add(2 * time.Hour), File: "default.xlsx"}
			if !reflect.DeepEqual(lw, want) {
				t.Errorf("a write after the migration: %+v, want %+v", lw, want)
			}
		})
	}
}
