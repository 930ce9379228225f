package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// rawPG opens a plain connection pool on the test database at loc.
func rawPG(t *testing.T, loc string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// terminateHolder ends the PostgreSQL sessions of the test's database named
// holder (as LockAccount names its lock's session; tests elsewhere on the
// server may use the same name) with pg_terminate_backend, waits until they
// are gone (pg_terminate_backend only signals them; a session releases its
// locks as it ends), and returns how many it ended.
func terminateHolder(t *testing.T, db *sql.DB, holder string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, sessionName(holder)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, sessionName(holder)).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of %s still there 10 s after pg_terminate_backend", left, holder)
		}
		time.Sleep(time.Millisecond)
	}
}

// trustFor makes a probe of each of st's lock sessions serve d while the
// session is quiet.
func trustFor(st *Store, d time.Duration) {
	st.locks.mu.Lock()
	defer st.locks.mu.Unlock()
	for _, sess := range st.locks.sessions {
		sess.checks.mu.Lock()
		sess.checks.fresh = d
		sess.checks.mu.Unlock()
	}
}

// TestLockLostWhenItsSessionEnds: a lock whose session is ended by
// pg_terminate_backend is reported lost by CheckLocks (and stays lost),
// while another host can then take it at once; a lock whose session lives
// is reported held.
func TestLockLostWhenItsSessionEnds(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	a, b := open(t, loc), open(t, loc)
	unlock, err := a.LockAccount(ctx, "https://svc", "umoya", "ann@lap (pid 1)", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := a.CheckLocks(ctx); err != nil {
		t.Fatalf("CheckLocks on a held lock: %v", err)
	}
	if _, err := b.LockAccount(ctx, "HTTPS://svc:443/", "UMOYA", "bob@cron (pid 2)", 0); err == nil {
		t.Fatal("a second host took a held lock (spelled otherwise)")
	}
	// A probe's answer now serves for an hour: the loss can only be seen
	// on the session's socket (the server's message and hang-up).
	trustFor(a, time.Hour)
	if err := a.CheckLocks(ctx); err != nil {
		t.Fatalf("CheckLocks on a held lock: %v", err)
	}
	if canPollSockets {
		// The socket is found under pgx (else every write waits for a
		// probe, and nothing but the benchmark would tell).
		a.locks.mu.Lock()
		quiet := a.locks.sessions[0].checks.quiet
		a.locks.mu.Unlock()
		if quiet == nil || !quiet() {
			t.Fatal("the socket of a held lock's idle session is not watched, or not quiet")
		}
	}
	if n := terminateHolder(t, rawPG(t, loc), "ann@lap (pid 1)"); n != 1 {
		t.Fatalf("%d sessions terminated, want 1", n)
	}
	err = a.CheckLocks(ctx)
	var lost *pipeline.StoreLockLostError
	if !errors.As(err, &lost) || lost.Account != "umoya" || !strings.Contains(err.Error(), "lost") || !strings.Contains(err.Error(), "stopped before its next write") {
		t.Fatalf("CheckLocks after the session ended: %v", err)
	}
	if err2 := a.CheckLocks(ctx); err2 == nil {
		t.Fatal("a lost lock was found held again")
	}
	// pg_terminate_backend signals the session; it ends, releasing its
	// locks, a moment later on the server: a real wait for it (at once
	// most often), on the store's real clock.
	ub, err := b.LockAccount(ctx, "https://svc", "umoya", "bob@cron (pid 2)", 5*time.Second)
	if err != nil {
		t.Fatalf("the lock of the ended session could not be taken: %v", err)
	}
	ub()
}

// TestHolderLocksShareASession: a holder's locks live on one PostgreSQL
// session (one query checks them all); the same lock taken twice by one
// holder still refuses the second taker (advisory locks nest within a
// session); releasing one lock keeps the other held, and ending the
// session loses both.
func TestHolderLocksShareASession(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	a, b := open(t, loc), open(t, loc)
	const holder = "ann@lap (pid 1)"
	u1, err := a.LockAccount(ctx, "https://svc", "umoya", holder, 0)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := a.LockAccount(ctx, "https://svc", "bluecrane", holder, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer u2()
	db := rawPG(t, loc)
	var sessions int
	if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, sessionName(holder)).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	if sessions != 1 {
		t.Fatalf("%d sessions for one holder's two locks, want 1", sessions)
	}
	if u, err := a.LockAccount(ctx, "https://svc", "umoya", holder, 0); err == nil {
		u()
		t.Fatal("a held lock was taken again by its own holder")
	}
	u1()
	if err := a.CheckLocks(ctx); err != nil {
		t.Fatalf("the remaining lock after a release: %v", err)
	}
	if _, err := b.LockAccount(ctx, "https://svc", "bluecrane", "bob@cron (pid 2)", 0); err == nil {
		t.Fatal("the remaining lock was taken by another host")
	}
	ub, err := b.LockAccount(ctx, "https://svc", "umoya", "bob@cron (pid 2)", 0)
	if err != nil {
		t.Fatalf("the released lock: %v", err)
	}
	ub()
	// (The refused second taking left a pooled session named so too.)
	if n := terminateHolder(t, db, holder); n < 1 {
		t.Fatalf("%d sessions terminated, want 1 or more", n)
	}
	var lost *pipeline.StoreLockLostError
	if err := a.CheckLocks(ctx); !errors.As(err, &lost) || lost.Account != "bluecrane" {
		t.Fatalf("CheckLocks after the session ended: %v", err)
	}
}

// TestLockSessionOutlivesIdleTimeout: a lock's session is not ended by the
// server's idle_session_timeout while the run holds it.
func TestLockSessionOutlivesIdleTimeout(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	db := rawPG(t, loc)
	var name string
	if err := db.QueryRow(`SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ALTER DATABASE ` + name + ` SET idle_session_timeout = '300ms'`); err != nil {
		t.Skipf("the server has no idle_session_timeout (PostgreSQL before 14): %v", err)
	}
	s := open(t, loc)
	unlock, err := s.LockAccount(ctx, "https://svc", "umoya", "ann@lap (pid 1)", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// The server's idle_session_timeout runs on the server's clock: only
	// real time passing lets it fire (more than three times over).
	time.Sleep(time.Second)
	if err := s.CheckLocks(ctx); err != nil {
		t.Fatalf("the lock idled out: %v", err)
	}
}

// TestLockRefusalNamesTheSession: a holder that has not recorded itself in
// eepipe_locks (or whose record is gone) is still named, from its
// PostgreSQL session.
func TestLockRefusalNamesTheSession(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	a, b := open(t, loc), open(t, loc)
	unlock, err := a.LockAccount(ctx, "https://svc", "umoya", "ann@lap (pid 77, eepipe apply started 2026-11-27T02:00:00Z)", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := rawPG(t, loc).Exec(`DELETE FROM eepipe_locks`); err != nil {
		t.Fatal(err)
	}
	_, err = b.LockAccount(ctx, "https://svc", "umoya", "bob@cron (pid 2)", 0)
	var held *pipeline.StoreLockHeldError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, "ann@lap (pid 77") || !strings.Contains(held.Holder, "PostgreSQL session") {
		t.Fatalf("refusal without a record: %v", err)
	}
}

// TestUpgradeLockHonoursLockWait: a store whose schema another run is
// upgrading is waited for up to the wait given (tried every 250 ms,
// lockPoll, the last wait cut to end at the limit), then refused naming
// that run; once the upgrade is done it opens, and an upgraded store is
// opened without its lock.
func TestUpgradeLockHonoursLockWait(t *testing.T) {
	loc := statestoretest.PostgresURL(t)
	ctx := context.Background()
	db := rawPG(t, loc)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT set_config('application_name', 'eepipe pid 9 on build-host (schema upgrade)', false), pg_advisory_lock($1)`, int64(migrationLockKey)); err != nil {
		t.Fatal(err)
	}
	for wait, waits := range map[time.Duration]string{0: "[]", 400 * time.Millisecond: "[250ms 150ms]"} {
		c := fakeClock(t, nil)
		_, err := OpenWith(ctx, loc, Options{LockWait: wait, clock: c.Clock()})
		var held *pipeline.StoreLockHeldError
		if !errors.As(err, &held) || !strings.Contains(err.Error(), "upgrade of the state store") || !strings.Contains(held.Holder, "build-host") ||
			held.Waited != wait {
			t.Fatalf("wait %s: %v", wait, err)
		}
		if got := fmt.Sprint(c.Slept()); got != waits {
			t.Errorf("wait %s: waits %s, want %s", wait, got, waits)
		}
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, int64(migrationLockKey)); err != nil {
		t.Fatal(err)
	}
	open(t, loc) // upgrades
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWith(ctx, loc, Options{}); err != nil {
		t.Fatalf("an upgraded store waits for the upgrade lock: %v", err)
	}
}

// BenchmarkCheckLocks measures the check a write pays on a PostgreSQL
// store: one query on each held lock's session (here one lock, a local
// server over a Unix socket).
func BenchmarkCheckLocks(b *testing.B) {
	loc := statestoretest.PostgresURL(b)
	ctx := context.Background()
	s, err := OpenWith(ctx, loc, testOptions)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	unlock, err := s.LockAccount(ctx, "https://svc", "umoya", "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	b.ResetTimer()
	for range b.N {
		if err := s.CheckLocks(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSharedCheckServesWaitersWithTheNextProbe: callers that ask while a
// probe is under way are all answered by one next probe, and none by the
// probe under way when it asked (a cache of the probe in flight, or of
// the last one, fails here).
func TestSharedCheckServesWaitersWithTheNextProbe(t *testing.T) {
	release := make(chan struct{})
	var probes atomic.Int32
	c := &sharedCheck{probe: func() error {
		probes.Add(1)
		<-release
		return nil
	}}
	first := make(chan error, 1)
	go func() { first <- c.do() }()
	for probes.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	const callers = 50
	var asked sync.WaitGroup
	answered := make(chan error, callers)
	for range callers {
		asked.Add(1)
		go func() {
			asked.Done()
			answered <- c.do()
		}()
	}
	asked.Wait()
	time.Sleep(20 * time.Millisecond) // every caller is waiting in do
	release <- struct{}{}             // the first probe ends
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for probes.Load() < 2 {
		select {
		case <-answered:
			t.Fatal("a caller was answered by the probe under way when it asked")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no second probe for the callers that asked during the first")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-answered:
		t.Fatal("a caller was answered by the probe under way when it asked")
	case <-time.After(20 * time.Millisecond):
	}
	release <- struct{}{} // the second probe ends
	for range callers {
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
	}
	if n := probes.Load(); n != 2 {
		t.Fatalf("%d probes for a caller and %d that asked while its probe ran, want 2", n, callers)
	}
	close(release)
}

// TestSharedCheckUnderLoad: many callers asking at random moments are
// each answered by a probe that started after they asked; probes never
// overlap (one connection); far fewer probes run than calls; and the
// first failure is every later answer, with no probe more.
func TestSharedCheckUnderLoad(t *testing.T) {
	var started, finished, running atomic.Int64
	failAt := int64(-1)
	var failMu sync.Mutex
	lost := errors.New("lost")
	c := &sharedCheck{probe: func() error {
		if running.Add(1) != 1 {
			t.Error("two probes at once")
		}
		n := started.Add(1)
		time.Sleep(200 * time.Microsecond)
		running.Add(-1)
		finished.Store(n)
		failMu.Lock()
		defer failMu.Unlock()
		if failAt > 0 && n >= failAt {
			return lost
		}
		return nil
	}}
	const callers, calls = 32, 200
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				before := started.Load()
				if err := c.do(); err != nil {
					t.Errorf("caller %d: %v", g, err)
					return
				}
				// The probe that answered started after the ask: it is
				// at least the one after those started before it.
				if finished.Load() <= before {
					t.Errorf("caller %d call %d answered by a probe started before it asked", g, i)
					return
				}
				if i%7 == 0 {
					time.Sleep(time.Duration(g%5) * 50 * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()
	n := started.Load()
	t.Logf("%d calls, %d probes", callers*calls, n)
	if n >= callers*calls/2 {
		t.Errorf("%d probes for %d calls: not shared", n, callers*calls)
	}
	failMu.Lock()
	failAt = n + 1
	failMu.Unlock()
	if err := c.do(); err != lost {
		t.Fatalf("the failing probe answered %v", err)
	}
	for range 3 {
		if err := c.do(); err != lost {
			t.Fatalf("after a failure: %v", err)
		}
	}
	if got := started.Load(); got != n+1 {
		t.Fatalf("%d probes after the failure, want none", got-n-1)
	}
}
