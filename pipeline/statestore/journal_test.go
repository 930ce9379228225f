package statestore

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestJournalConcurrentWritesAndPending: 64 writers record a target write
// each at once, as apply does (pending before the request, the answer
// after); the answered ones and the failed ones are on record with their
// counters, the last values are those of the successful writes, and the
// writes left without an answer are listed by PendingWrites until a later
// run resolves them: the adopted one counts as applied by that run, the
// other does not, and neither is pending any more.
func TestJournalConcurrentWritesAndPending(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, Service: "https://svc", Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			const n = 64
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w := pipeline.TargetWrite{Account: "acme", PlanID: 1, TargetID: int64(1000 + i), TargetType: "all_employees", At: t0.Add(time.Second),
						Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(0), After: int64(i), Sent: true}, {Counter: "b", After: 7}}}
					ids, err := s.RecordPending(ctx, run, []pipeline.TargetWrite{w})
					if err != nil {
						errs <- err
						return
					}
					if i%8 == 7 {
						return // the answer never recorded: killed in the window
					}
					w.ID, w.Outcome = ids[0], "ok"
					if i%8 == 6 {
						w.Outcome = "HTTP 500"
					}
					errs <- s.RecordWrite(ctx, run, w)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(1000 + i)
			}
			last, err := s.LastWrites(ctx, "https://svc", "acme", ids)
			if err != nil {
				t.Fatal(err)
			}
			hist, err := s.History(ctx, pipeline.HistoryQuery{Counter: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != n {
				t.Fatalf("%d writes on record, want %d", len(hist), n)
			}
			for _, h := range hist {
				i := h.TargetID - 1000
				want := map[int64]string{6: "HTTP 500", 7: pipeline.OutcomePending}[i%8]
				if want == "" {
					want = "ok"
				}
				lw, applied := last[pipeline.CounterKey{TargetID: h.TargetID, Counter: "a"}]
				if h.Outcome != want || h.After != i || applied != (want == "ok") || applied && lw.Value != i {
					t.Errorf("target %d: outcome %q after %d, last %+v (%t); want %q", h.TargetID, h.Outcome, h.After, lw, applied, want)
				}
			}
			pend, err := s.PendingWrites(ctx, "https://svc", ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(pend) != n/8 {
				t.Fatalf("%d pending writes, want %d: %+v", len(pend), n/8, pend)
			}
			for _, p := range pend {
				if p.RunID != run || len(p.Write.Counters) != 2 || p.Write.ID == 0 || !p.Write.At.Equal(t0.Add(time.Second)) {
					t.Errorf("pending write %+v", p)
				}
			}
			if other, err := s.PendingWrites(ctx, "https://other", ids); err != nil || len(other) != 0 {
				t.Errorf("pending writes of another service: %v, %v", other, err)
			}

			// A later run resolves two of them: one adopted, one not.
			run2, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), Service: "https://svc", Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			adopt, lost := pend[0].Write, pend[1].Write
			adopt.Outcome = pipeline.OutcomeAdopted + " from run 1: test"
			lost.Outcome = "not applied: test"
			if err := s.ResolvePending(ctx, run2, []pipeline.TargetWrite{adopt, lost}); err != nil {
				t.Fatal(err)
			}
			left, err := s.PendingWrites(ctx, "https://svc", ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != n/8-2 {
				t.Errorf("%d pending after two were resolved, want %d", len(left), n/8-2)
			}
			last, err = s.LastWrites(ctx, "https://svc", "acme", []int64{adopt.TargetID, lost.TargetID})
			if err != nil {
				t.Fatal(err)
			}
			if lw, ok := last[pipeline.CounterKey{TargetID: adopt.TargetID, Counter: "a"}]; !ok || lw.RunID != run2 || lw.Value != adopt.Counters[0].After {
				t.Errorf("adopted write: last %+v (%t), want value %d by run %d", lw, ok, adopt.Counters[0].After, run2)
			}
			if lw, ok := last[pipeline.CounterKey{TargetID: lost.TargetID, Counter: "a"}]; ok {
				t.Errorf("a write not adopted counts as applied: %+v", lw)
			}
			hist, err = s.History(ctx, pipeline.HistoryQuery{Counter: "a"})
			if err != nil {
				t.Fatal(err)
			}
			var outcomes []string
			for _, h := range hist {
				if h.TargetID == adopt.TargetID || h.TargetID == lost.TargetID {
					outcomes = append(outcomes, fmt.Sprintf("run %d target %d: %s", h.Run.ID, h.TargetID-1000, h.Outcome))
				}
			}
			got := strings.Join(outcomes, "\n")
			want := fmt.Sprintf("run %d target %d: adopted from run 1: test (found by run %d)\nrun %d target %d: not applied: test (found by run %d)\nrun %d target %d: adopted from run 1: test",
				run, adopt.TargetID-1000, run2, run, lost.TargetID-1000, run2, run2, adopt.TargetID-1000)
			if got != want {
				t.Errorf("history:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestJournalFailureFailsOnlyItsRecord: a record that fails (an unknown
// run) fails alone; the records committed with it in a batch stand.
func TestJournalFailureFailsOnlyItsRecord(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc"})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			bad := make([]error, 32)
			for i := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := run
					if i%4 == 0 {
						r = run + 1000 // no such run
					}
					bad[i] = s.RecordWrite(ctx, r, pipeline.TargetWrite{Account: "acme", TargetID: int64(i + 1), Outcome: "ok",
						Counters: []pipeline.CounterWrite{{Counter: "a", After: 1, Sent: true}}})
				}()
			}
			wg.Wait()
			for i, err := range bad {
				if (err != nil) != (i%4 == 0) {
					t.Errorf("write %d: %v", i, err)
				}
			}
			hist, err := s.History(ctx, pipeline.HistoryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 24 {
				t.Errorf("%d writes on record, want 24", len(hist))
			}
		})
	}
}

// TestJournalPendingIDsAreTheirWrites: plans' pending writes recorded at
// once, in batches where some fail (an unknown run), each get the ids of
// their own rows, in order, and their answers land on them.
func TestJournalPendingIDsAreTheirWrites(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc"})
			if err != nil {
				t.Fatal(err)
			}
			const plans, targets = 24, 10
			ids := make([][]int64, plans)
			errs := make([]error, plans)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for p := range plans {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := run
					if p%5 == 2 {
						r = run + 1000 // no such run
					}
					ws := make([]pipeline.TargetWrite, targets)
					for i := range ws {
						ws[i] = pipeline.TargetWrite{Account: "acme", PlanID: int64(p + 1), TargetID: int64(100*p + i),
							Counters: []pipeline.CounterWrite{{Counter: "a", After: int64(i), Sent: true}}}
					}
					<-start
					ids[p], errs[p] = s.RecordPending(ctx, r, ws)
				}()
			}
			close(start)
			wg.Wait()
			seen := map[int64]bool{}
			for p := range plans {
				if (errs[p] != nil) != (p%5 == 2) {
					t.Fatalf("plan %d: %v", p, errs[p])
				}
				if errs[p] != nil {
					continue
				}
				if len(ids[p]) != targets {
					t.Fatalf("plan %d: %d ids", p, len(ids[p]))
				}
				for i, id := range ids[p] {
					if seen[id] {
						t.Fatalf("plan %d: id %d given twice", p, id)
					}
					seen[id] = true
					var target, plan int64
					if err := s.db.QueryRowContext(ctx, rebind(s.dialect, `SELECT target_id, plan_id FROM eepipe_writes WHERE id = ?`), id).Scan(&target, &plan); err != nil {
						t.Fatalf("plan %d write %d (id %d): %v", p, i, id, err)
					}
					if target != int64(100*p+i) || plan != int64(p+1) {
						t.Errorf("plan %d write %d: id %d is target %d of plan %d", p, i, id, target, plan)
					}
				}
			}
			answerAll(t, s, run, ids, targets)
		})
	}
}

// answerAll records the answers of the pending writes ids (nil for a
// plan that failed) and checks that every write is on record with its
// answer and nothing is left pending.
func answerAll(t *testing.T, s *Store, run int64, ids [][]int64, targets int) {
	t.Helper()
	ctx := context.Background()
	want := 0
	for p, pids := range ids {
		if pids == nil {
			continue
		}
		ws := make([]pipeline.TargetWrite, len(pids))
		for i, id := range pids {
			ws[i] = pipeline.TargetWrite{ID: id, Account: "acme", PlanID: int64(p + 1), TargetID: int64(100*p + i), Outcome: "ok",
				Counters: []pipeline.CounterWrite{{Counter: "a", After: int64(i), Sent: true}}}
		}
		if err := s.RecordWrites(ctx, run, ws); err != nil {
			t.Fatal(err)
		}
		want += len(pids)
	}
	hist, err := s.History(ctx, pipeline.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != want {
		t.Errorf("%d writes on record, want %d", len(hist), want)
	}
	for _, h := range hist {
		if h.Outcome != "ok" || h.After != h.TargetID%100 {
			t.Errorf("target %d: %q, after %d", h.TargetID, h.Outcome, h.After)
		}
	}
}

// TestJournalIDsAtTheirEnd: once an SQLite store's largest write id is
// the largest integer, SQLite picks the ids of new rows at random; the
// journal then takes the ids SQLite gives, and each write still gets its
// own.
func TestJournalIDsAtTheirEnd(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.RecordPending(ctx, run, []pipeline.TargetWrite{{Account: "acme", PlanID: 1, TargetID: 0,
		Counters: []pipeline.CounterWrite{{Counter: "a", After: 0, Sent: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE eepipe_writes SET id = ? WHERE id = ?`, int64(math.MaxInt64-3), first[0]); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path) // a journal that reads the largest id
	ids := [][]int64{{math.MaxInt64 - 3}}
	for p := 1; p < 3; p++ {
		ws := make([]pipeline.TargetWrite, 10)
		for i := range ws {
			ws[i] = pipeline.TargetWrite{Account: "acme", PlanID: int64(p + 1), TargetID: int64(100*p + i),
				Counters: []pipeline.CounterWrite{{Counter: "a", After: int64(i), Sent: true}}}
		}
		pids, err := s.RecordPending(ctx, run, ws)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pids)
	}
	for p, pids := range ids {
		for i, id := range pids {
			var target int64
			if err := s.db.QueryRowContext(ctx, `SELECT target_id FROM eepipe_writes WHERE id = ?`, id).Scan(&target); err != nil || target != int64(100*p+i) {
				t.Errorf("plan %d write %d: id %d is target %d (%v)", p, i, id, target, err)
			}
		}
	}
	if ids[1][2] != math.MaxInt64 {
		t.Errorf("ids %v: the third is not the largest integer", ids[1])
	}
	answerAll(t, s, run, ids, 10)
}

// TestJournalIDsWithAnotherProgram: two stores on one SQLite file, as two
// programs recording at once, each giving ids to its new writes from the
// largest it read: a write the other recorded meanwhile takes the id one
// would give next, the transaction fails and is tried again; every write
// gets an id of its own, its row's. The second records more writes a plan
// than the first, so that the first's retry clashes again unless it reads
// the largest id afresh.
func TestJournalIDsWithAnotherProgram(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	stores := []*Store{open(t, path), open(t, path)}
	var runs []int64
	for _, s := range stores {
		run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc"})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	sizes := []int{10, 25}
	want := 0
	for p := range 8 {
		k := p % 2
		ws := make([]pipeline.TargetWrite, sizes[k])
		want += len(ws)
		for i := range ws {
			ws[i] = pipeline.TargetWrite{Account: "acme", PlanID: int64(p + 1), TargetID: int64(100*p + i),
				Counters: []pipeline.CounterWrite{{Counter: "a", After: int64(i), Sent: true}}}
		}
		ids, err := stores[k].RecordPending(ctx, runs[k], ws)
		if err != nil {
			t.Fatalf("plan %d: %v", p, err)
		}
		for i, id := range ids {
			var target int64
			if err := stores[0].db.QueryRowContext(ctx, `SELECT target_id FROM eepipe_writes WHERE id = ?`, id).Scan(&target); err != nil || target != int64(100*p+i) {
				t.Errorf("plan %d write %d: id %d is target %d (%v)", p, i, id, target, err)
			}
		}
	}
	var n int
	if err := stores[0].db.QueryRowContext(ctx, `SELECT COUNT(*) FROM eepipe_writes`).Scan(&n); err != nil || n != want {
		t.Errorf("%d writes on record (%v), want %d", n, err, want)
	}
}

// TestLingerFor: the SQLite journal waits for more records only for a
// batch someone waits for that records something, while records come fast
// and other plans of the run can add theirs; never on PostgreSQL, for a
// run of one plan at a time, once every plan recording at once is in, after
// a quiet spell, or for the end of a run or a sync.
func TestLingerFor(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	pending := &op{kind: opWrites}
	answers := &op{kind: opWrites, later: true}
	finish := &op{kind: opFinish}
	sync := &op{kind: opSync}
	full := make([]*op, lingerBatch)
	for i := range full {
		full[i] = pending
	}
	for _, c := range []struct {
		name      string
		d         dialect
		batch     []*op
		committed time.Time
		writers   int
		want      time.Duration
	}{
		{"pending writes, a commit just ended", dialectSQLite, []*op{pending}, now.Add(-300 * time.Microsecond), 8, groupLinger},
		{"pending writes with answers", dialectSQLite, []*op{answers, pending}, now.Add(-time.Millisecond), 8, groupLinger},
		{"one plan at a time, a fast service", dialectSQLite, []*op{answers, pending}, now.Add(-300 * time.Microsecond), 1, 0},
		{"writers not told", dialectSQLite, []*op{pending}, now.Add(-300 * time.Microsecond), 0, 0},
		{"two plans at a time, both in", dialectSQLite, []*op{pending, answers, pending}, now.Add(-300 * time.Microsecond), 2, 0},
		{"two plans at a time, one in", dialectSQLite, []*op{answers, pending}, now.Add(-300 * time.Microsecond), 2, groupLinger},
		{"after a quiet spell", dialectSQLite, []*op{pending}, now.Add(-busyWithin), 8, 0},
		{"first commit of the journal", dialectSQLite, []*op{pending}, time.Time{}, 8, 0},
		{"PostgreSQL", dialectPostgres, []*op{pending}, now.Add(-300 * time.Microsecond), 8, 0},
		{"a full batch", dialectSQLite, full, now.Add(-300 * time.Microsecond), 32, 0},
		{"nothing waited for", dialectSQLite, []*op{answers}, now.Add(-300 * time.Microsecond), 8, 0},
		{"the end of a run", dialectSQLite, []*op{finish}, now.Add(-300 * time.Microsecond), 8, 0},
		{"a read's sync", dialectSQLite, []*op{sync}, now.Add(-300 * time.Microsecond), 8, 0},
	} {
		if got := lingerFor(c.d, c.batch, c.committed, c.writers, now); got != c.want {
			t.Errorf("%s: linger %v, want %v", c.name, got, c.want)
		}
	}
}
