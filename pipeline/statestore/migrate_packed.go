package statestore

import (
	"context"
	"database/sql"

	"github.com/eepipe/eepipe/pipeline"
)

// migrateChunk is how many write ids, or target ids, migration 7 converts
// at a time (what it holds in memory).
const migrateChunk = 2000

// migratePacked is migration 7's conversion: the counters of each write
// (eepipe_write_counters) become its counters column, and the last values
// applied (eepipe_last_applied, a row a counter) a row a target and
// account, each value naming the write that applied it (found by its
// run, target, account and time); then the old tables go. On SQLite the
// writes move to a table without AUTOINCREMENT (rebuildWrites).
func migratePacked(ctx context.Context, tx *sql.Tx, d dialect) error {
	var names counterIDs
	if err := migrateWriteCounters(ctx, tx, d, &names); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE eepipe_write_counters`); err != nil {
		return err
	}
	if d == dialectSQLite {
		if err := rebuildWrites(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE INDEX eepipe_writes_migrate7 ON eepipe_writes (target_id, run_id)`); err != nil {
		return err
	}
	if err := migrateLastValues(ctx, tx, d, &names); err != nil {
		return err
	}
	for _, stmt := range []string{`DROP TABLE eepipe_last_applied`, `DROP INDEX eepipe_writes_migrate7`} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// rebuildWrites copies an SQLite store's writes, ids kept, into a table
// whose id is SQLite's own row id (the largest plus one) rather than
// AUTOINCREMENT's, which books every insert in sqlite_sequence; the index
// by plan, which no read can use, is not made again.
func rebuildWrites(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range []string{`CREATE TABLE eepipe_writes_new (
		id INTEGER PRIMARY KEY,
		run_id BIGINT NOT NULL REFERENCES eepipe_runs (id),
		account TEXT NOT NULL,
		plan_id BIGINT NOT NULL,
		plan_name TEXT NOT NULL,
		milestone_id BIGINT NOT NULL,
		target_id BIGINT NOT NULL,
		year_number INTEGER NOT NULL,
		financial_year TEXT NOT NULL,
		target_type TEXT NOT NULL,
		file TEXT NOT NULL,
		outcome TEXT NOT NULL,
		at TEXT NOT NULL,
		counters TEXT NOT NULL DEFAULT '[]')`,
		`INSERT INTO eepipe_writes_new (id, run_id, account, plan_id, plan_name, milestone_id, target_id, year_number,
			financial_year, target_type, file, outcome, at, counters)
		SELECT id, run_id, account, plan_id, plan_name, milestone_id, target_id, year_number,
			financial_year, target_type, file, outcome, at, counters FROM eepipe_writes ORDER BY id`,
		`DROP TABLE eepipe_writes`,
		`DELETE FROM sqlite_sequence WHERE name = 'eepipe_writes'`,
		`ALTER TABLE eepipe_writes_new RENAME TO eepipe_writes`,
		`CREATE INDEX eepipe_writes_run ON eepipe_writes (run_id)`,
		`CREATE INDEX eepipe_writes_pending ON eepipe_writes (target_id) WHERE outcome = 'pending'`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// migrateWriteCounters packs the counters of every write into its row.
func migrateWriteCounters(ctx context.Context, tx *sql.Tx, d dialect, names *counterIDs) error {
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(write_id) FROM eepipe_write_counters`).Scan(&last); err != nil || !last.Valid {
		return err
	}
	update, err := tx.PrepareContext(ctx, rebind(d, `UPDATE eepipe_writes SET counters = ? WHERE id = ?`))
	if err != nil {
		return err
	}
	defer update.Close()
	for lo := int64(0); lo < last.Int64; lo += migrateChunk {
		rows, err := tx.QueryContext(ctx, rebind(d, `SELECT write_id, counter, before_value, after_value, sent FROM eepipe_write_counters
			WHERE write_id > ? AND write_id <= ? ORDER BY write_id, id`), lo, lo+migrateChunk)
		if err != nil {
			return err
		}
		var ids []int64
		byID := map[int64][]pipeline.CounterWrite{}
		seen := map[string]bool{}
		for rows.Next() {
			var (
				id     int64
				c      pipeline.CounterWrite
				before sql.NullInt64
				sent   int
			)
			if err := rows.Scan(&id, &c.Counter, &before, &c.After, &sent); err != nil {
				rows.Close()
				return err
			}
			if before.Valid {
				v := before.Int64
				c.Before = &v
			}
			c.Sent = sent != 0
			seen[c.Counter] = true
			if _, ok := byID[id]; !ok {
				ids = append(ids, id)
			}
			byID[id] = append(byID[id], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		counterIDs, err := names.ids(ctx, tx, d, seen)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := update.ExecContext(ctx, packWriteCounters(byID[id], counterIDs), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateLastValues packs the last values applied by target and account.
func migrateLastValues(ctx context.Context, tx *sql.Tx, d dialect, names *counterIDs) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT target_id FROM eepipe_last_applied ORDER BY target_id`)
	if err != nil {
		return err
	}
	var targets []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		targets = append(targets, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	insert, err := tx.PrepareContext(ctx, rebind(d, `INSERT INTO eepipe_last_values (service, target_id, account, counters) VALUES (?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer insert.Close()
	for start := 0; start < len(targets); start += migrateChunk {
		part := targets[start:min(start+migrateChunk, len(targets))]
		if err := migrateLastChunk(ctx, tx, d, names, insert, part[0], part[len(part)-1]); err != nil {
			return err
		}
	}
	return nil
}

// migrateLastChunk packs the last values of the targets from lo to hi.
func migrateLastChunk(ctx context.Context, tx *sql.Tx, d dialect, names *counterIDs, insert *sql.Stmt, lo, hi int64) error {
	rows, err := tx.QueryContext(ctx, rebind(d, `SELECT la.service, la.target_id, la.account, la.counter, la.value, la.run_id, la.at, la.file,
		COALESCE((SELECT MAX(w.id) FROM eepipe_writes w WHERE w.target_id = la.target_id AND w.run_id = la.run_id
			AND w.account = la.account AND w.at = la.at), 0)
		FROM eepipe_last_applied la WHERE la.target_id >= ? AND la.target_id <= ?
		ORDER BY la.service, la.target_id, la.account, la.counter`), lo, hi)
	if err != nil {
		return err
	}
	type key struct {
		service string
		target  int64
		account string
	}
	type named struct {
		name string
		e    lastEntry
	}
	var keys []key
	entries := map[key][]named{}
	seen := map[string]bool{}
	for rows.Next() {
		var (
			k    key
			name string
			e    lastEntry
		)
		if err := rows.Scan(&k.service, &k.target, &k.account, &name, &e.value, &e.run, &e.at, &e.file, &e.write); err != nil {
			rows.Close()
			return err
		}
		if _, ok := entries[k]; !ok {
			keys = append(keys, k)
		}
		entries[k] = append(entries[k], named{name, e})
		seen[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ids, err := names.ids(ctx, tx, d, seen)
	if err != nil {
		return err
	}
	for _, k := range keys {
		byID, order := map[int64]lastEntry{}, []int64{}
		for _, n := range entries[k] {
			byID[ids[n.name]] = n.e
			order = append(order, ids[n.name])
		}
		if _, err := insert.ExecContext(ctx, k.service, k.target, k.account, packCarried(byID, order)); err != nil {
			return err
		}
	}
	return nil
}
