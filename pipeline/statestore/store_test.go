package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pace/pacetest"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// testOptions open a store in the tests: another run's upgrade of a
// PostgreSQL store's schema is waited for up to 10 seconds.
var testOptions = Options{LockWait: 10 * time.Second}

// backends returns the locations to test: a fresh SQLite file always, and
// a fresh PostgreSQL database when a server is available.
func backends(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") },
		"postgres": func(t *testing.T) string { return statestoretest.PostgresURL(t) },
	}
}

func open(t *testing.T, loc string) *Store {
	t.Helper()
	s, err := OpenWith(context.Background(), loc, testOptions)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func i64(v int64) *int64 { return &v }

// openAt opens a new store at loc with the migrations up to version only,
// as an older eepipe made it.
func openAt(t *testing.T, loc string, version int) *Store {
	t.Helper()
	all := migrations
	migrations = migrations[:version]
	defer func() { migrations = all }()
	return open(t, loc)
}

func TestStoreRecordsRunsAndLastWrites(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := open(t, where)
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			run1, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Command: "eepipe apply v1.xlsx",
				Service: "https://svc", Files: []pipeline.InputFile{{Path: "v1.xlsx", SHA256: "ab"}}, Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			w := pipeline.TargetWrite{Account: "acme", PlanID: 7, PlanName: "P", MilestoneID: 70, TargetID: 700, YearNumber: 1,
				TargetType: "all_employees", File: "v1.xlsx", Outcome: "ok", At: t0.Add(time.Second),
				Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(1), After: 5, Sent: true}, {Counter: "b", Before: i64(2), After: 2}}}
			if err := s.RecordWrite(ctx, run1, w); err != nil {
				t.Fatal(err)
			}
			failed := w
			failed.TargetID, failed.Outcome = 701, "HTTP 500"
			if err := s.RecordWrite(ctx, run1, failed); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, run1, "ok", t0.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			run2, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), User: "bob", Host: "cron", Service: "https://svc", Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			w2 := w
			w2.Counters = []pipeline.CounterWrite{{Counter: "a", Before: i64(5), After: 9, Sent: true}}
			w2.At = t0.Add(time.Hour)
			if err := s.RecordWrite(ctx, run2, w2); err != nil {
				t.Fatal(err)
			}

			last, err := s.LastWrites(ctx, "https://svc", "acme", []int64{700, 701})
			if err != nil {
				t.Fatal(err)
			}
			if got := last[pipeline.CounterKey{TargetID: 700, Counter: "a"}]; got.Value != 9 || got.RunID != run2 {
				t.Errorf("last a = %+v, want 9 by run %d", got, run2)
			}
			if got := last[pipeline.CounterKey{TargetID: 700, Counter: "b"}]; got.Value != 2 || got.RunID != run1 || got.File != "v1.xlsx" {
				t.Errorf("last b = %+v, want 2 by run %d from v1.xlsx", got, run1)
			}
			if _, ok := last[pipeline.CounterKey{TargetID: 701, Counter: "a"}]; ok {
				t.Errorf("a failed write counts as applied")
			}
			if other, _ := s.LastWrites(ctx, "https://other", "acme", []int64{700}); len(other) != 0 {
				t.Errorf("another service sees history: %v", other)
			}
			// A target id is the service's: a run that calls the account by
			// another name (another configuration) sees the target's history.
			if other, _ := s.LastWrites(ctx, "https://svc", "acme-prod", []int64{700}); other[pipeline.CounterKey{TargetID: 700, Counter: "a"}].Value != 9 {
				t.Errorf("another name of the account does not see the target's history: %v", other)
			}
			if none, _ := s.LastWrites(ctx, "https://svc", "acme", []int64{999}); len(none) != 0 {
				t.Errorf("another target sees history: %v", none)
			}

			h, err := s.History(ctx, pipeline.HistoryQuery{Counter: "a", PlanID: 7})
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != 3 || h[0].After != 5 || *h[0].Before != 1 || h[2].After != 9 || h[2].Run.User != "bob" || h[1].Outcome != "HTTP 500" {
				t.Errorf("history = %+v", h)
			}
			runs, err := s.Runs(ctx, pipeline.HistoryQuery{Account: "acme", Since: t0.Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].ID != run2 || runs[0].Status != "running" {
				t.Errorf("runs since = %+v", runs)
			}
			all, _ := s.Runs(ctx, pipeline.HistoryQuery{})
			if len(all) != 2 || all[0].Files[0].SHA256 != "ab" || all[0].Accounts[0] != "acme" || all[0].Finished.IsZero() {
				t.Errorf("runs = %+v", all)
			}

			// Reopening runs no migration twice and keeps the data.
			s.Close()
			s2 := open(t, where)
			if h, _ := s2.History(ctx, pipeline.HistoryQuery{}); len(h) != 5 {
				t.Errorf("after reopening: %d history rows, want 5", len(h))
			}
		})
	}
}

// TestStoreChangeSetAppliedByItsWrites: a change set counts as applied
// only when a run carried it to its end (status ok); runs that stopped or
// wrote part of it are its progress.
func TestStoreChangeSetAppliedByItsWrites(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			r := pipeline.RunRecord{Started: time.Now(), User: "u", Host: "h", Service: "svc", ChangeSet: "deadbeef"}
			applied := func() *pipeline.RunRecord {
				t.Helper()
				got, err := s.ChangeSetRun(ctx, "deadbeef")
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			progress := func() pipeline.SavedProgress {
				t.Helper()
				p, err := s.ChangeSetProgress(ctx, "deadbeef")
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			// A run stopped before its first write.
			stopped, err := s.BeginRun(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, stopped, "stopped", time.Now()); err != nil {
				t.Fatal(err)
			}
			if got := applied(); got != nil {
				t.Fatalf("a run that wrote nothing applied the set: %+v", got)
			}
			if p := progress(); p.Resumed() || len(p.Created) != 0 {
				t.Fatalf("progress after a run that wrote nothing: %+v", p)
			}
			// A run that created a plan and failed the rest.
			partial, err := s.BeginRun(ctx, r)
			if err != nil {
				t.Fatalf("second run of the set: %v", err)
			}
			if err := s.RecordPlanWrite(ctx, partial, pipeline.PlanWrite{Account: "acme", PlanID: 42, PlanName: "New", Action: "create", Outcome: "ok", At: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordPlanWrite(ctx, partial, pipeline.PlanWrite{Account: "acme", Action: "create", Outcome: "422", At: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, partial, "partial", time.Now()); err != nil {
				t.Fatal(err)
			}
			if got := applied(); got != nil {
				t.Fatalf("a partial run applied the set: %+v", got)
			}
			if p := progress(); len(p.Runs) != 1 || p.Runs[0] != partial || len(p.Created) != 1 || p.Created[0] != (pipeline.SavedCreated{Account: "acme", PlanID: 42}) {
				t.Fatalf("progress = %+v, want run %d and plan 42 created", p, partial)
			}
			// The run that finishes it.
			done, err := s.BeginRun(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, done, "ok", time.Now()); err != nil {
				t.Fatal(err)
			}
			if got := applied(); got == nil || got.ID != done {
				t.Fatalf("ChangeSetRun = %+v, want run %d", got, done)
			}
			if none, err := s.ChangeSetRun(ctx, "other"); none != nil || err != nil {
				t.Errorf("unknown change set: %+v, %v", none, err)
			}
		})
	}
}

func TestStoreNewerSchemaRefused(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := open(t, where)
			if _, err := s.db.Exec(s.q(`INSERT INTO eepipe_schema (version, name, applied_at) VALUES (?, 'from the future', 'x')`), SchemaVersion()+1); err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err := OpenWith(ctx, where, testOptions)
			if !errors.Is(err, pipeline.ErrStoreTooNew) || !strings.Contains(err.Error(), "newer eepipe") || !strings.Contains(err.Error(), "upgrade eepipe") {
				t.Fatalf("Open = %v, want a clear refusal", err)
			}
		})
	}
}

func TestSQLiteCorruptAndNotAFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "state.db")
	if err := os.WriteFile(bad, []byte(strings.Repeat("this is not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenWith(context.Background(), bad, testOptions)
	if err == nil || !strings.Contains(err.Error(), "damaged or not an eepipe state store") || !strings.Contains(err.Error(), bad) {
		t.Fatalf("corrupt store: %v", err)
	}
	_, err = OpenWith(context.Background(), dir, testOptions)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder as store: %v", err)
	}
}

func TestSQLiteLockedMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	// Hold a write transaction so that another connection cannot write.
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO eepipe_locks (lock_key, holder, since) VALUES ('x', 'y', 'z')`); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, path)
	s2.db.Exec(`PRAGMA busy_timeout = 1`)
	s2.db.SetMaxOpenConns(1)
	if _, err := s2.db.Exec(`PRAGMA busy_timeout = 1`); err != nil {
		t.Fatal(err)
	}
	_, err = s2.BeginRun(context.Background(), pipeline.RunRecord{Started: time.Now(), Service: "svc"})
	if err == nil || !strings.Contains(err.Error(), "is locked by another program") {
		t.Fatalf("locked store: %v", err)
	}
}

func TestPostgresUnreachable(t *testing.T) {
	// A port on loopback nothing listens on (connection refused).
	_, err := OpenWith(context.Background(), "postgres://eepipe:s3cret-pw@127.0.0.1:1/eepipe?connect_timeout=5", testOptions)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Open = %v, want unreachable", err)
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("the password leaks: %v", err)
	}
}

func TestPostgresAccountLock(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	a, b := open(t, loc), open(t, loc)
	unlock, err := a.LockAccount(ctx, "svc", "acme", "ann@laptop (pid 1)", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.LockAccount(ctx, "svc", "acme", "cron@host", 0)
	var held *pipeline.StoreLockHeldError
	if !errors.As(err, &held) || held.Holder != "ann@laptop (pid 1)" || !strings.Contains(err.Error(), "ann@laptop") {
		t.Fatalf("second lock = %v, want StoreLockHeldError naming ann", err)
	}
	// Another account is free.
	other, err := b.LockAccount(ctx, "svc", "bluecrane", "cron@host", 0)
	if err != nil {
		t.Fatal(err)
	}
	other()
	// A waiting run tries the lock every 250 ms (lockPoll) and gets it at
	// the first try after it is released (here during the second wait).
	c := fakeClock(t, func(n int) {
		if n == 2 {
			unlock()
		}
	})
	b.clock = c.Clock()
	u, err := b.LockAccount(ctx, "svc", "acme", "cron@host", time.Minute)
	if err != nil {
		t.Fatalf("waiting lock: %v", err)
	}
	u()
	if got := fmt.Sprint(c.Slept()); got != "[250ms 250ms]" {
		t.Errorf("waits %s, want two of 250ms", got)
	}
	// A wait for a lock held throughout ends at the limit, the last wait
	// cut to end there, and says how long it waited; a cancelled wait
	// returns the context's error, as is.
	unlock, err = a.LockAccount(ctx, "svc", "acme", "ann@laptop (pid 1)", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	c = fakeClock(t, nil)
	b.clock = c.Clock()
	_, err = b.LockAccount(ctx, "svc", "acme", "cron@host", 600*time.Millisecond)
	if !errors.As(err, &held) || held.Waited != 600*time.Millisecond || held.Holder != "ann@laptop (pid 1)" {
		t.Fatalf("a lock held throughout the wait: %v", err)
	}
	if got := fmt.Sprint(c.Slept()); got != "[250ms 250ms 100ms]" {
		t.Errorf("waits %s, want [250ms 250ms 100ms]", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	c = fakeClock(t, func(n int) { cancel() })
	b.clock = c.Clock()
	if _, err := b.LockAccount(cctx, "svc", "acme", "cron@host", time.Minute); err != context.Canceled || len(c.Slept()) != 1 {
		t.Fatalf("a cancelled wait: %v after %d waits", err, len(c.Slept()))
	}
}

// t0 is the fake clock's start in the tests of waits.
var t0 = time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)

// fakeClock returns a fake clock for a store's waits (Options.clock,
// Store.clock): each wait is recorded and passes at once; onSleep (when
// not nil) is called after each, with its number.
func fakeClock(t *testing.T, onSleep func(n int)) *pacetest.Clock {
	t.Helper()
	c := pacetest.New(t0)
	if onSleep != nil {
		c.OnSleep = func(n int, _ time.Duration) { onSleep(n) }
	}
	return c
}

func TestSQLiteLockIsNoop(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	u1, err := s.LockAccount(context.Background(), "svc", "acme", "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer u1()
	if s.Postgres() {
		t.Fatal("sqlite store says postgres")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h/db":              "postgres://u:xxxxx@h/db",
		"postgres://u@h/db?password=pw&x=1": "postgres://u@h/db?password=xxxxx&x=1",
		"/tmp/state.db":                     "/tmp/state.db",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStoreMigratesOlderSchema: a store at schema version 1 gets the later
// migrations on first use, keeping its data.
func TestStoreMigratesOlderSchema(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := openAt(t, where, 1)
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			s2 := open(t, where)
			var v int
			if err := s2.db.QueryRow(`SELECT MAX(version) FROM eepipe_schema`).Scan(&v); err != nil || v != SchemaVersion() {
				t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
			}
			if err := s2.RecordPlanWrite(ctx, run, pipeline.PlanWrite{Account: "acme", PlanID: 3, Action: "create", Outcome: "ok"}); err != nil {
				t.Fatal(err)
			}
			pw, err := s2.PlanWrites(ctx, pipeline.HistoryQuery{Account: "acme"})
			if err != nil || len(pw) != 1 || pw[0].RunID != run {
				t.Fatalf("plan writes %+v, %v", pw, err)
			}
			// Migration 4: the last plan field values.
			if err := s2.RecordFields(ctx, run, []pipeline.FieldWrite{{Account: "acme", PlanID: 3, Field: "name", Value: "P"}}); err != nil {
				t.Fatal(err)
			}
			lf, err := s2.LastFields(ctx, "svc", "acme", []int64{3})
			if err != nil || lf[pipeline.FieldKey{PlanID: 3, Field: "name"}].Value != "P" {
				t.Fatalf("last fields %+v, %v", lf, err)
			}
		})
	}
}

// TestStoreConcurrentFirstUse: several processes opening a new store at
// once migrate it once.
func TestStoreConcurrentFirstUse(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			where := loc(t)
			var wg sync.WaitGroup
			errs := make([]error, 6)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := OpenWith(context.Background(), where, testOptions)
					if err == nil {
						s.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestRecordWritesInOneTransaction: the targets an apply found in sync are
// recorded together, as last applied by that run; a run id that does not
// exist records none of them.
func TestRecordWritesInOneTransaction(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc", Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			var ws []pipeline.TargetWrite
			for i := range 3 {
				ws = append(ws, pipeline.TargetWrite{Account: "acme", PlanID: 7, TargetID: int64(700 + i), TargetType: "all_employees", Outcome: "ok",
					Counters: []pipeline.CounterWrite{{Counter: "a", After: int64(i)}}})
			}
			if err := s.RecordWrites(ctx, run+1, ws); err == nil {
				t.Fatal("writes of a run that does not exist were recorded")
			}
			if err := s.RecordWrites(ctx, run, ws); err != nil {
				t.Fatal(err)
			}
			last, err := s.LastWrites(ctx, "https://svc", "acme", []int64{700, 701, 702})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if got := last[pipeline.CounterKey{TargetID: int64(700 + i), Counter: "a"}]; got.Value != int64(i) || got.RunID != run {
					t.Errorf("last of target %d = %+v, want %d by run %d", 700+i, got, i, run)
				}
			}
			if h, _ := s.History(ctx, pipeline.HistoryQuery{}); len(h) != 3 || h[0].Sent || h[0].Before != nil {
				t.Errorf("history = %+v", h)
			}
		})
	}
}

// busySQLite makes a new SQLite file at path that another program holds
// a write transaction on (in the rollback journal mode): a store opened on
// it finds it busy at once, as a run does that opens a new file while
// another run switches it to WAL. commit ends the transaction.
func busySQLite(t *testing.T, path string) (commit func()) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	raw.SetMaxOpenConns(1)
	for _, q := range []string{`CREATE TABLE other (a)`, `BEGIN IMMEDIATE`, `INSERT INTO other VALUES (1)`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if _, err := raw.Exec(`COMMIT`); err != nil {
			t.Error(err)
		}
	}
}

// TestBusySQLiteTriedAgain: a new SQLite store found busy at its first use
// is tried again every 25 ms (sqliteBusyPoll) and opens at the first try
// after the other program let go (here during the third wait); one busy
// for 10 s (sqliteBusyWait, its connections' busy timeout) throughout is
// refused as locked by another program; a cancelled wait returns the
// context's error, as is.
func TestBusySQLiteTriedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	commit := busySQLite(t, path)
	c := fakeClock(t, func(n int) {
		if n == 3 {
			commit()
		}
	})
	s, err := OpenWith(context.Background(), path, Options{clock: c.Clock()})
	if err != nil {
		t.Fatalf("a store busy for three tries: %v", err)
	}
	s.Close()
	if got := fmt.Sprint(c.Slept()); got != "[25ms 25ms 25ms]" {
		t.Errorf("waits %s, want three of 25ms", got)
	}

	path = filepath.Join(t.TempDir(), "state.db")
	busySQLite(t, path)
	c = fakeClock(t, nil)
	_, err = OpenWith(context.Background(), path, Options{clock: c.Clock()})
	if err == nil || !strings.Contains(err.Error(), "is locked by another program") || !strings.Contains(err.Error(), "stayed locked") {
		t.Fatalf("a store busy throughout: %v", err)
	}
	if slept := c.Slept(); len(slept) != 400 || c.Total() != 10*time.Second || slices.ContainsFunc(slept, func(d time.Duration) bool { return d != 25*time.Millisecond }) {
		t.Errorf("waited %v in %d waits, want 10s in waits of 25ms", c.Total(), len(slept))
	}

	ctx, cancel := context.WithCancel(context.Background())
	c = fakeClock(t, func(int) { cancel() })
	if _, err := OpenWith(ctx, path, Options{clock: c.Clock()}); err != context.Canceled || len(c.Slept()) != 1 {
		t.Fatalf("a cancelled wait: %v after %d waits", err, len(c.Slept()))
	}
}

// TestConcurrentFirstOpenOfSQLite: runs that open a new SQLite store at the
// same moment all open it (switching a new file to WAL can report
// SQLITE_BUSY at once, without waiting; Open tries again). The race shows
// most often under -race.
func TestConcurrentFirstOpenOfSQLite(t *testing.T) {
	for i := range 100 {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				s, err := OpenWith(context.Background(), path, testOptions)
				if err != nil {
					t.Errorf("round %d: %v", i, err)
					return
				}
				s.Close()
			})
		}
		wg.Wait()
	}
}

// TestLastWritesLatestAcrossNames: when runs under two names of one
// account wrote a counter, the latest write is the last value applied;
// many targets are looked up in bounded chunks.
func TestLastWritesLatestAcrossNames(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			write := func(account string, at time.Time, target int64, v int64) {
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: at, Service: "svc", Accounts: []string{account}})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RecordWrite(ctx, run, pipeline.TargetWrite{Account: account, TargetID: target, Outcome: "ok", At: at,
					Counters: []pipeline.CounterWrite{{Counter: "a", After: v, Sent: true}}}); err != nil {
					t.Fatal(err)
				}
			}
			write("default", t0, 7, 1)
			write("acme-prod", t0.Add(time.Hour), 7, 5)
			write("default", t0.Add(2*time.Hour), 8, 3)
			var ids []int64
			for i := range 1200 {
				ids = append(ids, int64(100+i))
			}
			ids = append(ids, 8, 7, 7)
			for _, as := range []string{"default", "acme-prod"} {
				last, err := s.LastWrites(ctx, "svc", as, ids)
				if err != nil {
					t.Fatal(err)
				}
				if got := last[pipeline.CounterKey{TargetID: 7, Counter: "a"}]; got.Value != 5 {
					t.Errorf("%s: last of target 7 = %+v, want 5 (the latest write)", as, got)
				}
				if got := last[pipeline.CounterKey{TargetID: 8, Counter: "a"}]; got.Value != 3 || len(last) != 2 {
					t.Errorf("%s: %v", as, last)
				}
			}
		})
	}
}

// TestSQLiteStoreIsPrivate: a new SQLite store (client plan names,
// counters, who ran what) is readable by its owner only, wherever it is
// created.
func TestSQLiteStoreIsPrivate(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "state.db")
	s := open(t, path)
	if _, err := s.BeginRun(context.Background(), pipeline.RunRecord{Started: time.Now(), Service: "svc"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", p, st.Mode().Perm())
		}
	}
}

// TestLastFieldsRecordedAndLatest: the plan fields a run applied are the
// last values applied per plan and field, replaced by a later run (under
// another name of the account too), kept apart per service, and looked
// up in bounded chunks.
func TestLastFieldsRecordedAndLatest(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			apply := func(service, account string, at time.Time, ws ...pipeline.FieldWrite) int64 {
				run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: at, Service: service, Accounts: []string{account}})
				if err != nil {
					t.Fatal(err)
				}
				for i := range ws {
					ws[i].Account, ws[i].At = account, at
				}
				if err := s.RecordFields(ctx, run, ws); err != nil {
					t.Fatal(err)
				}
				return run
			}
			apply("svc", "default", t0, pipeline.FieldWrite{PlanID: 7, Field: "name", Value: "Acme", File: "v1.csv"},
				pipeline.FieldWrite{PlanID: 7, Field: "sector", Value: "Construction", File: "v1.csv"})
			run2 := apply("svc", "acme-prod", t0.Add(time.Hour), pipeline.FieldWrite{PlanID: 7, Field: "name", Value: "Acme 2026", File: "v2.csv"})
			apply("svc", "default", t0.Add(2*time.Hour), pipeline.FieldWrite{PlanID: 7, Field: "name", Value: "Acme 2026", File: "v2.csv"},
				pipeline.FieldWrite{PlanID: 8, Field: "scorecard_id", Value: "sc1"})
			apply("other-svc", "default", t0.Add(3*time.Hour), pipeline.FieldWrite{PlanID: 7, Field: "name", Value: "Elsewhere"})
			if err := s.RecordFields(ctx, run2, nil); err != nil {
				t.Fatalf("no fields: %v", err)
			}
			var ids []int64
			for i := range 1200 {
				ids = append(ids, int64(100+i))
			}
			ids = append(ids, 8, 7, 7)
			for _, as := range []string{"default", "acme-prod"} {
				last, err := s.LastFields(ctx, "svc", as, ids)
				if err != nil {
					t.Fatal(err)
				}
				name := last[pipeline.FieldKey{PlanID: 7, Field: "name"}]
				if name.Value != "Acme 2026" || name.RunID != 3 || !name.At.Equal(t0.Add(2*time.Hour)) || name.File != "v2.csv" {
					t.Errorf("%s: name = %+v, want Acme 2026 by run 3", as, name)
				}
				if sec := last[pipeline.FieldKey{PlanID: 7, Field: "sector"}]; sec.Value != "Construction" || sec.RunID != 1 {
					t.Errorf("%s: sector = %+v", as, sec)
				}
				if len(last) != 3 {
					t.Errorf("%s: %v", as, last)
				}
			}
			if err := s.RecordFields(ctx, 999, []pipeline.FieldWrite{{PlanID: 1, Field: "name", Value: "x"}}); err == nil {
				t.Error("fields of an unknown run recorded")
			}
		})
	}
}
