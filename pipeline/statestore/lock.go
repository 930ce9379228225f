package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"
)

// lockPoll is how often a waiting run asks again for a held lock.
const lockPoll = 250 * time.Millisecond

// lockHeartbeat is how often a held PostgreSQL lock's session is checked
// (and kept from idling) between the checks before writes.
const lockHeartbeat = 5 * time.Second

// lockConfirmEvery is how long a probe that confirmed a lock's session
// serves the writes that follow while the session stays quiet (nothing
// from the server on its socket, which is how an ended session says so):
// the round trip guards against a session that went silent (a network
// cut), which is then found within about that much.
const lockConfirmEvery = time.Second

// lockCheckTimeout bounds one check of a held lock: a session that does
// not answer within it is taken as lost.
const lockCheckTimeout = 10 * time.Second

// heldLocks are the PostgreSQL locks a Store holds, checked by CheckLocks.
type heldLocks struct {
	taking   sync.Mutex // serialises LockAccount and the releases
	mu       sync.Mutex // guards sessions
	sessions []*lockSession
}

// lockSession is a PostgreSQL session of its own (a connection kept out
// of the pool) holding session advisory locks of one holder: a run's
// locks (an account's by name and by key pair, every account it
// applies) share it, so that one query checks them all.
type lockSession struct {
	holder string
	pid    int64 // the PostgreSQL backend of conn, which holds the locks
	conn   *sql.Conn
	stop   context.CancelFunc // ends the heartbeat
	done   chan struct{}      // closed when the heartbeat has ended
	checks sharedCheck        // the checks of the session, shared by the callers

	mu   sync.Mutex // guards held
	held []*pgLock  // the locks taken on it and not released
}

// pgLock is one session advisory lock held on a lockSession.
type pgLock struct {
	account string // as the caller named it, for messages
	name    string // its record's key in eepipe_locks
	key     int64
}

// sharedCheck lets many callers share the round trips of one check, as a
// group commit shares a commit: a caller is answered by the next probe
// that starts after it asked (never by one already under way, which might
// have passed before the loss the caller must see), and every caller that
// asks while a probe is under way waits for the same next probe. The
// first error of probe is kept: every call after it returns it at once.
//
// With quiet and fresh set, a caller that asks while the session is
// quiet (the server has sent nothing on it since the last probe: no
// message and no hang-up, which is how a session that ends says so) and
// the last probe that confirmed it began less than fresh ago is answered
// at once; otherwise it waits for the next probe as above. Once a caller
// found the session not quiet, no caller is answered at once until a
// probe that began after that confirmed the session: a probe under way
// may read what the server sent (so that the socket looks quiet again)
// before it reports the loss.
type sharedCheck struct {
	probe func() error
	quiet func() bool      // nil: a caller always waits for a probe
	fresh time.Duration    // how long a probe's answer serves a quiet session
	now   func() time.Time // the clock (time.Now when nil)

	mu       sync.Mutex
	running  bool        // a probe is under way, or about to start
	next     *checkRound // the callers waiting for a probe not yet started
	lost     error       // set once: probe's first error
	okAt     time.Time   // when the last probe that confirmed the session began
	doubts   uint64      // how often a caller found the session not quiet
	okDoubts uint64      // doubts when the probe that set okAt began
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
	if c.confirmed() {
		c.mu.Unlock()
		if c.quiet() {
			return nil
		}
		c.mu.Lock()
		c.doubts++
		if c.lost != nil {
			err := c.lost
			c.mu.Unlock()
			return err
		}
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

// confirmed reports whether the last probe that confirmed the session
// began less than c.fresh ago, and after every caller that found the
// session not quiet (c.mu held), so that a quiet session needs no other.
func (c *sharedCheck) confirmed() bool {
	return c.quiet != nil && c.fresh > 0 && !c.okAt.IsZero() && c.okDoubts == c.doubts && c.clock().Sub(c.okAt) < c.fresh
}

func (c *sharedCheck) clock() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// failed reports whether a probe failed (every answer is then its error).
func (c *sharedCheck) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost != nil
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
	began, doubts := c.clock(), c.doubts
	c.mu.Unlock()
	if err == nil {
		err = c.probe()
	}
	c.mu.Lock()
	if err != nil && c.lost == nil {
		c.lost = err
	}
	if err == nil && !began.Before(c.okAt) { // rounds do not overlap
		c.okAt, c.okDoubts = began, doubts
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
// session advisory lock keyed by the service (pipeline.ServiceKey; ""
// for a lock that holds on every address of it, an account's key pair)
// and account (pipeline.AccountKey) on a connection of its own, which the
// holder's other locks share (released when the returned func is called,
// or by the server when the process dies), and records who holds it so
// that a run that finds it held can say who.
// The session is named after the holder (application_name), so that a
// holder that has not recorded itself yet is still named, and is kept
// from idling out (idle_session_timeout off for it, and a check every
// lockHeartbeat); CheckLocks tells whether it is still held. On SQLite it
// is a no-op: the local lock of apply covers one machine.
func (s *Store) LockAccount(ctx context.Context, service, account, holder string, wait time.Duration) (func(), error) {
	if s.dialect != dialectPostgres {
		return func() {}, nil
	}
	name := pipeline.AccountKey(account)
	if service != "" {
		name = pipeline.ServiceKey(service) + " " + name
	}
	key := advisoryKey(name)
	hi, lo := keyHalves(key)
	s.locks.taking.Lock()
	defer s.locks.taking.Unlock()
	sess := s.locks.sessionFor(holder, key)
	var conn *sql.Conn
	if sess != nil {
		conn = sess.conn
	} else {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return nil, s.explain(err)
		}
		if err := nameSession(ctx, c, holder); err != nil {
			c.Close()
			return nil, s.explain(err)
		}
		conn = c
	}
	drop := func() {
		if sess == nil {
			conn.Close()
		}
	}
	got, err := s.tryAdvisory(ctx, conn, key, hi, lo, wait, func(e *pipeline.StoreLockHeldError) { e.Account = account }, name)
	if err != nil || !got {
		drop()
		return nil, err
	}
	var pid int64 // the backend holding the lock, which the checks expect
	if err := conn.QueryRowContext(ctx, `INSERT INTO eepipe_locks (lock_key, holder, since) VALUES ($1, $2, $3)
		ON CONFLICT (lock_key) DO UPDATE SET holder = excluded.holder, since = excluded.since
		RETURNING pg_backend_pid()`, name, holder, fmtTime(time.Now())).Scan(&pid); err != nil {
		conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		drop()
		return nil, s.explain(err)
	}
	l := &pgLock{account: account, name: name, key: key}
	if sess == nil {
		beat, stop := context.WithCancel(context.Background())
		sess = &lockSession{holder: holder, pid: pid, conn: conn, stop: stop, done: make(chan struct{})}
		sess.checks.probe = sess.probe
		sess.checks.quiet = quietSocket(sessionSocket(conn))
		sess.checks.fresh = lockConfirmEvery
		s.locks.mu.Lock()
		s.locks.sessions = append(s.locks.sessions, sess)
		s.locks.mu.Unlock()
		go sess.heartbeat(beat)
	}
	sess.mu.Lock()
	sess.held = append(sess.held, l)
	sess.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { s.release(ctx, sess, l) }) }, nil
}

// sessionFor returns the live session of holder that does not hold key
// yet, nil when there is none. (Advisory locks nest within a session: a
// lock taken twice on one session would not exclude its second taker.)
func (h *heldLocks) sessionFor(holder string, key int64) *lockSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sess := range h.sessions {
		if sess.holder != holder || sess.checks.failed() {
			continue
		}
		sess.mu.Lock()
		has := slices.ContainsFunc(sess.held, func(l *pgLock) bool { return l.key == key })
		sess.mu.Unlock()
		if !has {
			return sess
		}
	}
	return nil
}

// release releases l, its record and its advisory lock; the last lock
// of its session also stops the session's heartbeat and ends it.
func (s *Store) release(ctx context.Context, sess *lockSession, l *pgLock) {
	s.locks.taking.Lock()
	defer s.locks.taking.Unlock()
	sess.mu.Lock()
	sess.held = slices.DeleteFunc(sess.held, func(x *pgLock) bool { return x == l })
	last := len(sess.held) == 0
	sess.mu.Unlock()
	if last {
		sess.stop()
		<-sess.done
		s.locks.mu.Lock()
		s.locks.sessions = slices.DeleteFunc(s.locks.sessions, func(x *lockSession) bool { return x == sess })
		s.locks.mu.Unlock()
	}
	bg := context.WithoutCancel(ctx)
	sess.conn.ExecContext(bg, `DELETE FROM eepipe_locks WHERE lock_key = $1 AND holder = $2`, l.name, sess.holder)
	sess.conn.ExecContext(bg, `SELECT pg_advisory_unlock($1)`, l.key)
	if last {
		sess.conn.Close()
	}
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

// tryAdvisory takes the session advisory lock key on conn, trying it
// every lockPoll for up to wait (a pace poll). Held then, it returns a
// *pipeline.StoreLockHeldError naming the holder (from eepipe_locks under
// name, else the holder's PostgreSQL session), completed by fill.
func (s *Store) tryAdvisory(ctx context.Context, conn *sql.Conn, key, hi, lo int64, wait time.Duration, fill func(*pipeline.StoreLockHeldError), name string) (bool, error) {
	start := s.clock.Time()
	poll := s.clock.Poll(lockPoll, start.Add(wait))
	try := func(pace.Attempt) pace.Verdict {
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
			return pace.Done(s.explain(err))
		}
		if !got {
			return pace.Again(errLockHeld)
		}
		return pace.Done(nil)
	}
	for released := 0; ; released++ {
		err := poll.Call(ctx, try)
		var oot *pace.OutOfTime
		var ie *pace.Interrupted
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &ie):
			return false, ie.Cause
		case !errors.As(err, &oot):
			return false, err
		}
		e := &pipeline.StoreLockHeldError{}
		if wait > 0 {
			e.Waited = oot.At.Sub(start).Round(time.Millisecond)
		}
		found, err := lockHolder(ctx, conn, hi, lo, name, e)
		if err != nil {
			return false, s.explain(err)
		}
		if !found && released < 3 {
			// Released between the try and the look: try again (once,
			// the wait being over).
			continue
		}
		fill(e)
		return false, e
	}
}

// errLockHeld is the failed try of a lock another session holds.
var errLockHeld = errors.New("the lock is held")

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

// heartbeat checks the session every lockHeartbeat (pace.Sleep) until
// its last lock is released (ctx ends): the session does not idle out,
// and a lost lock is known before the next write asks.
func (sess *lockSession) heartbeat(ctx context.Context) {
	defer close(sess.done)
	for pace.Sleep(ctx, lockHeartbeat) == nil {
		if sess.checks.do() != nil {
			return // lost for good; CheckLocks says so
		}
	}
}

// probe asks PostgreSQL, on the locks' own session, in one round trip
// (the simple protocol: one message, no statement to prepare), which
// backend serves the session. A session advisory lock is released only
// by its session (eepipe unlocks one only in release, once no write is
// to follow under it) or with the session: while the backend that took
// the locks is the one answering, it holds them. A session that fails,
// does not answer within lockCheckTimeout, or is served by another
// backend (a proxy that reconnected) has lost its locks.
func (sess *lockSession) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), lockCheckTimeout)
	defer cancel()
	var pid int64
	err := sess.conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&pid)
	if err == nil {
		// What the server sent after the answer must not stay read and
		// unhandled in pgx: the checks until the next probe look for it
		// on the socket (quietSocket).
		err = sess.conn.Raw(syncSession(ctx))
	}
	switch {
	case err != nil:
		return sess.lost(fmt.Errorf("its PostgreSQL session ended or stopped answering: %w", err))
	case pid != sess.pid:
		return sess.lost(fmt.Errorf("its PostgreSQL session (backend %d) is now served by backend %d", sess.pid, pid))
	}
	return nil
}

// lost is the loss of the session's locks for err, naming the account
// of the first lock it holds.
func (sess *lockSession) lost(err error) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	account := ""
	if len(sess.held) > 0 {
		account = sess.held[0].account
	}
	return &pipeline.StoreLockLostError{Account: account, Err: err}
}

// CheckLocks confirms that every lock LockAccount took and not yet
// released is still held. A lock's session (one for the locks of a
// holder) is confirmed at once when it is quiet (the server has sent
// nothing on its socket: a session PostgreSQL ends sends its error there
// before it releases its locks, a proxy that drops it closes its end; see
// quietSocket) and a probe confirmed it
// less than lockConfirmEvery ago; otherwise the caller waits for a probe
// on the session (pg_backend_pid, one round trip) that began after it
// asked, shared with the callers that ask meanwhile (sharedCheck). A lock
// that is not held (its session was ended by idle_session_timeout,
// pg_terminate_backend, a proxy or server restart, or does not answer
// within lockCheckTimeout) is a *pipeline.StoreLockLostError, and stays
// lost. Apply calls it before every write (run.RunOptions.CheckLock).
// On SQLite it is nil.
func (s *Store) CheckLocks(ctx context.Context) error {
	s.locks.mu.Lock()
	list := slices.Clone(s.locks.sessions)
	s.locks.mu.Unlock()
	for _, sess := range list {
		if err := sess.checks.do(); err != nil {
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
