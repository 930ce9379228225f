package statestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestHistoryAccountFilterBeyondASCII: the history's account filters
// (runs, target writes, plan requests) match an account by the rule
// routing and locks use (pipeline.SameAccount), beyond ASCII too: runs of
// "ÉLAN" are found by "élan", "ÉLAN" and " Élan\u00a0", not those of
// "elan" nor of "umoya" (SQLite's LOWER folds ASCII only: "Élan"), and
// runs of "Οδός" by "ΟΔΌΣ" (PostgreSQL's lower keeps the final sigma); in
// a new store, and in a store of schema version 7 (its records written
// before the spellings table) once migrated.
func TestHistoryAccountFilterBeyondASCII(t *testing.T) {
	for name, loc := range backends(t) {
		for _, from := range []int{0, 7} {
			label := name + "/new"
			if from != 0 {
				label = name + "/from-7"
			}
			t.Run(label, func(t *testing.T) {
				ctx := context.Background()
				where := loc(t)
				var s *Store
				if from != 0 {
					s = openAt(t, where, from)
				} else {
					s = open(t, where)
				}
				t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
				runOf := map[string]int64{}
				exec := func(q string, args ...any) {
					t.Helper()
					if _, err := s.db.ExecContext(ctx, s.q(q), args...); err != nil {
						t.Fatal(err)
					}
				}
				var counterA int64
				if from != 0 {
					if err := s.db.QueryRowContext(ctx, `INSERT INTO eepipe_counter_names (name) VALUES ('a') RETURNING id`).Scan(&counterA); err != nil {
						t.Fatal(err)
					}
				}
				for i, acct := range []string{"ÉLAN", "elan", "umoya", "Οδός"} {
					if from != 0 {
						// As eepipe of schema version 7 recorded them.
						var run int64
						if err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO eepipe_runs (started, usr, host, command, service, status)
							VALUES (?, 'ann', 'lap', 'eepipe apply', 'svc', 'ok') RETURNING id`), fmtTime(t0.Add(time.Duration(i)*time.Minute))).Scan(&run); err != nil {
							t.Fatal(err)
						}
						runOf[acct] = run
						exec(`INSERT INTO eepipe_run_accounts (run_id, account) VALUES (?, ?)`, run, acct)
						exec(`INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id, year_number, financial_year,
							target_type, file, outcome, at, counters) VALUES (?, ?, ?, 'P', 70, ?, 1, '2025/26', 'all_employees', 'v1.xlsx', 'ok', ?, ?)`,
							run, acct, 10+i, 700+i, fmtTime(t0.Add(time.Second)), fmt.Sprintf("[[%d,1,5,1]]", counterA))
						exec(`INSERT INTO eepipe_plan_writes (run_id, account, plan_id, plan_name, action, outcome, at) VALUES (?, ?, ?, 'P', 'create', 'ok', ?)`,
							run, acct, 10+i, fmtTime(t0))
						continue
					}
					run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Duration(i) * time.Minute), User: "ann", Host: "lap",
						Command: "eepipe apply", Service: "svc", Accounts: []string{acct}})
					if err != nil {
						t.Fatal(err)
					}
					runOf[acct] = run
					w := pipeline.TargetWrite{Account: acct, PlanID: int64(10 + i), PlanName: "P", MilestoneID: 70, TargetID: int64(700 + i), YearNumber: 1,
						TargetType: "all_employees", File: "v1.xlsx", Outcome: "ok", At: t0.Add(time.Second),
						Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(1), After: 5, Sent: true}}}
					if err := s.RecordWrite(ctx, run, w); err != nil {
						t.Fatal(err)
					}
					if err := s.RecordPlanWrite(ctx, run, pipeline.PlanWrite{Account: acct, PlanID: int64(10 + i), PlanName: "P", Action: "create", Outcome: "ok", At: t0}); err != nil {
						t.Fatal(err)
					}
					if err := s.FinishRun(ctx, run, "ok", t0.Add(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
				if from != 0 {
					s.Close()
					s = open(t, where)
				}
				for _, c := range []struct{ stored, query string }{
					{"ÉLAN", "élan"}, {"ÉLAN", "ÉLAN"}, {"ÉLAN", " Élan\u00a0"},
					{"Οδός", "ΟΔΌΣ"}, // a final sigma: PostgreSQL's lower() keeps it, the rule does not
					{"umoya", " UMOYA "},
				} {
					q, want := c.query, runOf[c.stored]
					runs, err := s.Runs(ctx, pipeline.HistoryQuery{Account: q})
					if err != nil || len(runs) != 1 || runs[0].ID != want {
						t.Errorf("runs of account %q: %+v, %v; want run %d only", q, runs, err, want)
					}
					hist, err := s.History(ctx, pipeline.HistoryQuery{Account: q})
					if err != nil || len(hist) != 1 || hist[0].Run.ID != want || hist[0].Account != c.stored {
						t.Errorf("target writes of account %q: %+v, %v; want the one of run %d", q, hist, err, want)
					}
					pw, err := s.PlanWrites(ctx, pipeline.HistoryQuery{Account: q})
					if err != nil || len(pw) != 1 || pw[0].Account != c.stored {
						t.Errorf("plan requests of account %q: %+v, %v; want the one of %s", q, pw, err, c.stored)
					}
				}
			})
		}
	}
}
