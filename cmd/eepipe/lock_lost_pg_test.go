package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// TestApplyStopsWhenItsPostgresLockIsLost: while an apply writes, the
// sessions of its account locks are ended with pg_terminate_backend (as
// idle_session_timeout or a proxy restart would): the run sends no write
// after that (one may be in flight), exits 3 saying its lock was lost,
// with outcome lock_lost; a second apply then takes the lock and finishes
// the plans without duplicating one.
func TestApplyStopsWhenItsPostgresLockIsLost(t *testing.T) { testApplyLosingLock(t, false) }

// TestSavedSetStopsWhenItsPostgresLockIsLost: the same for a saved change
// set (written by diff -o): exit 3, outcome lock_lost, and the set applied
// again resumes without duplicating a plan.
func TestSavedSetStopsWhenItsPostgresLockIsLost(t *testing.T) { testApplyLosingLock(t, true) }

func testApplyLosingLock(t *testing.T, saved bool) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnvWith(t, sandbox.Options{Latency: 40 * time.Millisecond}, pg)
	e := s.env
	const plans = 20
	file := manyTargets(t, filepath.Join(e.dir, "many.csv"), plans, 3)
	if saved {
		set := filepath.Join(e.dir, "set.json")
		if r := s.eepipe("diff", file, "-o", set); r.code != ExitDiff {
			t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
		}
		file = set
	}
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The lock sessions are named after the holder: user@host (pid N, ...).
	session := fmt.Sprintf("%s@%s (pid %d,", currentUser(), hostName(), os.Getpid())
	done := make(chan result, 1)
	go func() { done <- s.eepipe("apply", file, "--no-recalc", "--concurrency", "1", "--log-format", "json") }()

	deadline := time.Now().Add(30 * time.Second)
	for e.srv.Sandbox.Stats().Writes < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the apply did not start writing")
		}
		time.Sleep(2 * time.Millisecond)
	}
	var killed int
	if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND datname = current_database()`, session).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatalf("no lock session named %q", session)
	}
	for {
		var left int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE starts_with(application_name, $1) AND datname = current_database()`, session).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	atKill := e.srv.Sandbox.Stats().Writes
	r := <-done
	after := e.srv.Sandbox.Stats().Writes
	if r.code != ExitFatal || !strings.Contains(r.err, "lock of account default was lost") || !strings.Contains(r.err, "stopped before its next write") {
		t.Fatalf("apply whose lock was lost: exit %d\n%s", r.code, r.err)
	}
	if s := summaryLine(t, r.err); s["outcome"] != "lock_lost" {
		t.Errorf("summary %v, want outcome lock_lost", s)
	}
	if after-atKill > 1 {
		t.Errorf("%d writes were sent after the lock was lost (at most the one in flight may finish)", after-atKill)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n >= plans {
		t.Fatalf("%d plans written: the run did not stop", n)
	}

	// Another run takes the lock and finishes: every plan once.
	if r := s.eepipe("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("second apply: exit %d\n%s", r.code, r.err)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != plans {
		t.Fatalf("%d plans after the second apply, want %d", n, plans)
	}
}

// TestStoreLockHoldsUnderEverySpelling: two hosts sharing a PostgreSQL
// store (each with its own lock folder), one configured as
// HTTP://127.0.0.1:PORT/ with the account named UMOYA, the other as
// http://127.0.0.1:PORT with umoya and a file saying " Umoya ": while the
// first holds the account's store lock, the second is refused (exit 3,
// holder named, outcome locked) before any write.
func TestStoreLockHoldsUnderEverySpelling(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnv(t, pg)
	e := s.env
	st, err := statestore.OpenWith(context.Background(), pg, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other := "HTTP://" + strings.ToUpper(strings.TrimPrefix(e.srv.URL, "http://")) + "/"
	// The first host's locks, by name and by key pair, as spelled there:
	// the store normalises the service and the account.
	for _, l := range []struct{ service, id string }{{other, "UMOYA"}, {"", pipeline.AccountLockKey("mpk_sandbox_acme")}} {
		unlock, err := st.LockAccount(context.Background(), l.service, l.id, "ops@host-a (pid 4242)", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
	}
	delete(e.vars, envAPIKey) // the configuration file gives the key pairs
	delete(e.vars, envAPISecret)
	file := accountCSV(t, filepath.Join(e.dir, "spaced.csv"), " Umoya ", "Two hosts")
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", file, "--config", umoyaConfig(t, e, "umoya", e.srv.URL), "--state", pg, "--no-recalc",
		"--lock-dir", filepath.Join(e.dir, "host-b"), "--log-format", "json")
	if r.code != ExitFatal || !strings.Contains(r.err, "account umoya is locked by ops@host-a (pid 4242)") {
		t.Fatalf("apply from the second host: exit %d\n%s", r.code, r.err)
	}
	if s := summaryLine(t, r.err); s["outcome"] != "locked" {
		t.Errorf("summary %v, want outcome locked", s)
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Fatalf("%d writes from a refused apply", w)
	}
}
