package statestore

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMigrationPacksCounters: a store of schema version 6 with history (a
// row a counter of each write and of each last value) opens, migrates to
// the packed columns, and reads the same history, last values and
// pending writes; a last value whose write is not found keeps its run,
// time and file.
func TestMigrationPacksCounters(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := openAt(t, where, 6)
			t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
			run1, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Command: "eepipe apply v1.xlsx", Service: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			run2, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), User: "bob", Host: "cron", Command: "eepipe apply v2.xlsx", Service: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := s.db.ExecContext(ctx, s.q(q), args...); err != nil {
					t.Fatal(err)
				}
			}
			type counter struct {
				name   string
				before *int64
				after  int64
				sent   bool
			}
			write := func(run int64, target int64, at time.Time, file, outcome string, cs ...counter) int64 {
				t.Helper()
				var id int64
				err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
					year_number, financial_year, target_type, file, outcome, at) VALUES (?, 'acme', 7, 'P', 70, ?, 1, '2025/26', 'all_employees', ?, ?, ?)
					RETURNING id`), run, target, file, outcome, fmtTime(at)).Scan(&id)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					var before any
					if c.before != nil {
						before = *c.before
					}
					exec(`INSERT INTO eepipe_write_counters (write_id, counter, before_value, after_value, sent) VALUES (?, ?, ?, ?, ?)`,
						id, c.name, before, c.after, boolInt(c.sent))
				}
				return id
			}
			last := func(target int64, name string, value, run int64, at time.Time, file string) {
				exec(`INSERT INTO eepipe_last_applied (service, account, target_id, counter, value, run_id, at, file) VALUES ('svc', 'acme', ?, ?, ?, ?, ?, ?)`,
					target, name, value, run, fmtTime(at), file)
			}
			t1, t2 := t0.Add(time.Minute), t0.Add(time.Hour+time.Minute)
			write(run1, 700, t1, "v1.xlsx", "ok", counter{"zeta", i64(1), 5, true}, counter{"alpha \"q\"", i64(2), 2, false})
			write(run2, 700, t2, "v2.xlsx", "ok", counter{"zeta", i64(5), 6, true})
			pending := write(run2, 701, t2, "v2.xlsx", "pending", counter{"c", nil, 3, true})
			last(700, "zeta", 6, run2, t2, "v2.xlsx")
			last(700, "alpha \"q\"", 2, run1, t1, "v1.xlsx")
			last(702, "d", 9, run1, t0, "old.xlsx") // no write of it on record
			s.Close()

			s = open(t, where)
			var v int
			if err := s.db.QueryRow(`SELECT MAX(version) FROM eepipe_schema`).Scan(&v); err != nil || v != SchemaVersion() {
				t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
			}
			if name == "sqlite" {
				var ddl string
				if err := s.db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'eepipe_writes'`).Scan(&ddl); err != nil || strings.Contains(ddl, "AUTOINCREMENT") {
					t.Errorf("the writes' table after the migration: %s (%v), want no AUTOINCREMENT", ddl, err)
				}
			}
			hist, err := s.History(ctx, pipeline.HistoryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			type entry struct {
				run     int64
				target  int64
				counter string
				before  *int64
				after   int64
				sent    bool
				outcome string
				at      time.Time
			}
			var got []entry
			for _, h := range hist {
				got = append(got, entry{h.Run.ID, h.TargetID, h.Counter, h.Before, h.After, h.Sent, h.Outcome, h.At})
			}
			want := []entry{
				{run1, 700, "zeta", i64(1), 5, true, "ok", t1},
				{run1, 700, "alpha \"q\"", i64(2), 2, false, "ok", t1},
				{run2, 700, "zeta", i64(5), 6, true, "ok", t2},
				{run2, 701, "c", nil, 3, true, "pending", t2},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("history after the migration:\n got %+v\nwant %+v", got, want)
			}
			if h, err := s.History(ctx, pipeline.HistoryQuery{Counter: "zeta", Limit: 1}); err != nil || len(h) != 1 || h[0].After != 5 {
				t.Errorf("history of counter zeta, limit 1: %+v, %v", h, err)
			}
			if runs, err := s.Runs(ctx, pipeline.HistoryQuery{Counter: "alpha \"q\""}); err != nil || len(runs) != 1 || runs[0].ID != run1 {
				t.Errorf("runs that wrote counter alpha: %+v, %v", runs, err)
			}
			lw, err := s.LastWrites(ctx, "svc", "acme", []int64{700, 701, 702})
			if err != nil {
				t.Fatal(err)
			}
			wantLW := map[pipeline.CounterKey]pipeline.LastWrite{
				{TargetID: 700, Counter: "zeta"}:        {Value: 6, RunID: run2, At: t2, File: "v2.xlsx"},
				{TargetID: 700, Counter: "alpha \"q\""}: {Value: 2, RunID: run1, At: t1, File: "v1.xlsx"},
				{TargetID: 702, Counter: "d"}:           {Value: 9, RunID: run1, At: t0, File: "old.xlsx"},
			}
			if !reflect.DeepEqual(lw, wantLW) {
				t.Errorf("last writes after the migration:\n got %+v\nwant %+v", lw, wantLW)
			}
			lv, err := s.LastValues(ctx, "svc", []int64{700, 702})
			if err != nil || len(lv) != 3 || lv[pipeline.CounterKey{TargetID: 700, Counter: "zeta"}].Value != 6 {
				t.Errorf("last values after the migration: %+v, %v", lv, err)
			}
			pw, err := s.PendingWrites(ctx, "svc", []int64{701})
			if err != nil || len(pw) != 1 || pw[0].Write.ID != pending || pw[0].RunID != run2 ||
				!reflect.DeepEqual(pw[0].Write.Counters, []pipeline.CounterWrite{{Counter: "c", After: 3, Sent: true}}) {
				t.Errorf("pending writes after the migration: %+v, %v", pw, err)
			}
			// A new run's write merges into the last values carried over.
			run3, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t2.Add(time.Hour), Service: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			t3 := t2.Add(time.Hour + time.Minute)
			if err := s.RecordWrite(ctx, run3, pipeline.TargetWrite{Account: "acme", PlanID: 7, TargetID: 702, Outcome: "ok", At: t3, File: "v3.xlsx",
				Counters: []pipeline.CounterWrite{{Counter: "e", After: 4, Sent: true}}}); err != nil {
				t.Fatal(err)
			}
			if h, err := s.History(ctx, pipeline.HistoryQuery{Counter: "e"}); err != nil || len(h) != 1 || h[0].Run.ID != run3 {
				t.Errorf("history of the new write: %+v, %v", h, err)
			}
			if p, err := s.PendingWrites(ctx, "svc", []int64{701}); err != nil || len(p) != 1 || p[0].Write.ID != pending {
				t.Errorf("pending writes after a new write: %+v, %v", p, err)
			}
			lw, err = s.LastWrites(ctx, "svc", "acme", []int64{702})
			if err != nil || !reflect.DeepEqual(lw, map[pipeline.CounterKey]pipeline.LastWrite{
				{TargetID: 702, Counter: "d"}: {Value: 9, RunID: run1, At: t0, File: "old.xlsx"},
				{TargetID: 702, Counter: "e"}: {Value: 4, RunID: run3, At: t3, File: "v3.xlsx"},
			}) {
				t.Errorf("last writes after a new write: %+v, %v", lw, err)
			}
		})
	}
}

// TestRunSignerRecorded: a store of schema version 9 (before runs named
// their signer) with a run migrates, the old run naming no signer; a run
// recorded with a signer gives it back in its record and in the history
// of its writes.
func TestRunSignerRecorded(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			old := openAt(t, where, 9)
			t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			if _, err := old.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Command: "eepipe apply v1.xlsx", Service: "svc"}); err != nil {
				t.Fatal(err)
			}
			old.Close()
			s := open(t, where)
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), User: "bob", Host: "cron", Command: "eepipe apply set.json",
				Service: "svc", Accounts: []string{"acme"}, ChangeSet: "abc", Signer: "Thandi Nkosi"})
			if err != nil {
				t.Fatal(err)
			}
			w := pipeline.TargetWrite{Account: "acme", PlanID: 7, PlanName: "P", MilestoneID: 70, TargetID: 700, YearNumber: 1,
				FinancialYear: "2025/26", TargetType: pipeline.TargetAll, File: "set.json", Outcome: "ok", At: t0.Add(time.Hour),
				Counters: []pipeline.CounterWrite{{Counter: "number_of_african_male_top_managers", After: 5, Sent: true}}}
			if err := s.RecordWrite(ctx, run, w); err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx, pipeline.HistoryQuery{})
			if err != nil || len(runs) != 2 {
				t.Fatalf("Runs = %+v, %v", runs, err)
			}
			for _, r := range runs {
				if want := map[bool]string{true: "Thandi Nkosi"}[r.ID == run]; r.Signer != want {
					t.Errorf("run %d (%s) names the signer %q, want %q", r.ID, r.Command, r.Signer, want)
				}
			}
			hist, err := s.History(ctx, pipeline.HistoryQuery{})
			if err != nil || len(hist) != 1 || hist[0].Run.Signer != "Thandi Nkosi" {
				t.Fatalf("History = %+v, %v", hist, err)
			}
		})
	}
}
