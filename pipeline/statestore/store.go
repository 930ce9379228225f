package statestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"

	// The database/sql drivers of the two backends.
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// dialect is the backend a Store talks to.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// Store is a pipeline.StateStore over SQLite or PostgreSQL.
type Store struct {
	db      *sql.DB
	dialect dialect
	where   string // the location for messages, without secrets
	locks   heldLocks
	// lockWait bounds the wait for another run's schema upgrade (--lock-wait).
	lockWait time.Duration
	// writers is Options.Writers.
	writers int
	// clock is the time of the store's waits: for a held lock, for an
	// upgrade, for a busy SQLite file (Options.clock).
	clock pace.Clock

	jonce   sync.Once
	j       *journal     // the writer of the records (journal.go), started on first use
	jl      *journal     // the writer of what is not waited for (j, but on PostgreSQL)
	jw      []*journal   // every writer: j, the others sharing its queue (PostgreSQL), jl
	jlater  atomic.Int64 // records queued without waiting, not yet committed
	jmu     sync.Mutex
	jfailed error // a record queued without waiting that failed, for the next one waited for

	names    counterIDs  // the ids of the counter names (names.go)
	accounts accountKeys // the spellings of the account names (accounts.go)

	inMu    sync.Mutex
	inStmts map[inQuery]*sql.Stmt // eachIn's statements, prepared once
}

// inQuery is one of eachIn's statements: its query and the length of its
// IN list.
type inQuery struct {
	query string
	n     int
}

var _ pipeline.StateStore = (*Store)(nil)

// DefaultPath returns the default SQLite store: state.db in the eepipe
// folder of the XDG state home ($XDG_STATE_HOME, else ~/.local/state).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the state folder: %w; give the store with --state or state: in the configuration", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "eepipe", "state.db"), nil
}

// IsPostgres reports whether location names a PostgreSQL store.
func IsPostgres(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Redact returns location without a password, for messages.
func Redact(location string) string {
	if !IsPostgres(location) {
		return location
	}
	u, err := url.Parse(location)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Options tune OpenWith.
type Options struct {
	// LockWait bounds the wait for another run's upgrade of a PostgreSQL
	// store's schema (apply's --lock-wait; 0: not at all). Held then, the
	// error is a *pipeline.StoreLockHeldError naming that run.
	LockWait time.Duration
	// Writers is how many plans a run records at once (apply's
	// --concurrency): with more than one, an SQLite store's journal waits
	// briefly for the others' records while they come fast, so that they
	// share a commit (journal.go, lingerFor); 0 or 1: never.
	Writers int
	// clock is the time the store's waits run on (the real one; the
	// package's tests put a fake one).
	clock pace.Clock
}

// OpenWith opens the store at location: a postgres:// or postgresql://
// URL, or the path of an SQLite file (created with its folder when
// missing). It checks that the store is reachable and usable and runs the
// migrations it lacks. Every error names the store (without its
// password).
func OpenWith(ctx context.Context, location string, o Options) (*Store, error) {
	if IsPostgres(location) {
		return openPostgres(ctx, location, o)
	}
	return openSQLite(ctx, location, o)
}

func openSQLite(ctx context.Context, path string, o Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("no state store path given")
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the state store %s is not a regular file", path)
	}
	if err := checkSQLite(ctx, path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("the state store %s: cannot create its folder: %w", path, err)
	}
	// A new store is its owner's alone (client plan names and counters,
	// who ran what): created here with mode 0600 (an empty file is an
	// empty SQLite database); O_EXCL leaves a file another run just
	// created alone.
	if fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		fh.Close()
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("the state store %s: %w", path, err)
	}
	// apply reads the store from every plan it compares at once (8 by
	// default): connections are kept for the store's life rather than
	// opened (pragmas run, caches cold) and closed again for each read.
	db.SetMaxIdleConns(sqliteIdleConns)
	s := &Store{db: db, dialect: dialectSQLite, where: path, writers: o.Writers, clock: o.clock}
	// Two runs opening a new file at once: switching it to WAL can fail at
	// once with SQLITE_BUSY (SQLite does not wait on its busy timeout
	// there); try again every sqliteBusyPoll for as long as the busy
	// timeout would wait (a pace poll).
	err = s.clock.Poll(sqliteBusyPoll, s.clock.Time().Add(sqliteBusyWait)).Call(ctx, func(pace.Attempt) pace.Verdict {
		err := s.init(ctx)
		if err != nil && isBusy(err) {
			return pace.Again(err)
		}
		return pace.Done(err)
	})
	var oot *pace.OutOfTime
	var ie *pace.Interrupted
	switch {
	case errors.As(err, &ie):
		db.Close()
		return nil, ie.Cause
	case errors.As(err, &oot):
		err = oot.Last
	}
	if err != nil {
		db.Close()
		return nil, s.explain(err)
	}
	sidecarModes(path)
	return s, nil
}

// sidecarModes gives the write-ahead log and shared-memory files of the
// SQLite store at path the store's own permissions (as SQLite's C library
// does): a private store keeps its recent writes private too.
func sidecarModes(path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if ss, err := os.Stat(side); err == nil && ss.Mode().Perm() != st.Mode().Perm() {
			os.Chmod(side, st.Mode().Perm()) // best effort: the owner may be another user
		}
	}
}

// sqliteIdleConns is how many connections an SQLite store keeps open
// when idle, besides the journal's: one for each plan apply compares at
// once (pipeline.DefaultConcurrency), and more for a larger --concurrency.
// Each keeps SQLite's page cache (at most 2 MiB).
const sqliteIdleConns = 16

// sqliteBusyWait is how long an SQLite store waits for another program's
// lock (the busy_timeout of its connections).
const sqliteBusyWait = 10 * time.Second

// sqliteBusyPoll is how often a new SQLite store that was busy at its
// first use is tried again (within sqliteBusyWait).
const sqliteBusyPoll = 25 * time.Millisecond

func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY")
}

func openPostgres(ctx context.Context, location string, o Options) (*Store, error) {
	where := Redact(location)
	db, err := sql.Open("pgx", location)
	if err != nil {
		return nil, fmt.Errorf("the state store %s: %v", where, scrub(err, location))
	}
	s := &Store{db: db, dialect: dialectPostgres, where: where, lockWait: o.LockWait, clock: o.clock}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the state store %s is unreachable: %v", where, scrub(err, location))
	}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, s.explain(err)
	}
	return s, nil
}

// scrub removes the password of location from an error message.
func scrub(err error, location string) string {
	msg := err.Error()
	if u, perr := url.Parse(location); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		if pw := u.Query().Get("password"); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// explain turns SQLite's terse errors into messages that say what to do.
func (s *Store) explain(err error) error {
	var held *pipeline.StoreLockHeldError
	if err == nil || errors.Is(err, pipeline.ErrStoreTooNew) || errors.As(err, &held) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY"):
		return fmt.Errorf("the state store %s is locked by another program (another eepipe run?) and stayed locked: %w; "+
			"wait for it to finish, or give another store with --state", s.where, err)
	case strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLITE_FULL"):
		return fmt.Errorf("the disk holding the state store %s is full (%w): free space there (the store's -wal and -shm files "+
			"beside it grow too) and run again; what was recorded before is kept", s.where, err)
	case strings.Contains(msg, "disk I/O error") || strings.Contains(msg, "SQLITE_IOERR"):
		return fmt.Errorf("the state store %s could not be read or written (%w): the disk holding it is full (the store's -wal "+
			"and -shm files beside it grow too) or failing, or the store was moved or deleted while in use; "+
			"check free space and the disk, then run again; what was recorded before is kept", s.where, err)
	case strings.Contains(msg, "file is not a database") || strings.Contains(msg, "malformed") || strings.Contains(msg, "SQLITE_NOTADB") || strings.Contains(msg, "SQLITE_CORRUPT"):
		return fmt.Errorf("the state store %s is damaged or not an eepipe state store (%w); "+
			"move it aside (the run history it holds is then lost to eepipe) or give another store with --state", s.where, err)
	}
	return fmt.Errorf("the state store %s: %w", s.where, err)
}

// Where returns the store's location without secrets.
func (s *Store) Where() string { return s.where }

// Postgres reports whether the store is PostgreSQL.
func (s *Store) Postgres() bool { return s.dialect == dialectPostgres }

// Close commits the records queued and closes the store.
func (s *Store) Close() error {
	s.closeJournal()
	s.inMu.Lock()
	for _, st := range s.inStmts {
		st.Close()
	}
	s.inStmts = nil
	s.inMu.Unlock()
	return s.db.Close()
}

// q rewrites the ? placeholders of query for the backend.
func (s *Store) q(query string) string { return rebind(s.dialect, query) }

// rebind rewrites the ? placeholders of query for backend d.
func rebind(d dialect, query string) string {
	if d != dialectPostgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// timeFormat is a fixed-width UTC layout: stored times sort as text.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// BeginRun implements pipeline.StateStore.
func (s *Store) BeginRun(ctx context.Context, r pipeline.RunRecord) (int64, error) {
	accounts := map[string]bool{}
	for _, a := range r.Accounts {
		accounts[a] = true
	}
	if err := s.accounts.add(ctx, s.db, s.dialect, accounts); err != nil {
		return 0, s.explain(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.explain(err)
	}
	defer tx.Rollback()
	var cset any
	if r.ChangeSet != "" {
		cset = r.ChangeSet
	}
	status := r.Status
	if status == "" {
		status = pipeline.RunRunning
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO eepipe_runs (started, usr, host, command, service, status, change_set)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		fmtTime(r.Started), r.User, r.Host, r.Command, r.Service, status, cset).Scan(&id)
	if err != nil {
		return 0, s.explain(err)
	}
	if r.Signer != "" {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE eepipe_runs SET signer = ? WHERE id = ?`), r.Signer, id); err != nil {
			return 0, s.explain(err)
		}
	}
	if err := interruptEarlier(ctx, tx, s.dialect, id, r); err != nil {
		return 0, s.explain(err)
	}
	for _, f := range r.Files {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_run_files (run_id, path, sha256) VALUES (?, ?, ?)`), id, f.Path, f.SHA256); err != nil {
			return 0, s.explain(err)
		}
	}
	for _, a := range r.Accounts {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_run_accounts (run_id, account) VALUES (?, ?)`), id, a); err != nil {
			return 0, s.explain(err)
		}
	}
	if err := s.recordKeyServices(ctx, tx, id, r.Service, r.Keys); err != nil {
		return 0, s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.explain(err)
	}
	return id, nil
}

// RecordPending implements pipeline.StateStore: the writes are recorded
// with their counters and the outcome "pending" before their requests are
// sent; RecordWrite of a write with its id records its answer.
func (s *Store) RecordPending(ctx context.Context, runID int64, ws []pipeline.TargetWrite) ([]int64, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	ps := make([]pipeline.TargetWrite, len(ws))
	for i, w := range ws {
		w.Outcome = pendingOutcome
		ps[i] = w
	}
	o := &op{kind: opWrites, run: runID, ws: ps}
	if err := s.submit(o); err != nil {
		return nil, err
	}
	return o.ids, nil
}

// RecordWrite implements pipeline.StateStore: the write, its counters and
// (when it succeeded) the last values applied, in one transaction; for a
// write recorded as pending (w.ID set), its outcome and the last values.
// Writes recorded at the same time share a transaction (journal.go).
func (s *Store) RecordWrite(ctx context.Context, runID int64, w pipeline.TargetWrite) error {
	return s.RecordWrites(ctx, runID, []pipeline.TargetWrite{w})
}

// RecordWrites implements pipeline.StateStore: the writes, their counters
// and (for those that succeeded) the last values applied, in one
// transaction; for the writes recorded as pending (w.ID set), their
// outcomes and the last values. Outcomes alone are not waited for (the
// writes are on record as pending already): a failure fails the next
// record waited for.
func (s *Store) RecordWrites(ctx context.Context, runID int64, ws []pipeline.TargetWrite) error {
	if len(ws) == 0 {
		return nil
	}
	o := &op{kind: opWrites, run: runID, ws: ws}
	for _, w := range ws {
		if w.ID == 0 {
			return s.submit(o)
		}
	}
	return s.submitLater(o)
}

// ResolvePending implements pipeline.StateStore, in one transaction.
func (s *Store) ResolvePending(ctx context.Context, runID int64, ws []pipeline.TargetWrite) error {
	if len(ws) == 0 {
		return nil
	}
	return s.submit(&op{kind: opResolve, run: runID, ws: ws})
}

// FinishRun implements pipeline.StateStore: after every record queued
// before it, and made durable.
func (s *Store) FinishRun(ctx context.Context, runID int64, status string, finished time.Time) error {
	return s.submit(&op{kind: opFinish, run: runID, status: status, at: finished})
}

// LastWrites implements pipeline.StateStore. The last value applied to a
// counter is looked up by the service's own target id, whatever name the
// account had in the configuration of the run that wrote it (a target id
// belongs to one account of the service): a consultant's "default" and a
// cron host's "acme-prod" share the history of one key pair's targets.
// When runs under several names wrote a counter, the latest write counts.
func (s *Store) LastWrites(ctx context.Context, service, account string, targetIDs []int64) (map[pipeline.CounterKey]pipeline.LastWrite, error) {
	s.flush()
	type found struct {
		k pipeline.CounterKey
		e lastEntry
	}
	var all []found
	writes := map[int64]*pipeline.LastWrite{} // by write id: its run, time and file
	name := s.names.namer(ctx, s.db)
	var col sql.RawBytes
	err := s.eachByID(ctx, `SELECT target_id, counters FROM eepipe_last_values WHERE service = ? AND target_id IN `,
		service, targetIDs, func(rows *sql.Rows) error {
			var target int64
			if err := rows.Scan(&target, &col); err != nil {
				return err
			}
			return eachLast(col, name, func(counter string, e lastEntry) {
				all = append(all, found{pipeline.CounterKey{TargetID: target, Counter: counter}, e})
				if e.write != 0 {
					writes[e.write] = nil
				}
			})
		})
	if err != nil {
		return nil, err
	}
	if err := s.writeSources(ctx, writes); err != nil {
		return nil, err
	}
	out := map[pipeline.CounterKey]pipeline.LastWrite{}
	for _, f := range all {
		lw := pipeline.LastWrite{Value: f.e.value, RunID: f.e.run, At: parseTime(f.e.at), File: f.e.file}
		if f.e.write != 0 {
			src := writes[f.e.write]
			if src == nil {
				continue // a write the store no longer has
			}
			lw.RunID, lw.At, lw.File = src.RunID, src.At, src.File
		}
		if prev, ok := out[f.k]; !ok || !later(prev.At, prev.RunID, lw.At, lw.RunID) {
			out[f.k] = lw
		}
	}
	return out, nil
}

// writeSources fills writes (by id) with each write's run, time and file.
func (s *Store) writeSources(ctx context.Context, writes map[int64]*pipeline.LastWrite) error {
	ids := make([]int64, 0, len(writes))
	for id := range writes {
		ids = append(ids, id)
	}
	return s.eachIn(ctx, `SELECT id, run_id, at, file FROM eepipe_writes WHERE id IN `, nil, ids, func(rows *sql.Rows) error {
		var (
			id int64
			lw pipeline.LastWrite
			at string
		)
		if err := rows.Scan(&id, &lw.RunID, &at, &lw.File); err != nil {
			return err
		}
		lw.At = parseTime(at)
		writes[id] = &lw
		return nil
	})
}

// PendingWrites implements pipeline.PendingWriteSource: the writes to
// the given targets of service recorded before their request was sent
// whose answer was never recorded (their run was killed, or lost the end
// of its journal), with their counters, oldest first.
func (s *Store) PendingWrites(ctx context.Context, service string, targetIDs []int64) ([]pipeline.PendingWrite, error) {
	s.flush()
	var out []pipeline.PendingWrite
	name := s.names.namer(ctx, s.db)
	var col sql.RawBytes
	err := s.eachByID(ctx, `SELECT w.id, w.run_id, w.account, w.plan_id, w.plan_name, w.milestone_id, w.target_id, w.year_number,
		w.financial_year, w.target_type, w.file, w.at, w.counters
		FROM eepipe_writes w JOIN eepipe_runs r ON r.id = w.run_id
		WHERE r.service = ? AND w.outcome = 'pending' AND w.target_id IN `, service, targetIDs, func(rows *sql.Rows) error {
		var (
			p  pipeline.PendingWrite
			at string
		)
		w := &p.Write
		if err := rows.Scan(&w.ID, &p.RunID, &w.Account, &w.PlanID, &w.PlanName, &w.MilestoneID, &w.TargetID, &w.YearNumber,
			&w.FinancialYear, &w.TargetType, &w.File, &at, &col); err != nil {
			return err
		}
		cs, err := unpackWriteCounters(col, name)
		if err != nil {
			return err
		}
		w.Counters, w.At, w.Outcome = cs, parseTime(at), pendingOutcome
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b pipeline.PendingWrite) int { return cmp.Compare(a.Write.ID, b.Write.ID) })
	return out, nil
}

// RecordFields implements pipeline.StateStore: the plan fields run runID
// applied become their last applied values, in one transaction.
func (s *Store) RecordFields(ctx context.Context, runID int64, ws []pipeline.FieldWrite) error {
	if len(ws) == 0 {
		return nil
	}
	return s.submit(&op{kind: opFields, run: runID, fws: ws})
}

// LastFields implements pipeline.StateStore. As LastWrites, the plan is
// known by the service's own id, whatever name the account had in the
// run that applied the field; the latest write counts.
func (s *Store) LastFields(ctx context.Context, service, account string, planIDs []int64) (map[pipeline.FieldKey]pipeline.LastFieldWrite, error) {
	s.flush()
	out := map[pipeline.FieldKey]pipeline.LastFieldWrite{}
	err := s.eachByID(ctx, `SELECT plan_id, field, value, run_id, at, file FROM eepipe_last_fields WHERE service = ? AND plan_id IN `,
		service, planIDs, func(rows *sql.Rows) error {
			var (
				k  pipeline.FieldKey
				lw pipeline.LastFieldWrite
				at string
			)
			if err := rows.Scan(&k.PlanID, &k.Field, &lw.Value, &lw.RunID, &at, &lw.File); err != nil {
				return err
			}
			lw.At = parseTime(at)
			if prev, ok := out[k]; !ok || !later(prev.At, prev.RunID, lw.At, lw.RunID) {
				out[k] = lw
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachByID runs query (ending in "IN ") for service over ids,
// deduplicated and in chunks that bound the IN list, calling scan for each
// row.
func (s *Store) eachByID(ctx context.Context, query, service string, ids []int64, scan func(*sql.Rows) error) error {
	return s.eachIn(ctx, query, []any{service}, ids, scan)
}

// eachIn runs query (ending in "IN ") with the arguments before over
// ids, deduplicated and in chunks that bound the IN list, calling scan
// for each row. A chunk's IN list is padded (with its last id again) to
// one of a few lengths, so that each query is prepared once per
// connection for the store's life (inStmt), not once per call: apply
// reads a few targets of every plan.
func (s *Store) eachIn(ctx context.Context, query string, before []any, ids []int64, scan func(*sql.Rows) error) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for start := 0; start < len(ids); start += inChunk {
		part := ids[start:min(start+inChunk, len(ids))]
		n := inLength(len(part))
		args := make([]any, 0, n+len(before))
		args = append(args, before...)
		for _, id := range part {
			args = append(args, id)
		}
		for range n - len(part) {
			args = append(args, part[len(part)-1])
		}
		st, err := s.inStmt(ctx, query, n)
		if err != nil {
			return s.explain(err)
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return s.explain(err)
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return s.explain(err)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return s.explain(err)
		}
	}
	return nil
}

// inChunk bounds the IN list of one of eachIn's queries.
const inChunk = 512

// inLength returns the length of the IN list that holds n ids: the next
// power of two from 8 (so at most 7 statements a query).
func inLength(n int) int {
	l := 8
	for l < n {
		l *= 2
	}
	return l
}

// inStmt returns query followed by an IN list of n placeholders,
// prepared.
func (s *Store) inStmt(ctx context.Context, query string, n int) (*sql.Stmt, error) {
	k := inQuery{query, n}
	s.inMu.Lock()
	defer s.inMu.Unlock()
	if st, ok := s.inStmts[k]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.q(query+`(?`+strings.Repeat(", ?", n-1)+`)`))
	if err != nil {
		return nil, err
	}
	if s.inStmts == nil {
		s.inStmts = map[inQuery]*sql.Stmt{}
	}
	s.inStmts[k] = st
	return st, nil
}

// later reports whether the write at (at, runID) is later than the one at
// (other, otherRun): a later time, or the same time and a later run.
func later(at time.Time, runID int64, other time.Time, otherRun int64) bool {
	return at.After(other) || at.Equal(other) && runID > otherRun
}

const runColumns = `r.id, r.started, COALESCE(r.finished, ''), r.usr, r.host, r.command, r.service, r.status, COALESCE(r.change_set, ''), COALESCE(r.signer, '')`

func scanRun(sc interface{ Scan(...any) error }) (pipeline.RunRecord, error) {
	var r pipeline.RunRecord
	var started, finished string
	err := sc.Scan(&r.ID, &started, &finished, &r.User, &r.Host, &r.Command, &r.Service, &r.Status, &r.ChangeSet, &r.Signer)
	r.Started = parseTime(started)
	if finished != "" {
		r.Finished = parseTime(finished)
	}
	return r, err
}

// ChangeSetRun implements pipeline.StateStore: the first run that carried
// the change set to its end (status ok). Runs that stopped or failed part
// of it do not count: the set is applied when its writes are.
func (s *Store) ChangeSetRun(ctx context.Context, sig string) (*pipeline.RunRecord, error) {
	s.flush()
	r, err := scanRun(s.db.QueryRowContext(ctx, s.q(`SELECT `+runColumns+` FROM eepipe_runs r
		WHERE r.change_set = ? AND r.status = 'ok' ORDER BY r.id LIMIT 1`), sig))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.explain(err)
	}
	return &r, nil
}

// ChangeSetProgress returns what earlier runs of the change set with this
// signature wrote: the runs that recorded a write, and the plans their
// creates made. A set no run wrote from has a zero progress.
func (s *Store) ChangeSetProgress(ctx context.Context, sig string) (pipeline.SavedProgress, error) {
	var p pipeline.SavedProgress
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT r.id FROM eepipe_runs r WHERE r.change_set = ?
		AND (EXISTS (SELECT 1 FROM eepipe_writes w WHERE w.run_id = r.id)
		  OR EXISTS (SELECT 1 FROM eepipe_plan_writes p WHERE p.run_id = r.id AND p.outcome = 'ok'))
		ORDER BY r.id`), sig)
	if err != nil {
		return p, s.explain(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return p, s.explain(err)
		}
		p.Runs = append(p.Runs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, s.explain(err)
	}
	rows, err = s.db.QueryContext(ctx, s.q(`SELECT p.account, p.plan_id FROM eepipe_plan_writes p JOIN eepipe_runs r ON r.id = p.run_id
		WHERE r.change_set = ? AND p.action = 'create' AND p.outcome = 'ok' AND p.plan_id > 0 ORDER BY p.id`), sig)
	if err != nil {
		return p, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c pipeline.SavedCreated
		if err := rows.Scan(&c.Account, &c.PlanID); err != nil {
			return p, s.explain(err)
		}
		p.Created = append(p.Created, c)
	}
	return p, s.explain(rows.Err())
}

// Runs implements pipeline.StateStore.
func (s *Store) Runs(ctx context.Context, q pipeline.HistoryQuery) ([]pipeline.RunRecord, error) {
	s.flush()
	query := `SELECT ` + runColumns + ` FROM eepipe_runs r WHERE 1=1`
	var args []any
	if q.Service != "" {
		query += ` AND r.service = ?`
		args = append(args, q.Service)
	}
	if q.Account != "" {
		query += ` AND EXISTS (SELECT 1 FROM eepipe_run_accounts a WHERE a.run_id = r.id AND ` + accountMatch("a.account") + `)`
		args = append(args, pipeline.AccountKey(q.Account))
	}
	if q.PlanID != 0 || q.Counter != "" {
		query += ` AND (EXISTS (SELECT 1 FROM eepipe_writes w WHERE w.run_id = r.id`
		if q.PlanID != 0 {
			query += ` AND w.plan_id = ?`
			args = append(args, q.PlanID)
		}
		if q.Counter != "" {
			id, known, err := s.names.id(ctx, s.db, q.Counter)
			if err != nil {
				return nil, s.explain(err)
			}
			if !known {
				id = 0 // no write has it
			}
			query += ` AND ` + s.holds("w.counters")
			args = append(args, counterNeedle(id))
		}
		query += `)`
		if q.Counter == "" {
			// A run that created or updated the plan without patching a target.
			query += ` OR EXISTS (SELECT 1 FROM eepipe_plan_writes p WHERE p.run_id = r.id AND p.plan_id = ?)`
			args = append(args, q.PlanID)
		}
		query += `)`
	}
	if !q.Since.IsZero() {
		query += ` AND r.started >= ?`
		args = append(args, fmtTime(q.Since))
	}
	query += ` ORDER BY r.id`
	if q.Limit > 0 {
		query += ` LIMIT ` + strconv.Itoa(q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []pipeline.RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	for i := range out {
		if err := s.runDetails(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) runDetails(ctx context.Context, r *pipeline.RunRecord) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT path, sha256 FROM eepipe_run_files WHERE run_id = ? ORDER BY path`), r.ID)
	if err != nil {
		return s.explain(err)
	}
	for rows.Next() {
		var f pipeline.InputFile
		if err := rows.Scan(&f.Path, &f.SHA256); err != nil {
			rows.Close()
			return s.explain(err)
		}
		r.Files = append(r.Files, f)
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, s.q(`SELECT account FROM eepipe_run_accounts WHERE run_id = ? ORDER BY account`), r.ID)
	if err != nil {
		return s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return s.explain(err)
		}
		r.Accounts = append(r.Accounts, a)
	}
	return s.explain(rows.Err())
}

// holds returns the condition that the packed counters column col
// holds the needle given as its argument (counterNeedle).
func (s *Store) holds(col string) string {
	if s.dialect == dialectPostgres {
		return `strpos(` + col + `, ?) > 0`
	}
	return `instr(` + col + `, ?) > 0`
}

// History implements pipeline.StateStore: an entry a counter of each
// write, in the order of the writes and of their counters.
func (s *Store) History(ctx context.Context, q pipeline.HistoryQuery) ([]pipeline.HistoryEntry, error) {
	s.flush()
	query := `SELECT ` + runColumns + `, w.account, w.plan_id, w.plan_name, w.target_id, w.year_number, w.financial_year,
		w.target_type, w.file, w.outcome, w.at, w.counters
		FROM eepipe_writes w JOIN eepipe_runs r ON r.id = w.run_id WHERE 1=1`
	var args []any
	if q.Service != "" {
		query += ` AND r.service = ?`
		args = append(args, q.Service)
	}
	if q.Account != "" {
		query += ` AND ` + accountMatch("w.account")
		args = append(args, pipeline.AccountKey(q.Account))
	}
	if q.PlanID != 0 {
		query += ` AND w.plan_id = ?`
		args = append(args, q.PlanID)
	}
	if q.Counter != "" {
		id, known, err := s.names.id(ctx, s.db, q.Counter)
		if err != nil {
			return nil, s.explain(err)
		}
		if !known {
			return nil, nil // no write has it
		}
		query += ` AND ` + s.holds("w.counters")
		args = append(args, counterNeedle(id))
	}
	if !q.Since.IsZero() {
		query += ` AND w.at >= ?`
		args = append(args, fmtTime(q.Since))
	}
	query += ` ORDER BY w.id`
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []pipeline.HistoryEntry
	name := s.names.namer(ctx, s.db)
	var col sql.RawBytes
	for rows.Next() && (q.Limit <= 0 || len(out) < q.Limit) {
		var (
			e                     pipeline.HistoryEntry
			started, finished, at string
		)
		err := rows.Scan(&e.Run.ID, &started, &finished, &e.Run.User, &e.Run.Host, &e.Run.Command, &e.Run.Service, &e.Run.Status, &e.Run.ChangeSet, &e.Run.Signer,
			&e.Account, &e.PlanID, &e.PlanName, &e.TargetID, &e.YearNumber, &e.FinancialYear, &e.TargetType, &e.File, &e.Outcome, &at, &col)
		if err != nil {
			return nil, s.explain(err)
		}
		e.Run.Started = parseTime(started)
		if finished != "" {
			e.Run.Finished = parseTime(finished)
		}
		e.At = parseTime(at)
		cs, err := unpackWriteCounters(col, name)
		if err != nil {
			return nil, s.explain(err)
		}
		for _, c := range cs {
			if q.Counter != "" && c.Counter != q.Counter || q.Limit > 0 && len(out) >= q.Limit {
				continue
			}
			e.Counter, e.Before, e.After, e.Sent = c.Counter, c.Before, c.After, c.Sent
			out = append(out, e)
		}
	}
	return out, s.explain(rows.Err())
}

// RecordPlanWrite implements pipeline.StateStore.
// It does not wait for the commit: a failure fails the next record waited
// for (the target writes recorded before they are sent).
func (s *Store) RecordPlanWrite(ctx context.Context, runID int64, w pipeline.PlanWrite) error {
	return s.submitLater(&op{kind: opPlan, run: runID, pw: w})
}

// PlanWrites implements pipeline.StateStore.
func (s *Store) PlanWrites(ctx context.Context, q pipeline.HistoryQuery) ([]pipeline.PlanWriteEntry, error) {
	s.flush()
	query := `SELECT p.run_id, p.account, p.plan_id, p.plan_name, p.action, p.outcome, p.at
		FROM eepipe_plan_writes p JOIN eepipe_runs r ON r.id = p.run_id WHERE 1=1`
	var args []any
	if q.Service != "" {
		query += ` AND r.service = ?`
		args = append(args, q.Service)
	}
	if q.Account != "" {
		query += ` AND ` + accountMatch("p.account")
		args = append(args, pipeline.AccountKey(q.Account))
	}
	if q.PlanID != 0 {
		query += ` AND p.plan_id = ?`
		args = append(args, q.PlanID)
	}
	if !q.Since.IsZero() {
		query += ` AND p.at >= ?`
		args = append(args, fmtTime(q.Since))
	}
	query += ` ORDER BY p.id`
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []pipeline.PlanWriteEntry
	for rows.Next() {
		var e pipeline.PlanWriteEntry
		var at string
		if err := rows.Scan(&e.RunID, &e.Account, &e.PlanID, &e.PlanName, &e.Action, &e.Outcome, &at); err != nil {
			return nil, s.explain(err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, s.explain(rows.Err())
}
