package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/eepipe/eepipe/pipeline"
)

// lockPoll is how often a waiting run asks again for a held lock.
const lockPoll = 250 * time.Millisecond

// lockHeartbeat is how often a held PostgreSQL lock's session is checked
// (and kept from idling) between the checks before writes.
const lockHeartbeat = 5 * time.Second

// lockCheckTimeout bounds one check of a held lock: a session that does
// not answer within it is taken as lost.
const lockCheckTimeout = 10 * time.Second

// heldLocks are the PostgreSQL locks a Store holds, checked by CheckLocks.
type heldLocks struct {
	mu   sync.Mutex
	list []*pgLock
}

// pgLock is one session advisory lock held on a connection of its own.
type pgLock struct {
	account string // as the caller named it, for messages
	key     int64
	pid     int64 // the PostgreSQL backend of conn, which holds the lock
	conn    *sql.Conn
	stop    chan struct{}
	done    chan struct{}
	checks  sharedCheck // the checks of the lock, shared by the callers
}

// sharedCheck lets many callers share the round trips of one check, as a
// group commit shares a commit: a caller is answered by the next probe
// that starts after it asked (never by one already under way, which might
// have passed before the loss the caller must see), and every caller that
// asks while a probe is under way waits for the same next probe. The
// first error of probe is kept: every call after it returns it at once.
type sharedCheck struct {
	probe func() error

	mu      sync.Mutex
	running bool        // a probe is under way, or about to start
	next    *checkRound // the callers waiting for a probe not yet started
	lost    error       // set once: probe's first error
}

// checkRound is one probe and the callers it answers.
type checkRound struct {
	done chan struct{} // closed when err is set
	err  error
}

// do returns the answer of a probe that started after do was called.
func (c *sharedCheck) do() error {
	c.mu.Lock()
	if c.lost != nil {
		err := c.lost
		c.mu.Unlock()
		return err
	}
	r := c.next
	if r == nil {
		r = &checkRound{done: make(chan struct{})}
		c.next = r
	}
	if c.running {
		c.mu.Unlock()
		<-r.done
		return r.err
	}
	c.running = true
	c.mu.Unlock()
	// No probe under way: this caller runs the round it joined (its own
	// request goes out without a hop to another goroutine), and leaves
	// the rounds asked for meanwhile to a goroutine of their own.
	if c.runRound() {
		go c.runRounds()
	}
	<-r.done
	return r.err
}

// runRounds runs rounds until no caller waits.
func (c *sharedCheck) runRounds() {
	for c.runRound() {
	}
}

// runRound takes the waiting round (the caller holds c.running), probes
// for it and answers its callers. more says that callers asked
// meanwhile: c.running stays set for the next round; else it is cleared.
func (c *sharedCheck) runRound() (more bool) {
	c.mu.Lock()
	r, err := c.next, c.lost
	c.next = nil
	c.mu.Unlock()
	if err == nil {
		err = c.probe()
	}
	c.mu.Lock()
	if err != nil && c.lost == nil {
		c.lost = err
	}
	more = c.next != nil
	c.running = more
	c.mu.Unlock()
	r.err = err
	close(r.done)
	return more
}

// advisoryKey returns the advisory lock key of name.
func advisoryKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("eepipe-account-lock\x00" + name))
	return int64(h.Sum64())
}

// keyHalves returns the halves of an advisory lock key as pg_locks shows
// them: classid, the high 32 bits, and objid, the low 32 bits.
func keyHalves(key int64) (hi, lo int64) {
	u := uint64(key)
	return int64(u >> 32), int64(u & 0xffffffff)
}

// LockAccount implements pipeline.StateStore. On PostgreSQL it takes a
// session advisory lock keyed by the service (pipeline.ServiceKey) and
// account (pipeline.AccountKey) on a connection of its own (released when
// the returned func is called, or by the server when the process dies),
// and records who holds it so that a run that finds it held can say who.
// The session is named after the holder (application_name), so that a
// holder that has not recorded itself yet is still named, and is kept
// from idling out (idle_session_timeout off for it, and a check every
// lockHeartbeat); CheckLocks tells whether it is still held. On SQLite it
// is a no-op: the local lock of apply covers one machine.
func (s *Store) LockAccount(ctx context.Context, service, account, holder string, wait time.Duration) (func(), error) {
	if s.dialect != dialectPostgres {
		return func() {}, nil
	}
	name := pipeline.ServiceKey(service) + " " + pipeline.AccountKey(account)
	key := advisoryKey(name)
	hi, lo := keyHalves(key)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.explain(err)
	}
	if err := nameSession(ctx, conn, holder); err != nil {
		conn.Close()
		return nil, s.explain(err)
	}
	got, err := s.tryAdvisory(ctx, conn, key, hi, lo, wait, func(e *pipeline.StoreLockHeldError) { e.Account = account }, name)
	if err != nil || !got {
		conn.Close()
		return nil, err
	}
	var pid int64 // the backend holding the lock, which the checks expect
	if err := conn.QueryRowContext(ctx, `INSERT INTO eepipe_locks (lock_key, holder, since) VALUES ($1, $2, $3)
		ON CONFLICT (lock_key) DO UPDATE SET holder = excluded.holder, since = excluded.since
		RETURNING pg_backend_pid()`, name, holder, fmtTime(time.Now())).Scan(&pid); err != nil {
		conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		conn.Close()
		return nil, s.explain(err)
	}
	l := &pgLock{account: account, key: key, pid: pid, conn: conn, stop: make(chan struct{}), done: make(chan struct{})}
	l.checks.probe = l.probe
	s.locks.mu.Lock()
	s.locks.list = append(s.locks.list, l)
	s.locks.mu.Unlock()
	go l.heartbeat()
	var once sync.Once
	return func() { once.Do(func() { l.release(ctx, s, name, holder) }) }, nil
}

// release stops the heartbeat, forgets the lock and releases it: its
// record, the advisory lock and its session.
func (l *pgLock) release(ctx context.Context, s *Store, name, holder string) {
	close(l.stop)
	<-l.done
	s.locks.mu.Lock()
	if i := indexOf(s.locks.list, l); i >= 0 {
		s.locks.list = append(s.locks.list[:i], s.locks.list[i+1:]...)
	}
	s.locks.mu.Unlock()
	bg := context.WithoutCancel(ctx)
	l.conn.ExecContext(bg, `DELETE FROM eepipe_locks WHERE lock_key = $1 AND holder = $2`, name, holder)
	l.conn.ExecContext(bg, `SELECT pg_advisory_unlock($1)`, l.key)
	l.conn.Close()
}

func indexOf(list []*pgLock, l *pgLock) int {
	for i, x := range list {
		if x == l {
			return i
		}
	}
	return -1
}

// nameSession names the session of conn after holder (application_name,
// at most 63 printable ASCII bytes, as PostgreSQL keeps it) and turns its
// idle_session_timeout off (PostgreSQL 14 and later; older servers have
// none, and the error is ignored): a lock's session is idle between the
// checks.
func nameSession(ctx context.Context, conn *sql.Conn, holder string) error {
	if _, err := conn.ExecContext(ctx, `SELECT set_config('application_name', $1, false)`, sessionName(holder)); err != nil {
		return err
	}
	conn.ExecContext(ctx, `SET idle_session_timeout = 0`)
	return nil
}

// sessionName is holder as an application_name: printable ASCII, at most
// 63 bytes.
func sessionName(holder string) string {
	b := []byte(holder)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b[:min(len(b), 63)])
}

// tryAdvisory takes the session advisory lock key on conn, waiting up to
// wait. Held then, it returns a *pipeline.StoreLockHeldError naming the
// holder (from eepipe_locks under name, else the holder's PostgreSQL
// session), completed by fill.
func (s *Store) tryAdvisory(ctx context.Context, conn *sql.Conn, key, hi, lo int64, wait time.Duration, fill func(*pipeline.StoreLockHeldError), name string) (bool, error) {
	start := time.Now()
	released := 0
	for {
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
			return false, s.explain(err)
		}
		if got {
			return true, nil
		}
		waited := time.Since(start)
		if waited >= wait {
			e := &pipeline.StoreLockHeldError{}
			if wait > 0 {
				e.Waited = waited.Round(time.Millisecond)
			}
			found, err := lockHolder(ctx, conn, hi, lo, name, e)
			if err != nil {
				return false, s.explain(err)
			}
			if !found && released < 3 {
				// Released between the try and the look: try again.
				released++
				continue
			}
			fill(e)
			return false, e
		}
		t := time.NewTimer(min(lockPoll, wait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// lockHolder fills e.Holder and e.Since with who holds the advisory lock
// (hi, lo): the holder eepipe_locks records under name when it is the
// session holding the lock (or no session is seen), else that session as
// PostgreSQL knows it (its application_name, which eepipe sets to the
// holder, its user, address and start). found is false when neither is
// there: the lock was released meanwhile.
func lockHolder(ctx context.Context, conn *sql.Conn, hi, lo int64, name string, e *pipeline.StoreLockHeldError) (found bool, err error) {
	var (
		pid                int64
		app, user, addr    string
		backendStart       sql.NullTime
		recorded, recSince string
	)
	err = conn.QueryRowContext(ctx, `SELECT a.pid, COALESCE(a.application_name, ''), COALESCE(a.usename::text, ''),
		COALESCE(host(a.client_addr), ''), a.backend_start
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.classid::bigint = $1 AND l.objid::bigint = $2
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		LIMIT 1`, hi, lo).Scan(&pid, &app, &user, &addr, &backendStart)
	session := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	rec := false
	if name != "" {
		err = conn.QueryRowContext(ctx, `SELECT holder, since FROM eepipe_locks WHERE lock_key = $1`, name).Scan(&recorded, &recSince)
		rec = err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
	}
	switch {
	case rec && (!session || app == "" || strings.HasPrefix(recorded, app)):
		e.Holder, e.Since = recorded, parseTime(recSince)
	case session:
		var b strings.Builder
		if app != "" {
			b.WriteString(app + " (")
		}
		fmt.Fprintf(&b, "PostgreSQL session %d", pid)
		if user != "" {
			b.WriteString(" of user " + user)
		}
		if addr != "" {
			b.WriteString(" from " + addr)
		}
		if app != "" {
			b.WriteString(")")
		}
		e.Holder = b.String()
		if backendStart.Valid {
			e.Since = backendStart.Time
		}
	default:
		return false, nil
	}
	return true, nil
}

// heartbeat checks the lock every lockHeartbeat until it is released:
// the session does not idle out, and a lost lock is known before the
// next write asks.
func (l *pgLock) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(lockHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.check() != nil {
				return // lost for good; CheckLocks says so
			}
		}
	}
}

// check confirms that the lock is still held by its session: a probe
// that began after this call was made answers for it, shared with every
// other caller waiting for the same probe (sharedCheck).
func (l *pgLock) check() error {
	return l.checks.do()
}

// probe asks PostgreSQL, on the lock's own session, in one round trip
// (the simple protocol: one message, no statement to prepare), which
// backend serves the session. A session advisory lock is released only
// by its session (eepipe unlocks only in release, after the last check)
// or with it: while the session that took the lock is the one answering,
// it holds the lock. A session that does not answer within
// lockCheckTimeout, or fails, or is served by another backend (a proxy
// that reconnected) is a lost lock.
func (l *pgLock) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), lockCheckTimeout)
	defer cancel()
	var pid int64
	err := l.conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&pid)
	switch {
	case err != nil:
		return &pipeline.StoreLockLostError{Account: l.account, Err: fmt.Errorf("its PostgreSQL session ended or stopped answering: %w", err)}
	case pid != l.pid:
		return &pipeline.StoreLockLostError{Account: l.account, Err: fmt.Errorf("its PostgreSQL session (backend %d) is now served by backend %d", l.pid, pid)}
	}
	return nil
}

// CheckLocks confirms that every lock LockAccount took and not yet
// released is still held, asking PostgreSQL on each lock's own session;
// a lock that is not (its session was ended by idle_session_timeout,
// pg_terminate_backend, a proxy or server restart, or does not answer
// within lockCheckTimeout) is a *pipeline.StoreLockLostError, and stays
// lost. Apply calls it before every write (pipeline.RunOptions.CheckLock).
// On SQLite it is nil.
func (s *Store) CheckLocks(ctx context.Context) error {
	s.locks.mu.Lock()
	list := append([]*pgLock(nil), s.locks.list...)
	s.locks.mu.Unlock()
	for _, l := range list {
		if err := l.check(); err != nil {
			return err
		}
	}
	return nil
}

// migrationLock takes the lock of the store's schema upgrade on conn,
// waiting up to wait (--lock-wait) for another run's upgrade; held then,
// it is a *pipeline.StoreLockHeldError naming that run's session.
func (s *Store) migrationLock(ctx context.Context, conn *sql.Conn, wait time.Duration) error {
	host, _ := os.Hostname()
	if err := nameSession(ctx, conn, fmt.Sprintf("eepipe pid %d on %s (schema upgrade)", os.Getpid(), host)); err != nil {
		return err
	}
	hi, lo := keyHalves(migrationLockKey)
	got, err := s.tryAdvisory(ctx, conn, migrationLockKey, hi, lo, wait, func(e *pipeline.StoreLockHeldError) {
		e.What = "the upgrade of the state store " + s.where
	}, "")
	if err != nil {
		return err
	}
	if !got {
		return errors.New("the lock of the state store's upgrade was not taken")
	}
	return nil
}
