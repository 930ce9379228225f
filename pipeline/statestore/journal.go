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
// transaction, not one each. See docs/apply-and-state.md, "The state store", for what a
// crash can lose.

// pendingOutcome is the outcome of a target write recorded before its
// request is sent (RecordPending); its answer replaces it.
const pendingOutcome = pipeline.OutcomePending

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
		if s.dialect == dialectPostgres {
			// A second connection for what is not waited for: the
			// server works on both at once. A record waited for is
			// committed before anything that depends on it is queued
			// (an answer, after its pending write), and the end of a
			// run follows the answers on their connection.
			s.jl = start()
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
	for _, j := range []*journal{s.jl, s.j} {
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
	for {
		var first *op
		select {
		case first = <-j.ops:
		case <-idle.C:
			if dirty && conn != nil {
				// Idle after commits a power cut could lose: sync them.
				conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
				dirty, lastDurable = false, time.Now()
			}
			continue
		case <-j.stop:
			select {
			case first = <-j.ops:
			default:
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
		if conn == nil {
			c, err := j.s.db.Conn(ctx)
			if err != nil {
				for _, o := range batch {
					o.done <- j.s.explain(err)
				}
				continue
			}
			conn = c
		}
		durable := j.s.dialect == dialectSQLite && (time.Since(lastDurable) >= durableEvery || hasFinish(batch))
		errs := j.commit(ctx, conn, batch, durable)
		for i, o := range batch {
			if o.later && o.kind != opSync {
				j.s.jlater.Add(-1)
			}
			if o.later && errs[i] != nil {
				j.s.jmu.Lock()
				if j.s.jfailed == nil {
					j.s.jfailed = errs[i]
				}
				j.s.jmu.Unlock()
			}
			o.done <- errs[i]
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
// alone. It returns each record's error.
func (j *journal) commit(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) []error {
	errs := make([]error, len(batch))
	if !slices.ContainsFunc(batch, func(o *op) bool { return o.kind != opSync }) {
		return errs
	}
	err := j.tx(ctx, conn, batch, durable)
	if err == nil || len(batch) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, o := range batch {
		errs[i] = j.tx(ctx, conn, []*op{o}, durable)
	}
	return errs
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
		j.sqlite = &sqliteStmts{conn: conn}
	}
	st := j.sqlite
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
	qInsertWrite = `INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
		year_number, financial_year, target_type, file, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
	qInsertCounterRows = `INSERT INTO eepipe_write_counters (write_id, counter, before_value, after_value, sent) VALUES `
	qUpsertLastRows    = `INSERT INTO eepipe_last_applied (service, account, target_id, counter, value, run_id, at, file) VALUES `
	qUpsertLastTail    = `
		ON CONFLICT (service, account, target_id, counter) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
	qOutcome     = `UPDATE eepipe_writes SET outcome = ?, at = ? WHERE id = ? AND run_id = ?`
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
		for i, w := range o.ws {
			if w.ID != 0 {
				o.ids[i] = w.ID
				if err := st.record(ctx, &op{kind: opOutcome, run: o.run, ws: []pipeline.TargetWrite{w}}); err != nil {
					return err
				}
				continue
			}
			ins, err := st.stmt(ctx, qInsertWrite)
			if err != nil {
				return err
			}
			at := writeAt(w)
			if err := ins.QueryRowContext(ctx, o.run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
				w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(at)).Scan(&o.ids[i]); err != nil {
				return err
			}
			// The counters in statements of several rows: fewer
			// statements to run than one a counter.
			for start := 0; start < len(w.Counters); start += rowsPerStmt {
				part := w.Counters[start:min(start+rowsPerStmt, len(w.Counters))]
				args := make([]any, 0, 5*len(part))
				for _, c := range part {
					var before any
					if c.Before != nil {
						before = *c.Before
					}
					args = append(args, o.ids[i], c.Counter, before, c.After, boolInt(c.Sent))
				}
				if err := st.exec(ctx, rowsOf(qInsertCounterRows, "(?, ?, ?, ?, ?)", len(part), ""), args...); err != nil {
					return err
				}
			}
			if err := st.last(ctx, o.run, w, at); err != nil {
				return err
			}
		}
	case opOutcome:
		w := o.ws[0]
		at := writeAt(w)
		if err := st.exec(ctx, qOutcome, w.Outcome, fmtTime(at), w.ID, o.run); err != nil {
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

// last makes the counters of w the last values applied when it succeeded.
func (st *sqliteStmts) last(ctx context.Context, run int64, w pipeline.TargetWrite, at time.Time) error {
	if !w.Applied() {
		return nil
	}
	svc, err := st.service(ctx, run)
	if err != nil {
		return err
	}
	t := fmtTime(at)
	for start := 0; start < len(w.Counters); start += rowsPerStmt {
		part := w.Counters[start:min(start+rowsPerStmt, len(w.Counters))]
		args := make([]any, 0, 8*len(part))
		for _, c := range part {
			args = append(args, svc, w.Account, w.TargetID, c.Counter, c.After, run, t, w.File)
		}
		if err := st.exec(ctx, rowsOf(qUpsertLastRows, "(?, ?, ?, ?, ?, ?, ?, ?)", len(part), qUpsertLastTail), args...); err != nil {
			return err
		}
	}
	return nil
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
		return br.Close()
	})
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
