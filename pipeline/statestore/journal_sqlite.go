package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// sqliteTx records batch in one SQLite transaction on the journal's
// connection, with statements prepared once for the journal's life;
// durable commits it with synchronous FULL. When the ids it gave new
// writes clash with those another program took since the journal read
// the largest (newID), it is tried again with ids read afresh.
func (j *journal) sqliteTx(ctx context.Context, conn *sql.Conn, batch []*op, ids map[string]int64, durable bool) error {
	if j.sqlite == nil || j.sqlite.conn != conn {
		j.sqlite = &sqliteStmts{conn: conn, writes: sqliteWriteRows, plans: sqlitePlanRows, outcomes: sqliteOutcomeRows, lasts: sqliteLastRows}
	}
	stale := j.sqlite.lastIDKnown // ids given from a largest id read before this transaction
	err := j.sqliteTxOnce(ctx, conn, batch, ids, durable)
	var coded interface{ Code() int }
	if err != nil && stale && errors.As(err, &coded) && coded.Code() == sqlitePrimaryKeyTaken {
		err = j.sqliteTxOnce(ctx, conn, batch, ids, durable)
	}
	return err
}

// sqlitePrimaryKeyTaken is SQLite's extended result code for a row whose
// key another row has (SQLITE_CONSTRAINT_PRIMARYKEY).
const sqlitePrimaryKeyTaken = 1555

func (j *journal) sqliteTxOnce(ctx context.Context, conn *sql.Conn, batch []*op, ids map[string]int64, durable bool) (err error) {
	st := j.sqlite
	st.resetRows()
	st.ids = ids
	defer func() {
		if err != nil {
			st.lastIDKnown = false // the ids it gave are not taken; another program's may be
		}
	}()
	// The pragmas are not prepared: SQLite applies a pragma such as
	// synchronous when it prepares the statement, not each time it runs
	// it. BEGIN, COMMIT and ROLLBACK act when run, prepared once.
	if durable {
		if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
			return err
		}
		defer conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`)
	}
	if err := st.exec(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	for _, o := range batch {
		if err := st.record(ctx, o); err != nil {
			st.exec(ctx, `ROLLBACK`)
			return err
		}
	}
	if err := st.flushRows(ctx); err != nil {
		st.exec(ctx, `ROLLBACK`)
		return err
	}
	if err := st.exec(ctx, `COMMIT`); err != nil {
		st.exec(ctx, `ROLLBACK`)
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
	writes, plans, outcomes, lasts rowSet
	// ids are the ids of the counter names of the transaction's writes.
	ids map[string]int64
	// lastID is the largest id in eepipe_writes, with the ids given to
	// the new writes (newID), once known; read again after a transaction
	// failed.
	lastID      int64
	lastIDKnown bool
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
	qInsertWriteRows = `INSERT INTO eepipe_writes (id, run_id, account, plan_id, plan_name, milestone_id, target_id,
		year_number, financial_year, target_type, file, outcome, at, counters) VALUES `
	// The last values of a target and account merge into those it has.
	qUpsertLastRows = `INSERT INTO eepipe_last_values (service, target_id, account, counters) VALUES `
	qUpsertLastTail = `
		ON CONFLICT (service, target_id, account) DO UPDATE SET counters = json_patch(counters, excluded.counters)`
	// The outcomes of pending writes: rows (outcome, at, id, run).
	qOutcomeRows = `WITH v (outcome, at, id, run_id) AS (VALUES `
	qOutcomeTail = `)
		UPDATE eepipe_writes SET outcome = v.outcome, at = v.at FROM v WHERE eepipe_writes.id = v.id AND +eepipe_writes.run_id = v.run_id`
	qInsertPlanRows = `INSERT INTO eepipe_plan_writes (run_id, account, plan_id, plan_name, action, outcome, at) VALUES `
	qUpsertField    = `INSERT INTO eepipe_last_fields (service, account, plan_id, field, value, run_id, at, file)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (service, account, plan_id, field) DO UPDATE SET
		value = excluded.value, run_id = excluded.run_id, at = excluded.at, file = excluded.file`
	qFinish  = `UPDATE eepipe_runs SET status = ?, finished = ? WHERE id = ?`
	qResolve = `UPDATE eepipe_writes SET outcome = ? WHERE id = ? AND outcome = 'pending'`
)

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
				if err := st.last(ctx, o.run, w, w.ID); err != nil {
					return err
				}
				continue
			}
			id, ok, err := st.newID(ctx)
			if err != nil {
				return err
			}
			if !ok {
				fresh = append(fresh, i)
				continue
			}
			o.ids[i] = id
			w := &o.ws[i]
			if err := st.rows(ctx, &st.writes, id, o.run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
				w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(writeAt(*w)), packWriteCounters(w.Counters, st.ids)); err != nil {
				return err
			}
			if err := st.last(ctx, o.run, *w, id); err != nil {
				return err
			}
		}
		if len(fresh) > 0 {
			return st.insertWrites(ctx, o, fresh)
		}
	case opOutcome:
		w := o.ws[0]
		at := fmtTime(writeAt(w))
		if err := st.rows(ctx, &st.outcomes, w.Outcome, at, w.ID, o.run); err != nil {
			return err
		}
		return st.last(ctx, o.run, w, w.ID)
	case opPlan:
		w := o.pw
		at := w.At
		if at.IsZero() {
			at = time.Now()
		}
		return st.rows(ctx, &st.plans, o.run, w.Account, w.PlanID, w.PlanName, w.Action, w.Outcome, fmtTime(at))
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

// newID returns the id of a new target write, which the journal gives
// it rather than SQLite: the next above the largest in eepipe_writes, as
// SQLite would (the table has no AUTOINCREMENT since schema version 7:
// docs/apply-and-state.md, "The state store"), so that the new writes of
// a transaction go in one statement without RETURNING and their last
// values keep their order (rows). The largest id is read once, and again
// after a transaction failed: one that another program took meanwhile
// fails the insert (the id is the key) and so the transaction, which
// sqliteTx tries once more with the largest id read afresh: read under
// the transaction's write lock, those ids cannot clash again. It
// reports false once the largest id is the largest integer: SQLite then
// picks ids at random, and the write is inserted alone (insertWrites).
func (st *sqliteStmts) newID(ctx context.Context) (int64, bool, error) {
	if !st.lastIDKnown {
		q, err := st.stmt(ctx, `SELECT COALESCE(MAX(id), 0) FROM eepipe_writes`)
		if err != nil {
			return 0, false, err
		}
		if err := q.QueryRowContext(ctx).Scan(&st.lastID); err != nil {
			return 0, false, err
		}
		st.lastIDKnown = true
	}
	if st.lastID == math.MaxInt64 {
		return 0, false, nil
	}
	st.lastID++
	return st.lastID, true, nil
}

// insertWrites inserts the target writes o.ws[at...] with the ids SQLite
// gives them, after the writes queued with their ids; their last values
// are queued. SQLite picks these ids at random (newID), in no order: each
// write is inserted alone, its id the statement's.
func (st *sqliteStmts) insertWrites(ctx context.Context, o *op, at []int) error {
	if err := st.writeRows(ctx, &st.writes); err != nil {
		return err
	}
	ins, err := st.stmt(ctx, strings.Replace(qInsertWriteRows, "(id, ", "(", 1)+"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	for _, i := range at {
		w := o.ws[i]
		res, err := ins.ExecContext(ctx, o.run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
			w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(writeAt(w)), packWriteCounters(w.Counters, st.ids))
		if err != nil {
			return err
		}
		if o.ids[i], err = res.LastInsertId(); err != nil {
			return err
		}
		if err := st.last(ctx, o.run, w, o.ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// last queues the counters of w, recorded as write id, as the last values
// applied when it succeeded.
func (st *sqliteStmts) last(ctx context.Context, run int64, w pipeline.TargetWrite, id int64) error {
	if !w.Applied() || len(w.Counters) == 0 {
		return nil
	}
	svc, err := st.service(ctx, run)
	if err != nil {
		return err
	}
	return st.rows(ctx, &st.lasts, svc, w.TargetID, w.Account, packLast(w.Counters, st.ids, id))
}

// rowSet is the rows of one table a transaction has queued, written
// rowsPerStmt at a time and at its end (flushRows), in the order queued.
type rowSet struct {
	head, row, tail string
	width           int
	args            []any
	byN             []*sql.Stmt // the statement of n rows, once prepared
}

var (
	// The new target writes, with their ids (newID).
	sqliteWriteRows   = rowSet{head: qInsertWriteRows, row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", width: 14}
	sqlitePlanRows    = rowSet{head: qInsertPlanRows, row: "(?, ?, ?, ?, ?, ?, ?)", width: 7}
	sqliteLastRows    = rowSet{head: qUpsertLastRows, row: "(?, ?, ?, ?)", tail: qUpsertLastTail, width: 4}
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
	if len(set.byN) <= n {
		set.byN = slices.Grow(set.byN, n+1-len(set.byN))[:n+1]
	}
	if set.byN[n] == nil {
		s, err := st.stmt(ctx, rowsOf(set.head, set.row, n, set.tail))
		if err != nil {
			return err
		}
		set.byN[n] = s
	}
	_, err := set.byN[n].ExecContext(ctx, args...)
	return err
}

// flushRows writes the rows queued: the new writes, the plan requests,
// the outcomes, the last values.
func (st *sqliteStmts) flushRows(ctx context.Context) error {
	for _, set := range []*rowSet{&st.writes, &st.plans, &st.outcomes, &st.lasts} {
		if err := st.writeRows(ctx, set); err != nil {
			return err
		}
	}
	return nil
}

// resetRows drops the rows queued (the transaction was rolled back).
func (st *sqliteStmts) resetRows() {
	for _, set := range []*rowSet{&st.writes, &st.plans, &st.outcomes, &st.lasts} {
		set.args = set.args[:0]
	}
}

// rowsPerStmt bounds the rows of one SQLite statement (and so its
// parameters, 14 a row at most).
const rowsPerStmt = 100

// rowsOf returns head followed by n rows and tail.
func rowsOf(head, row string, n int, tail string) string {
	return head + row + strings.Repeat(", "+row, n-1) + tail
}
