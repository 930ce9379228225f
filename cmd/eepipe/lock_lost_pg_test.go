package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// TestApplyStopsWhenItsPostgresLockIsLost: while an apply writes, the
// sessions of its account locks are ended with pg_terminate_backend (as
// idle_session_timeout or a proxy restart would): the run sends no write
// after that (one may be in flight), exits 3 saying its lock was lost,
// with outcome lock_lost; a second apply then takes the lock and finishes
// the plans without duplicating one.
func TestApplyStopsWhenItsPostgresLockIsLost(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnvWith(t, sandbox.Options{Latency: 40 * time.Millisecond}, pg)
	e := s.env
	const plans = 20
	file := manyTargets(t, filepath.Join(e.dir, "many.csv"), plans, 3)
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
	if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE starts_with(application_name, $1)`, session).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatalf("no lock session named %q", session)
	}
	for {
		var left int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE starts_with(application_name, $1)`, session).Scan(&left); err != nil {
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
