package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/eepipe/eepipe/pipeline"
)

// The write journal: every record of a run (target writes, their answers,
// plan requests, plan fields, the end of the run) goes through one writer
// goroutine per Store, which commits whatever has queued while it
// committed the previous batch in one transaction (group commit). A
// caller waits for the commit of its batch, so a record it was told is
// made is in the store; what many concurrent requests record costs one
// transaction, not one each; a record nobody waits for goes with the next
// commit (holdFor). On PostgreSQL, more writers share the queue of what
// is waited for, and what is not has a writer of its own. See
// docs/apply-and-state.md, "The state store", for what a crash can lose.

// pendingOutcome is the outcome of a target write recorded before its
// request is sent (RecordPending); its answer replaces it.
const pendingOutcome = pipeline.OutcomePending

// pgWaitedWriters is how many connections of a PostgreSQL store commit
// the records waited for.
const pgWaitedWriters = 2

// maxBatch bounds the records of one transaction.
const maxBatch = 512

// durableEvery is how often at most an SQLite store's journal makes its
// commits durable (synchronous FULL for one transaction, or a checkpoint
// when the journal is idle): a power cut loses at most about that much of
// the history.
const durableEvery = time.Second

type opKind int

const (
	opWrites  opKind = iota // target writes with their counters (pending, or with an outcome)
	opOutcome               // the answer of a pending target write
	opPlan                  // a plan request
	opFields                // plan fields applied
	opFinish                // the end of a run (made durable)
	opResolve               // what became of writes another run left pending
	opSync                  // nothing: done once every record queued before it is
)

// op is one record the journal makes; done gets its error once its batch
// is committed (or failed).
type op struct {
	kind   opKind
	run    int64
	ws     []pipeline.TargetWrite // opWrites; opOutcome: one, with its ID
	ids    []int64                // opWrites: the ids given to ws
	pw     pipeline.PlanWrite
	fws    []pipeline.FieldWrite
	status string
	at     time.Time
	later  bool // queued without waiting (submitLater)
	done   chan error
}

// journal is the writer goroutine of a Store.
type journal struct {
	s      *Store
	sqlite *sqliteStmts // the SQLite statements of the journal's connection
	ops    chan *op
	stop   chan struct{}
	ended  chan struct{}
	once   sync.Once
}

// submit queues o and waits for its batch's commit.
func (s *Store) submit(o *op) error {
	if err := s.queue(o); err != nil {
		return err
	}
	return <-o.done
}

// submitLater queues o without waiting for its commit. When it fails, the
// next record waited for (submit) fails with its error instead of being
// made, so that a run learns of it before its next write.
func (s *Store) submitLater(o *op) error {
	o.later = true
	s.jlater.Add(1)
	if err := s.queue(o); err != nil {
		s.jlater.Add(-1)
		return err
	}
	return nil
}

// flush waits until the records queued without waiting are committed (or
// failed), so that a read sees them.
func (s *Store) flush() {
	if s.jlater.Load() == 0 {
		return
	}
	for _, later := range []bool{true, false} {
		o := &op{kind: opSync}
		o.later = later // on the queue of what is not waited for, then the other
		if s.queue(o) == nil {
			<-o.done
		}
	}
}

func (s *Store) queue(o *op) error {
	s.jonce.Do(func() {
		start := func() *journal {
			j := &journal{s: s, ops: make(chan *op, 4*maxBatch), stop: make(chan struct{}), ended: make(chan struct{})}
			go j.loop()
			return j
		}
		s.j = start()
		s.jl = s.j
		s.jw = []*journal{s.j}
		if s.dialect == dialectPostgres {
			// More connections for what is waited for, taking from one
			// queue: while one waits for the server to commit a batch,
			// another sends the records queued meanwhile, so that a
			// record waits about one round trip, not the end of the one
			// before it too. A record waited for is committed before
			// anything that depends on it is queued (an answer, after
			// its pending write), so their order does not matter.
			for range pgWaitedWriters - 1 {
				j := &journal{s: s, ops: s.j.ops, stop: make(chan struct{}), ended: make(chan struct{})}
				go j.loop()
				s.jw = append(s.jw, j)
			}
			// A connection for what is not waited for: the server works
			// on it at the same time. The end of a run follows the
			// answers on their connection.
			s.jl = start()
			s.jw = append(s.jw, s.jl)
		}
	})
	if !o.later && o.kind != opSync && o.kind != opFinish {
		s.jmu.Lock()
		err := s.jfailed
		s.jfailed = nil
		s.jmu.Unlock()
		if err != nil {
			return err
		}
	}
	j := s.j
	if o.later || o.kind == opFinish {
		j = s.jl
	}
	o.done = make(chan error, 1)
	select {
	case j.ops <- o:
		return nil
	case <-j.ended:
		return fmt.Errorf("the state store %s is closed", s.where)
	}
}

// closeJournal commits what is queued and stops the writers.
func (s *Store) closeJournal() {
	if s.j == nil {
		return
	}
	for _, j := range slices.Backward(s.jw) {
		j.once.Do(func() { close(j.stop) })
		<-j.ended
	}
}

func (j *journal) loop() {
	defer close(j.ended)
	ctx := context.Background()
	var conn *sql.Conn
	defer func() {
		if j.sqlite != nil {
			for _, st := range j.sqlite.byQ {
				st.Close()
			}
		}
		if conn != nil {
			conn.Close()
		}
	}()
	lastDurable := time.Now()
	dirty := false // committed, not yet durable (SQLite)
	idle := time.NewTimer(time.Hour)
	defer idle.Stop()
	// held are records not waited for, kept for the next commit (see
	// holdFor); hold fires when the oldest has waited holdFor.
	var held []*op
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	defer hold.Stop()
	commit := func(batch []*op) {
		if conn == nil {
			c, err := j.s.db.Conn(ctx)
			if err != nil {
				for _, o := range batch {
					j.answer(o, j.s.explain(err))
				}
				return
			}
			conn = c
			if j.s.dialect == dialectSQLite {
				// Checkpoint (copy the log into the database file) every
				// walCheckpointPages pages rather than SQLite's 1,000: a
				// run's commits rewrite the same pages, copied once
				// instead of several times. The journal also checkpoints
				// when it goes idle, and SQLite when the store closes.
				conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = `+strconv.Itoa(walCheckpointPages))
			}
		}
		durable := j.s.dialect == dialectSQLite && (time.Since(lastDurable) >= durableEvery || hasFinish(batch))
		errs, unreported := j.commit(ctx, conn, batch, durable)
		for i, o := range batch {
			j.answer(o, errs[i])
		}
		if unreported != nil {
			j.s.jmu.Lock()
			if j.s.jfailed == nil {
				j.s.jfailed = unreported
			}
			j.s.jmu.Unlock()
		}
		if j.s.dialect == dialectSQLite {
			if durable {
				dirty, lastDurable = false, time.Now()
			} else {
				dirty = true
				idle.Reset(durableEvery)
			}
		}
	}
	for {
		var first *op
		select {
		case first = <-j.ops:
		case <-hold.C:
			batch := held
			held = nil
			commit(batch)
			continue
		case <-idle.C:
			if dirty && conn != nil && len(held) == 0 {
				// Idle after commits a power cut could lose: sync them.
				conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
				dirty, lastDurable = false, time.Now()
			}
			continue
		case <-j.stop:
			select {
			case first = <-j.ops:
			default:
				if len(held) > 0 {
					commit(held)
				}
				return
			}
		}
		batch := []*op{first}
		// Let the requests whose records the last commit answered queue
		// their next records: a few yields gather a batch at the cost of
		// microseconds, not milliseconds.
		for range 3 {
			runtime.Gosched()
			if len(j.ops) == 0 {
				break
			}
		drain:
			for len(batch) < maxBatch {
				select {
				case o := <-j.ops:
					batch = append(batch, o)
				default:
					break drain
				}
			}
		}
		if !slices.ContainsFunc(batch, func(o *op) bool { return !holdable(o) }) && len(held)+len(batch) < maxBatch {
			// Nothing waits for these: they go with the next commit.
			if len(held) == 0 {
				hold.Reset(holdFor)
			}
			held = append(held, batch...)
			continue
		}
		if len(held) > 0 {
			batch = append(held, batch...)
			held = nil
			hold.Stop()
		}
		commit(batch)
	}
}

// walCheckpointPages is the size of the SQLite write-ahead log (in pages
// of 4 KiB) at which a commit of the journal checkpoints it.
const walCheckpointPages = 8192

// holdFor bounds how long a record not waited for (the answers of a
// plan's writes, a plan request) waits for the next commit, which is
// usually the next plan's pending writes: fewer, larger transactions.
// A kill loses at most what was queued in the last holdFor; the writes
// whose answers it was are pending in the store (docs/apply-and-state.md, "The state
// store").
const holdFor = 50 * time.Millisecond

// holdable reports whether o may wait for the next commit: a record not
// waited for.
func holdable(o *op) bool {
	return o.later && o.kind != opSync && o.kind != opFinish
}

// answer gives o its error, once its batch is committed.
func (j *journal) answer(o *op, err error) {
	if o.later && o.kind != opSync {
		j.s.jlater.Add(-1)
	}
	o.done <- err
}

func hasFinish(batch []*op) bool {
	for _, o := range batch {
		if o.kind == opFinish {
			return true
		}
	}
	return false
}

// commit records batch in one transaction; when it fails, each record is
// tried again in a transaction of its own, so that one bad record fails
// alone. It returns each record's error; the failure of a record not
// waited for is the error of the next record waited for in the batch
// (which is then not made), or else returned as unreported, for the next
// record waited for (Store.queue).
func (j *journal) commit(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) (errs []error, unreported error) {
	errs = make([]error, len(batch))
	if !slices.ContainsFunc(batch, func(o *op) bool { return o.kind != opSync }) {
		return errs, nil
	}
	err := j.tx(ctx, conn, batch, durable)
	if err == nil || len(batch) == 1 {
		for i, o := range batch {
			errs[i] = err
			if err != nil && holdable(o) {
				unreported = err
			}
		}
		return errs, unreported
	}
	for i, o := range batch {
		if unreported != nil && !o.later && o.kind != opSync && o.kind != opFinish {
			errs[i], unreported = unreported, nil
			continue
		}
		errs[i] = j.tx(ctx, conn, []*op{o}, durable)
		if errs[i] != nil && holdable(o) && unreported == nil {
			unreported = errs[i]
		}
	}
	return errs, unreported
}

func (j *journal) tx(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) error {
	var err error
	if j.s.dialect == dialectPostgres {
		err = j.pgBatch(ctx, conn, batch)
	} else {
		err = j.sqliteTx(ctx, conn, batch, durable)
	}
	return j.s.explain(err)
}

// sqliteTx records batch in one SQLite transaction on the journal's
// connection, with statements prepared once for the journal's life;
// durable commits it with synchronous FULL.
func (j *journal) sqliteTx(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) (err error) {
	if j.sqlite == nil || j.sqlite.conn != conn {
		j.sqlite = &sqliteStmts{conn: conn, counters: sqliteCounterRows, outcomes: sqliteOutcomeRows, lasts: sqliteLastRows}
	}
	st := j.sqlite
	st.resetRows()
	if durable {
		if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
			return err
		}
		defer conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`)
	}
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	for _, o := range batch {
		if err := st.record(ctx, o); err != nil {
			conn.ExecContext(ctx, `ROLLBACK`)
			return err
		}
	}
	if err := st.flushRows(ctx); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	return nil
}

// sqliteStmts are the prepared statements of the journal's SQLite
// connection, prepared on first use, and the service of each run seen.
type sqliteStmts struct {
	conn *sql.Conn
	byQ  map[string]*sql.Stmt
	runs map[int64]string // run id -> service

	// The rows the transaction has queued (rows).
	counters, outcomes, lasts rowSet
}

func (st *sqliteStmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := st.byQ[q]; ok {
		return s, nil
	}
	s, err := st.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if st.byQ == nil {
		st.byQ = map[string]*sql.Stmt{}
	}
	st.byQ[q] = s
	return s, nil
}

func (st *sqliteStmts) exec(ctx context.Context, q string, args ...any) error {
	s, err := st.stmt(ctx, q)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(ctx, args...)
	return err
}

// service returns the service of run id.
func (st *sqliteStmts) service(ctx context.Context, run int64) (string, error) {
	if s, ok := st.runs[run]; ok {
		return s, nil
	}
	var svc string
	if err := st.conn.QueryRowContext(ctx, `SELECT service FROM eepipe_runs WHERE id = ?`, run).Scan(&svc); err != nil {
		return "", fmt.Errorf("run %d: %w", run, err)
	}
	if st.runs == nil {
		st.runs = map[int64]string{}
	}
	st.runs[run] = svc
	return svc, nil
}

// The statements of the journal, in ? placeholders (SQLite).
const (
	qInsertWriteRows = `INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
		year_number, financial_year, target_type, file, outcome, at) VALUES `
	qInsertCounterRows = `INSERT INTO eepipe_write_counters (write_id, counter, before_value, after_value, sent) VALUES `
	qUpsertLastRows    = `INSERT INTO eepipe_last_applied (service, account, target_id, counter, value, run_id, at, file) VALUES `
	qUpsertLastTail    = `
		ON CONFLICT (service, account, target_id, counter) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
	// The outcomes of pending writes: rows (outcome, at, id, run).
	qOutcomeRows = `WITH v (outcome, at, id, run_id) AS (VALUES `
	qOutcomeTail = `)
		UPDATE eepipe_writes SET outcome = v.outcome, at = v.at FROM v WHERE eepipe_writes.id = v.id AND eepipe_writes.run_id = v.run_id`
	qInsertPlan  = `INSERT INTO eepipe_plan_writes (run_id, account, plan_id, plan_name, action, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qUpsertField = `INSERT INTO eepipe_last_fields (service, account, plan_id, field, value, run_id, at, file)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (service, account, plan_id, field) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
	qFinish  = `UPDATE eepipe_runs SET status = ?, finished = ? WHERE id = ?`
	qResolve = `UPDATE eepipe_writes SET outcome = ? WHERE id = ? AND outcome = 'pending'`
)

// resolved returns the outcome a pending write gets once run found what
// became of it, and the write run records when it adopted it (nil when
// not).
func resolved(run int64, w pipeline.TargetWrite) (string, *pipeline.TargetWrite) {
	outcome := fmt.Sprintf("%s (found by run %d)", w.Outcome, run)
	if !w.Applied() {
		return outcome, nil
	}
	nw := w
	nw.ID, nw.At = 0, time.Now()
	return outcome, &nw
}

func writeAt(w pipeline.TargetWrite) time.Time {
	if w.At.IsZero() {
		return time.Now()
	}
	return w.At
}

func (st *sqliteStmts) record(ctx context.Context, o *op) error {
	switch o.kind {
	case opWrites:
		o.ids = make([]int64, len(o.ws))
		var fresh []int
		for i, w := range o.ws {
			if w.ID != 0 {
				o.ids[i] = w.ID
				at := fmtTime(writeAt(w))
				if err := st.rows(ctx, &st.outcomes, w.Outcome, at, w.ID, o.run); err != nil {
					return err
				}
				if err := st.last(ctx, o.run, w, at); err != nil {
					return err
				}
				continue
			}
			fresh = append(fresh, i)
		}
		for start := 0; start < len(fresh); start += rowsPerStmt {
			if err := st.insertWrites(ctx, o, fresh[start:min(start+rowsPerStmt, len(fresh))]); err != nil {
				return err
			}
		}
	case opOutcome:
		w := o.ws[0]
		at := fmtTime(writeAt(w))
		if err := st.rows(ctx, &st.outcomes, w.Outcome, at, w.ID, o.run); err != nil {
			return err
		}
		return st.last(ctx, o.run, w, at)
	case opPlan:
		w := o.pw
		at := w.At
		if at.IsZero() {
			at = time.Now()
		}
		return st.exec(ctx, qInsertPlan, o.run, w.Account, w.PlanID, w.PlanName, w.Action, w.Outcome, fmtTime(at))
	case opFields:
		svc, err := st.service(ctx, o.run)
		if err != nil {
			return err
		}
		for _, w := range o.fws {
			at := w.At
			if at.IsZero() {
				at = time.Now()
			}
			if err := st.exec(ctx, qUpsertField, svc, w.Account, w.PlanID, w.Field, w.Value, o.run, fmtTime(at), w.File); err != nil {
				return err
			}
		}
	case opFinish:
		return st.exec(ctx, qFinish, o.status, fmtTime(o.at), o.run)
	case opResolve:
		for _, w := range o.ws {
			outcome, adopted := resolved(o.run, w)
			if err := st.exec(ctx, qResolve, outcome, w.ID); err != nil {
				return err
			}
			if adopted != nil {
				if err := st.record(ctx, &op{kind: opWrites, run: o.run, ws: []pipeline.TargetWrite{*adopted}}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// insertWrites inserts the target writes o.ws[at...] in one statement and
// gives them their ids; their counters and last values are queued.
func (st *sqliteStmts) insertWrites(ctx context.Context, o *op, at []int) error {
	args := make([]any, 0, 12*len(at))
	ats := make([]string, len(at))
	for k, i := range at {
		w := &o.ws[i]
		ats[k] = fmtTime(writeAt(*w))
		args = append(args, o.run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
			w.FinancialYear, w.TargetType, w.File, w.Outcome, ats[k])
	}
	ins, err := st.stmt(ctx, rowsOf(qInsertWriteRows, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(at), " RETURNING id"))
	if err != nil {
		return err
	}
	rows, err := ins.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(at))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) != len(at) {
		return fmt.Errorf("%d ids for %d writes", len(ids), len(at))
	}
	// The rows of one statement are inserted in order, each with an id
	// above all before it (AUTOINCREMENT): the ids in order are theirs.
	slices.Sort(ids)
	for k, i := range at {
		o.ids[i] = ids[k]
		w := o.ws[i]
		for _, c := range w.Counters {
			var before any
			if c.Before != nil {
				before = *c.Before
			}
			if err := st.rows(ctx, &st.counters, ids[k], c.Counter, before, c.After, boolInt(c.Sent)); err != nil {
				return err
			}
		}
		if err := st.last(ctx, o.run, w, ats[k]); err != nil {
			return err
		}
	}
	return nil
}

// last queues the counters of w as the last values applied when it
// succeeded.
func (st *sqliteStmts) last(ctx context.Context, run int64, w pipeline.TargetWrite, at string) error {
	if !w.Applied() {
		return nil
	}
	svc, err := st.service(ctx, run)
	if err != nil {
		return err
	}
	for _, c := range w.Counters {
		if err := st.rows(ctx, &st.lasts, svc, w.Account, w.TargetID, c.Counter, c.After, run, at, w.File); err != nil {
			return err
		}
	}
	return nil
}

// rowSet is the rows of one table a transaction has queued, written
// rowsPerStmt at a time and at its end (flushRows), in the order queued.
type rowSet struct {
	head, row, tail string
	width           int
	args            []any
}

var (
	sqliteCounterRows = rowSet{head: qInsertCounterRows, row: "(?, ?, ?, ?, ?)", width: 5}
	sqliteLastRows    = rowSet{head: qUpsertLastRows, row: "(?, ?, ?, ?, ?, ?, ?, ?)", tail: qUpsertLastTail, width: 8}
	sqliteOutcomeRows = rowSet{head: qOutcomeRows, row: "(?, ?, ?, ?)", tail: qOutcomeTail, width: 4}
)

// rows queues one row of set, writing the set when it holds rowsPerStmt.
func (st *sqliteStmts) rows(ctx context.Context, set *rowSet, args ...any) error {
	set.args = append(set.args, args...)
	if len(set.args) < rowsPerStmt*set.width {
		return nil
	}
	return st.writeRows(ctx, set)
}

func (st *sqliteStmts) writeRows(ctx context.Context, set *rowSet) error {
	n := len(set.args) / set.width
	if n == 0 {
		return nil
	}
	args := set.args
	set.args = set.args[:0]
	return st.exec(ctx, rowsOf(set.head, set.row, n, set.tail), args...)
}

// flushRows writes the rows queued: the counters (their writes are
// inserted), the outcomes, the last values.
func (st *sqliteStmts) flushRows(ctx context.Context) error {
	for _, set := range []*rowSet{&st.counters, &st.outcomes, &st.lasts} {
		if err := st.writeRows(ctx, set); err != nil {
			return err
		}
	}
	return nil
}

// resetRows drops the rows queued (the transaction was rolled back).
func (st *sqliteStmts) resetRows() {
	for _, set := range []*rowSet{&st.counters, &st.outcomes, &st.lasts} {
		set.args = set.args[:0]
	}
}

// rowsPerStmt bounds the rows of one SQLite statement (and so its
// parameters, 8 a row at most).
const rowsPerStmt = 100

// rowsOf returns head followed by n rows and tail.
func rowsOf(head, row string, n int, tail string) string {
	return head + row + strings.Repeat(", "+row, n-1) + tail
}

// PostgreSQL: a batch is sent in one round trip (pgx.Batch, run by the
// server in one implicit transaction); a target write and its counters
// are one statement (the counters as arrays).
const (
	pgInsertPlan  = `INSERT INTO eepipe_plan_writes (run_id, account, plan_id, plan_name, action, outcome, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	pgUpsertField = `INSERT INTO eepipe_last_fields (service, account, plan_id, field, value, run_id, at, file)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), x.account, x.plan_id, x.field, x.value, $1, x.at, x.file
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[]) AS x(account, plan_id, field, value, at, file)
		ON CONFLICT (service, account, plan_id, field) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
	pgFinish  = `UPDATE eepipe_runs SET status = $1, finished = $2 WHERE id = $3`
	pgResolve = `UPDATE eepipe_writes SET outcome = $1 WHERE id = $2 AND outcome = 'pending'`
)

var (
	pgInsertWrite = `WITH w AS (
		INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
			year_number, financial_year, target_type, file, outcome, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id),
	c AS (
		INSERT INTO eepipe_write_counters (write_id, counter, before_value, after_value, sent)
		SELECT w.id, x.counter, x.before_value, x.after_value, x.sent
		FROM w, unnest($13::text[], $14::bigint[], $15::bigint[], $16::int[]) AS x(counter, before_value, after_value, sent)),
	l AS (` + pgUpsertLast("$1", "$2", "$6", "$12", "$10", "$17", "$18") + `)
	SELECT id FROM w`
	pgOutcome = `WITH u AS (UPDATE eepipe_writes SET outcome = $3, at = $2 WHERE id = $7 AND run_id = $1)
	` + pgUpsertLast("$1", "$5", "$6", "$2", "$4", "$8", "$9")
)

// pgUpsertLast makes the counters (an array) the last values applied to a
// target by a run, from the given parameters.
func pgUpsertLast(run, account, target, at, file, counters, values string) string {
	return `INSERT INTO eepipe_last_applied (service, account, target_id, counter, value, run_id, at, file)
		SELECT (SELECT service FROM eepipe_runs WHERE id = ` + run + `), ` + account + `::text, ` + target + `::bigint, x.counter, x.value, ` +
		run + `, ` + at + `::text, ` + file + `::text
		FROM unnest(` + counters + `::text[], ` + values + `::bigint[]) AS x(counter, value)
		ON CONFLICT (service, account, target_id, counter) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
}

// lastArrays are the counters and values of w that become the last values
// applied (none when it did not succeed).
func lastArrays(w pipeline.TargetWrite) ([]string, []int64) {
	names, vals := []string{}, []int64{}
	if w.Applied() {
		for _, c := range w.Counters {
			names = append(names, c.Counter)
			vals = append(vals, c.After)
		}
	}
	return names, vals
}

func (j *journal) pgBatch(ctx context.Context, conn *sql.Conn, batch []*op) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("not a pgx connection")
		}
		var b pgx.Batch
		// read reads the results of the statements queued, in order.
		var read []func(pgx.BatchResults) error
		exec := func(br pgx.BatchResults) error {
			_, err := br.Exec()
			return err
		}
		batch, spread := mergeWrites(batch)
		for _, o := range batch {
			switch o.kind {
			case opWrites:
				o.ids = make([]int64, len(o.ws))
				var fresh, answers []int
				for i, w := range o.ws {
					if w.ID != 0 {
						o.ids[i] = w.ID
						answers = append(answers, i)
					} else {
						fresh = append(fresh, i)
					}
				}
				if len(answers) > 1 && distinctTargets(o.ws, answers) {
					queueOutcomes(&b, o.run, o.ws, answers)
					read = append(read, exec)
				} else {
					for _, i := range answers {
						queueOutcome(&b, o.run, o.ws[i])
						read = append(read, exec)
					}
				}
				if len(fresh) > 1 && distinctTargets(o.ws, fresh) {
					queueWrites(&b, o.run, o.ws, fresh)
					read = append(read, func(br pgx.BatchResults) error {
						rows, err := br.Query()
						if err != nil {
							return err
						}
						at := map[int64]int{}
						for _, i := range fresh {
							at[o.ws[i].TargetID] = i
						}
						for rows.Next() {
							var id, target int64
							if err := rows.Scan(&id, &target); err != nil {
								rows.Close()
								return err
							}
							o.ids[at[target]] = id
						}
						rows.Close()
						return rows.Err()
					})
				} else {
					for _, i := range fresh {
						queueWrite(&b, o.run, o.ws[i])
						read = append(read, func(br pgx.BatchResults) error { return br.QueryRow().Scan(&o.ids[i]) })
					}
				}
			case opResolve:
				for _, w := range o.ws {
					outcome, adopted := resolved(o.run, w)
					b.Queue(pgResolve, outcome, w.ID)
					read = append(read, exec)
					if adopted != nil {
						queueWrite(&b, o.run, *adopted)
						read = append(read, func(br pgx.BatchResults) error {
							var id int64
							return br.QueryRow().Scan(&id)
						})
					}
				}
			case opOutcome:
				queueOutcome(&b, o.run, o.ws[0])
				read = append(read, exec)
			case opPlan:
				w := o.pw
				at := w.At
				if at.IsZero() {
					at = time.Now()
				}
				b.Queue(pgInsertPlan, o.run, w.Account, w.PlanID, w.PlanName, w.Action, w.Outcome, fmtTime(at))
				read = append(read, exec)
			case opFields:
				n := len(o.fws)
				acc, field, val, at, file := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
				plan := make([]int64, n)
				for k, w := range o.fws {
					t := w.At
					if t.IsZero() {
						t = time.Now()
					}
					acc[k], plan[k], field[k], val[k], at[k], file[k] = w.Account, w.PlanID, w.Field, w.Value, fmtTime(t), w.File
				}
				b.Queue(pgUpsertField, o.run, acc, plan, field, val, at, file)
				read = append(read, exec)
			case opFinish:
				b.Queue(pgFinish, o.status, fmtTime(o.at), o.run)
				read = append(read, exec)
			}
		}
		br := sc.Conn().SendBatch(ctx, &b)
		for _, r := range read {
			if err := r(br); err != nil {
				br.Close()
				return err
			}
		}
		if err := br.Close(); err != nil {
			return err
		}
		spread()
		return nil
	})
}

// mergeWrites returns batch with its target writes (opWrites, of one
// run) as one record in the place of the first, when the server can take
// them in one statement each for the new writes and for the answers (their
// targets distinct), so that a batch costs the server two statements, not
// two a plan; spread then gives each record its ids. Otherwise batch is
// returned as it is. Moving a later record's writes before the records
// between changes nothing: a target's writes follow whatever else concerns
// it (what became of its pending writes, ResolvePending) in an earlier
// batch, as their callers waited for it.
func mergeWrites(batch []*op) ([]*op, func()) {
	var ws []*op
	for _, o := range batch {
		if o.kind == opWrites {
			if len(ws) > 0 && o.run != ws[0].run {
				return batch, func() {}
			}
			ws = append(ws, o)
		}
	}
	if len(ws) < 2 {
		return batch, func() {}
	}
	m := &op{kind: opWrites, run: ws[0].run}
	fresh, answers := map[int64]bool{}, map[int64]bool{}
	for _, o := range ws {
		for _, w := range o.ws {
			seen := fresh
			if w.ID != 0 {
				seen = answers
			}
			if seen[w.TargetID] {
				return batch, func() {}
			}
			seen[w.TargetID] = true
			m.ws = append(m.ws, w)
		}
	}
	out := make([]*op, 0, len(batch)-len(ws)+1)
	for _, o := range batch {
		switch {
		case o == ws[0]:
			out = append(out, m)
		case o.kind != opWrites:
			out = append(out, o)
		}
	}
	return out, func() {
		k := 0
		for _, o := range ws {
			o.ids = m.ids[k : k+len(o.ws)]
			k += len(o.ws)
		}
	}
}

// distinctTargets reports whether the writes ws[at...] are to distinct
// targets (one statement then records them all).
func distinctTargets(ws []pipeline.TargetWrite, at []int) bool {
	seen := make(map[int64]bool, len(at))
	for _, i := range at {
		if seen[ws[i].TargetID] {
			return false
		}
		seen[ws[i].TargetID] = true
	}
	return true
}

// pgLastRows makes the rows of the arrays from parameter $first on
// (account, target, counter, value, at, file) the last values applied by
// run $1.
func pgLastRows(first int) string {
	p := func(k int) string { return "$" + strconv.Itoa(first+k) }
	return `INSERT INTO eepipe_last_applied (service, account, target_id, counter, value, run_id, at, file)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), z.account, z.target_id, z.counter, z.value, $1, z.at, z.file
		FROM unnest(` + p(0) + `::text[], ` + p(1) + `::bigint[], ` + p(2) + `::text[], ` + p(3) + `::bigint[], ` + p(4) + `::text[], ` + p(5) + `::text[])
		AS z(account, target_id, counter, value, at, file)
		ON CONFLICT (service, account, target_id, counter) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
}

var (
	// pgInsertWrites records target writes (to distinct targets) with
	// their counters and last values in one statement; it returns each
	// write's id and target.
	pgInsertWrites = `WITH w AS (
		INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
			year_number, financial_year, target_type, file, outcome, at)
		SELECT $1, x.account, x.plan_id, x.plan_name, x.milestone_id, x.target_id, x.year_number, x.financial_year, x.target_type, x.file, x.outcome, x.at
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
		AS x(account, plan_id, plan_name, milestone_id, target_id, year_number, financial_year, target_type, file, outcome, at)
		RETURNING id, target_id),
	c AS (
		INSERT INTO eepipe_write_counters (write_id, counter, before_value, after_value, sent)
		SELECT w.id, y.counter, y.before_value, y.after_value, y.sent
		FROM unnest($13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::int[]) AS y(target_id, counter, before_value, after_value, sent)
		JOIN w ON w.target_id = y.target_id),
	l AS (` + pgLastRows(18) + `)
	SELECT id, target_id FROM w`
	// pgOutcomes records the outcomes of pending writes (to distinct
	// targets) and their last values in one statement.
	pgOutcomes = `WITH u AS (
		UPDATE eepipe_writes w SET outcome = x.outcome, at = x.at
		FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(id, outcome, at) WHERE w.id = x.id AND w.run_id = $1)
	` + pgLastRows(5)
)

// lastRows are the arrays of pgLastRows.
type lastRows struct {
	account, counter, at, file []string
	target, value              []int64
}

func (l *lastRows) add(w pipeline.TargetWrite, at string) {
	if !w.Applied() {
		return
	}
	for _, c := range w.Counters {
		l.account, l.target, l.counter = append(l.account, w.Account), append(l.target, w.TargetID), append(l.counter, c.Counter)
		l.value, l.at, l.file = append(l.value, c.After), append(l.at, at), append(l.file, w.File)
	}
}

func (l *lastRows) args() []any {
	nz := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	target, value := l.target, l.value
	if target == nil {
		target, value = []int64{}, []int64{}
	}
	return []any{nz(l.account), target, nz(l.counter), value, nz(l.at), nz(l.file)}
}

// queueWrites queues the insert of the target writes ws[at...] of run, to
// distinct targets, in one statement.
func queueWrites(b *pgx.Batch, run int64, ws []pipeline.TargetWrite, at []int) {
	n := len(at)
	acc, name, fy, typ, file, outcome, ats := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	plan, ms, target := make([]int64, n), make([]int64, n), make([]int64, n)
	year := make([]int32, n)
	var ct []int64
	var cn []string
	var cb []*int64
	var ca []int64
	var cs []int32
	var last lastRows
	for k, i := range at {
		w := ws[i]
		t := fmtTime(writeAt(w))
		acc[k], plan[k], name[k], ms[k], target[k], year[k] = w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, int32(w.YearNumber)
		fy[k], typ[k], file[k], outcome[k], ats[k] = w.FinancialYear, w.TargetType, w.File, w.Outcome, t
		for _, c := range w.Counters {
			ct, cn, cb, ca, cs = append(ct, w.TargetID), append(cn, c.Counter), append(cb, c.Before), append(ca, c.After), append(cs, int32(boolInt(c.Sent)))
		}
		last.add(w, t)
	}
	if ct == nil {
		ct, cn, cb, ca, cs = []int64{}, []string{}, []*int64{}, []int64{}, []int32{}
	}
	args := []any{run, acc, plan, name, ms, target, year, fy, typ, file, outcome, ats, ct, cn, cb, ca, cs}
	b.Queue(pgInsertWrites, append(args, last.args()...)...)
}

// queueOutcomes queues the outcomes of the pending writes ws[at...] of
// run, to distinct targets, in one statement.
func queueOutcomes(b *pgx.Batch, run int64, ws []pipeline.TargetWrite, at []int) {
	n := len(at)
	ids := make([]int64, n)
	outcome, ats := make([]string, n), make([]string, n)
	var last lastRows
	for k, i := range at {
		w := ws[i]
		t := fmtTime(writeAt(w))
		ids[k], outcome[k], ats[k] = w.ID, w.Outcome, t
		last.add(w, t)
	}
	args := []any{run, ids, outcome, ats}
	b.Queue(pgOutcomes, append(args, last.args()...)...)
}

// queueWrite queues the insert of target write w of run (with its
// counters and, when it succeeded, the last values applied).
func queueWrite(b *pgx.Batch, run int64, w pipeline.TargetWrite) {
	var (
		names  = make([]string, len(w.Counters))
		before = make([]*int64, len(w.Counters))
		after  = make([]int64, len(w.Counters))
		sent   = make([]int32, len(w.Counters))
	)
	for k, c := range w.Counters {
		names[k], before[k], after[k], sent[k] = c.Counter, c.Before, c.After, int32(boolInt(c.Sent))
	}
	ln, lv := lastArrays(w)
	b.Queue(pgInsertWrite, run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
		w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(writeAt(w)), names, before, after, sent, ln, lv)
}

// queueOutcome queues the outcome of the pending write w of run (and,
// when it succeeded, the last values applied).
func queueOutcome(b *pgx.Batch, run int64, w pipeline.TargetWrite) {
	ln, lv := lastArrays(w)
	b.Queue(pgOutcome, run, fmtTime(writeAt(w)), w.Outcome, w.File, w.Account, w.TargetID, w.ID, ln, lv)
}
