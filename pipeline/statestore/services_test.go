package statestore

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestKeyServicesFromVersion9: a store of schema version 9 with history
// migrates to version 10 keeping its runs and last values; its key pairs
// have no address on record until a run records one, and the first
// address recorded for a key pair stays: a run under another address with
// a recorded key pair is not recorded (KeyServiceError), one with key
// pairs that had none records them.
func TestKeyServicesFromVersion9(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			s := openAt(t, where, 9)
			t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
			run1, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Command: "eepipe apply v1.xlsx",
				Service: "http://127.0.0.1:8080", Accounts: []string{"acme"}})
			if err != nil {
				t.Fatal(err)
			}
			w := pipeline.TargetWrite{Account: "acme", PlanID: 7, PlanName: "P", MilestoneID: 70, TargetID: 700, YearNumber: 1,
				TargetType: "all_employees", File: "v1.xlsx", Outcome: "ok", At: t0.Add(time.Second),
				Counters: []pipeline.CounterWrite{{Counter: "a", Before: i64(1), After: 5, Sent: true}}}
			if err := s.RecordWrite(ctx, run1, w); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, run1, "ok", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			s.Close()

			s = open(t, where)
			runs, err := s.Runs(ctx, pipeline.HistoryQuery{})
			if err != nil || len(runs) != 1 || runs[0].Service != "http://127.0.0.1:8080" {
				t.Fatalf("runs after the migration: %+v (%v)", runs, err)
			}
			last, err := s.LastWrites(ctx, "http://127.0.0.1:8080", "acme", []int64{700})
			if err != nil || last[pipeline.CounterKey{TargetID: 700, Counter: "a"}].Value != 5 {
				t.Fatalf("last values after the migration: %+v (%v)", last, err)
			}
			acme, crane := pipeline.AccountLockKey("mpk_acme"), pipeline.AccountLockKey("mpk_crane")
			if got, err := s.KeyServices(ctx, []string{acme, crane}); err != nil || len(got) != 0 {
				t.Fatalf("key services of a migrated store: %v (%v), want none", got, err)
			}
			if _, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), User: "ann", Host: "lap", Command: "eepipe apply",
				Service: "http://127.0.0.1:8080", Keys: []string{acme}}); err != nil {
				t.Fatal(err)
			}
			var conflict *KeyServiceError
			if _, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(2 * time.Hour), User: "bob", Host: "cron", Command: "eepipe apply",
				Service: "http://localhost:8080", Keys: []string{crane, acme}}); !errors.As(err, &conflict) || conflict.Recorded != "http://127.0.0.1:8080" {
				t.Fatalf("a run through another address of a recorded key pair: %v, want a KeyServiceError", err)
			}
			if runs, err := s.Runs(ctx, pipeline.HistoryQuery{}); err != nil || len(runs) != 2 {
				t.Fatalf("%d runs (%v), want 2: the refused run is not recorded", len(runs), err)
			}
			if _, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(2 * time.Hour), User: "bob", Host: "cron", Command: "eepipe apply",
				Service: "http://localhost:8080", Keys: []string{crane}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.KeyServices(ctx, []string{acme, crane, pipeline.AccountLockKey("mpk_other")})
			want := map[string]string{acme: "http://127.0.0.1:8080", crane: "http://localhost:8080"}
			if err != nil || !maps.Equal(got, want) {
				t.Fatalf("key services: %v (%v), want %v", got, err, want)
			}
		})
	}
}

// TestKeyPairLockHoldsOnEveryAddress: on PostgreSQL the lock of an
// account's key pair (service "") is one lock whatever address the runs
// reach the service at; a name's lock is per service.
func TestKeyPairLockHoldsOnEveryAddress(t *testing.T) {
	where := backends(t)["postgres"](t)
	a, b := open(t, where), open(t, where)
	ctx := context.Background()
	key := pipeline.AccountLockKey("mpk_acme")
	unlock, err := a.LockAccount(ctx, "", key, "ann@lap", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var held *pipeline.StoreLockHeldError
	if _, err := b.LockAccount(ctx, "", key, "bob@cron", 0); !errors.As(err, &held) {
		t.Fatalf("the key pair's lock taken twice: %v", err)
	}
	u1, err := a.LockAccount(ctx, "http://127.0.0.1:8080", "acme", "ann@lap", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer u1()
	u2, err := b.LockAccount(ctx, "http://localhost:8080", "acme", "bob@cron", 0)
	if err != nil {
		t.Fatalf("the name's lock under another service: %v", err)
	}
	u2()
}

// TestKeyServicesRecordedInOneOrder: two runs recording the same two key
// pairs at once, their configurations listing the accounts in opposite
// orders (runs of other accounts share no lock), both record them: on
// PostgreSQL each waits for the other's row in turn, so rows taken in the
// order given would deadlock and fail a run. Run a's record is split in
// two (lo, then hi) to interleave the two deterministically.
func TestKeyServicesRecordedInOneOrder(t *testing.T) {
	where := backends(t)["postgres"](t)
	a, b := open(t, where), open(t, where)
	ctx := context.Background()
	const service = "http://127.0.0.1:8080"
	run, err := a.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), User: "ann", Host: "lap", Command: "eepipe apply", Service: service})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := pipeline.AccountLockKey("mpk_acme"), pipeline.AccountLockKey("mpk_crane")
	if lo > hi {
		lo, hi = hi, lo
	}
	txA, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	if err := a.recordKeyServices(ctx, txA, run, service, []string{lo}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		txB, err := b.db.BeginTx(ctx, nil)
		if err != nil {
			done <- err
			return
		}
		defer txB.Rollback()
		if err := b.recordKeyServices(ctx, txB, run, service, []string{hi, lo}); err != nil {
			done <- err
			return
		}
		done <- txB.Commit()
	}()
	// b waits on a's row (and, without one order, holds hi): a real
	// PostgreSQL row lock, waited for on the server.
	waitForRowLock(t, a.db)
	if err := a.recordKeyServices(ctx, txA, run, service, []string{hi}); err != nil {
		t.Fatalf("run a's record: %v", err)
	}
	if err := txA.Commit(); err != nil {
		t.Fatalf("run a's record: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("run b's record: %v", err)
	}
	got, err := a.KeyServices(ctx, []string{lo, hi})
	if want := map[string]string{lo: service, hi: service}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("key services: %v (%v), want %v", got, err, want)
	}
}

// waitForRowLock returns once a session of db's database waits for a lock
// another holds (pg_stat_activity's wait_event_type 'Lock'): the server's
// own wait, which no clock of eepipe's measures, is watched until it has
// begun (for at most 10 s).
func waitForRowLock(t *testing.T, db *sql.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no session waits for a lock after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
