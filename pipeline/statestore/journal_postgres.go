package statestore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/eepipe/eepipe/pipeline"
)

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

// pgLastTail merges the last values of a target and account into those
// it has (jsonb ||: a counter's new value replaces its old one).
const pgLastTail = `
		ON CONFLICT (service, target_id, account) DO UPDATE SET counters = eepipe_last_values.counters || excluded.counters`

var (
	// pgInsertWrite records a target write with its counters and, when
	// it succeeded, the counters ($14, $15) as the last values applied.
	pgInsertWrite = `WITH w AS (
		INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
			year_number, financial_year, target_type, file, outcome, at, counters)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id),
	l AS (INSERT INTO eepipe_last_values (service, target_id, account, counters)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), $6::bigint, $2::text, jsonb_object_agg(x.counter, jsonb_build_array(x.value, w.id))
		FROM w, unnest($14::text[], $15::bigint[]) AS x(counter, value) GROUP BY w.id` + pgLastTail + `)
	SELECT id FROM w`
	// pgOutcome records the answer of a pending write and, when it
	// succeeded, its last values ($7, packed; null when not).
	pgOutcome = `WITH u AS (UPDATE eepipe_writes SET outcome = $3, at = $2 WHERE id = $6 AND run_id = $1)
	INSERT INTO eepipe_last_values (service, target_id, account, counters)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), $5::bigint, $4::text, $7::jsonb WHERE $7::jsonb IS NOT NULL` + pgLastTail
)

// lastArrays are the counters and values of w that become the last values
// applied (none when it did not succeed).
func lastArrays(w pipeline.TargetWrite, ids map[string]int64) ([]string, []int64) {
	names, vals := []string{}, []int64{}
	if w.Applied() {
		for _, c := range w.Counters {
			names = append(names, strconv.FormatInt(ids[c.Counter], 10))
			vals = append(vals, c.After)
		}
	}
	return names, vals
}

// pgBatch records batch in one round trip (pgx.Batch, one implicit
// transaction on the server).
func (j *journal) pgBatch(ctx context.Context, conn *sql.Conn, batch []*op, ids map[string]int64) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("not a pgx connection")
		}
		batch, spread := mergeWrites(batch)
		q := pgQueue{ids: ids}
		for _, o := range batch {
			q.add(o)
		}
		br := sc.Conn().SendBatch(ctx, &q.b)
		for _, r := range q.read {
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

// pgQueue is the statements of a batch and how to read their results,
// in order.
type pgQueue struct {
	b    pgx.Batch
	read []func(pgx.BatchResults) error
	ids  map[string]int64 // the ids of the counter names
}

// pgExec reads the result of a statement that returns no rows.
func pgExec(br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}

// add queues the statements of o.
func (q *pgQueue) add(o *op) {
	switch o.kind {
	case opWrites:
		q.writes(o)
	case opResolve:
		for _, w := range o.ws {
			outcome, adopted := resolved(o.run, w)
			q.b.Queue(pgResolve, outcome, w.ID)
			q.read = append(q.read, pgExec)
			if adopted != nil {
				queueWrite(&q.b, o.run, *adopted, q.ids)
				q.read = append(q.read, func(br pgx.BatchResults) error {
					var id int64
					return br.QueryRow().Scan(&id)
				})
			}
		}
	case opOutcome:
		queueOutcome(&q.b, o.run, o.ws[0], q.ids)
		q.read = append(q.read, pgExec)
	case opPlan:
		w := o.pw
		at := w.At
		if at.IsZero() {
			at = time.Now()
		}
		q.b.Queue(pgInsertPlan, o.run, w.Account, w.PlanID, w.PlanName, w.Action, w.Outcome, fmtTime(at))
		q.read = append(q.read, pgExec)
	case opFields:
		q.fields(o)
	case opFinish:
		q.b.Queue(pgFinish, o.status, fmtTime(o.at), o.run)
		q.read = append(q.read, pgExec)
	}
}

// writes queues the target writes of o: the answers of pending writes,
// then the new writes, whose ids it reads into o.ids.
func (q *pgQueue) writes(o *op) {
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
		queueOutcomes(&q.b, o.run, o.ws, answers, q.ids)
		q.read = append(q.read, pgExec)
	} else {
		for _, i := range answers {
			queueOutcome(&q.b, o.run, o.ws[i], q.ids)
			q.read = append(q.read, pgExec)
		}
	}
	if len(fresh) > 1 && distinctTargets(o.ws, fresh) {
		queueWrites(&q.b, o.run, o.ws, fresh, q.ids)
		q.read = append(q.read, func(br pgx.BatchResults) error { return readWriteIDs(br, o, fresh) })
		return
	}
	for _, i := range fresh {
		queueWrite(&q.b, o.run, o.ws[i], q.ids)
		q.read = append(q.read, func(br pgx.BatchResults) error { return br.QueryRow().Scan(&o.ids[i]) })
	}
}

// readWriteIDs reads the ids of the new writes o.ws[fresh...] (to
// distinct targets) from the rows (id, target) of pgInsertWrites.
func readWriteIDs(br pgx.BatchResults, o *op, fresh []int) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	at := map[int64]int{}
	for _, i := range fresh {
		at[o.ws[i].TargetID] = i
	}
	for rows.Next() {
		var id, target int64
		if err := rows.Scan(&id, &target); err != nil {
			return err
		}
		o.ids[at[target]] = id
	}
	return rows.Err()
}

// fields queues the plan fields of o as the last applied.
func (q *pgQueue) fields(o *op) {
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
	q.b.Queue(pgUpsertField, o.run, acc, plan, field, val, at, file)
	q.read = append(q.read, pgExec)
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

var (
	// pgInsertWrites records target writes (to distinct targets) with
	// their counters, and the counters of those that succeeded ($14 to
	// $16: target, counter, value) as their last values, in one
	// statement; it returns each write's id and target.
	pgInsertWrites = `WITH w AS (
		INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
			year_number, financial_year, target_type, file, outcome, at, counters)
		SELECT $1, x.account, x.plan_id, x.plan_name, x.milestone_id, x.target_id, x.year_number, x.financial_year, x.target_type, x.file, x.outcome, x.at, x.counters
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
		AS x(account, plan_id, plan_name, milestone_id, target_id, year_number, financial_year, target_type, file, outcome, at, counters)
		RETURNING id, target_id, account),
	l AS (INSERT INTO eepipe_last_values (service, target_id, account, counters)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), w.target_id, w.account, jsonb_object_agg(y.counter, jsonb_build_array(y.value, w.id))
		FROM unnest($14::bigint[], $15::text[], $16::bigint[]) AS y(target_id, counter, value) JOIN w ON w.target_id = y.target_id
		GROUP BY w.id, w.target_id, w.account` + pgLastTail + `)
	SELECT id, target_id FROM w`
	// pgOutcomes records the outcomes of pending writes (to distinct
	// targets) and the last values of those that succeeded ($5 to $7:
	// account, target, packed) in one statement.
	pgOutcomes = `WITH u AS (
		UPDATE eepipe_writes w SET outcome = x.outcome, at = x.at
		FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(id, outcome, at) WHERE w.id = x.id AND w.run_id = $1)
	INSERT INTO eepipe_last_values (service, target_id, account, counters)
		SELECT (SELECT service FROM eepipe_runs WHERE id = $1), z.target_id, z.account, z.counters::jsonb
		FROM unnest($5::text[], $6::bigint[], $7::text[]) AS z(account, target_id, counters)` + pgLastTail
)

// queueWrites queues the insert of the target writes ws[at...] of run, to
// distinct targets, in one statement.
func queueWrites(b *pgx.Batch, run int64, ws []pipeline.TargetWrite, at []int, ids map[string]int64) {
	n := len(at)
	acc, name, fy, typ, file, outcome, ats, packed := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	plan, ms, target := make([]int64, n), make([]int64, n), make([]int64, n)
	year := make([]int32, n)
	lt, lc, lv := []int64{}, []string{}, []int64{}
	for k, i := range at {
		w := ws[i]
		acc[k], plan[k], name[k], ms[k], target[k], year[k] = w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, int32(w.YearNumber)
		fy[k], typ[k], file[k], outcome[k], ats[k] = w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(writeAt(w))
		packed[k] = packWriteCounters(w.Counters, ids)
		if w.Applied() {
			for _, c := range w.Counters {
				lt, lc, lv = append(lt, w.TargetID), append(lc, strconv.FormatInt(ids[c.Counter], 10)), append(lv, c.After)
			}
		}
	}
	if len(lt) == 0 {
		b.Queue(pgInsertPending, run, acc, plan, name, ms, target, year, fy, typ, file, outcome, ats, packed)
		return
	}
	b.Queue(pgInsertWrites, run, acc, plan, name, ms, target, year, fy, typ, file, outcome, ats, packed, lt, lc, lv)
}

// pgInsertPending is pgInsertWrites for writes none of which succeeded
// (a plan's pending writes, most of what is waited for): without the last
// values' part, which the server would plan and run for nothing (about a
// fifth of the journal's server time in the main job).
const pgInsertPending = `INSERT INTO eepipe_writes (run_id, account, plan_id, plan_name, milestone_id, target_id,
		year_number, financial_year, target_type, file, outcome, at, counters)
		SELECT $1, x.account, x.plan_id, x.plan_name, x.milestone_id, x.target_id, x.year_number, x.financial_year, x.target_type, x.file, x.outcome, x.at, x.counters
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
		AS x(account, plan_id, plan_name, milestone_id, target_id, year_number, financial_year, target_type, file, outcome, at, counters)
		RETURNING id, target_id`

// queueOutcomes queues the outcomes of the pending writes ws[at...] of
// run, to distinct targets, in one statement.
func queueOutcomes(b *pgx.Batch, run int64, ws []pipeline.TargetWrite, at []int, ids map[string]int64) {
	n := len(at)
	writes := make([]int64, n)
	outcome, ats := make([]string, n), make([]string, n)
	la, lp, lt := []string{}, []string{}, []int64{}
	for k, i := range at {
		w := ws[i]
		writes[k], outcome[k], ats[k] = w.ID, w.Outcome, fmtTime(writeAt(w))
		if w.Applied() && len(w.Counters) > 0 {
			la, lt, lp = append(la, w.Account), append(lt, w.TargetID), append(lp, packLast(w.Counters, ids, w.ID))
		}
	}
	b.Queue(pgOutcomes, run, writes, outcome, ats, la, lt, lp)
}

// queueWrite queues the insert of target write w of run (with its
// counters and, when it succeeded, the last values applied).
func queueWrite(b *pgx.Batch, run int64, w pipeline.TargetWrite, ids map[string]int64) {
	ln, lv := lastArrays(w, ids)
	b.Queue(pgInsertWrite, run, w.Account, w.PlanID, w.PlanName, w.MilestoneID, w.TargetID, w.YearNumber,
		w.FinancialYear, w.TargetType, w.File, w.Outcome, fmtTime(writeAt(w)), packWriteCounters(w.Counters, ids), ln, lv)
}

// queueOutcome queues the outcome of the pending write w of run (and,
// when it succeeded, the last values applied).
func queueOutcome(b *pgx.Batch, run int64, w pipeline.TargetWrite, ids map[string]int64) {
	var last any
	if w.Applied() && len(w.Counters) > 0 {
		last = packLast(w.Counters, ids, w.ID)
	}
	b.Queue(pgOutcome, run, fmtTime(writeAt(w)), w.Outcome, w.Account, w.TargetID, w.ID, last)
}
