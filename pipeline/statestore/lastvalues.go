package statestore

import (
	"bytes"
	"context"
	"database/sql"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// LastValues implements pipeline.LastValueSource: the last value applied
// to each counter of the given targets of service, by the service's own
// target id as LastWrites, without the run, time and file LastWrites
// reads (apply compares the counters it finds in sync with them, for
// every target of the file: see README "Run history and team state"). A
// counter applied under several names of its account with values that
// differ is Mixed.
func (s *Store) LastValues(ctx context.Context, service string, targetIDs []int64) (map[pipeline.CounterKey]diff.LastValue, error) {
	s.flush()
	var out map[pipeline.CounterKey]diff.LastValue
	name := s.names.namer(ctx, s.db)
	var col sql.RawBytes
	err := s.eachByID(ctx, `SELECT target_id, counters FROM eepipe_last_values WHERE service = ? AND target_id IN `,
		service, targetIDs, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id, &col); err != nil {
				return err
			}
			if out == nil {
				// Sized at once from the first target's counters: a
				// plan's targets have about as many each.
				out = make(map[pipeline.CounterKey]diff.LastValue, len(targetIDs)*bytes.Count(col, []byte{'['}))
			}
			return eachLast(col, name, func(name string, e lastEntry) {
				k := pipeline.CounterKey{TargetID: id, Counter: name}
				if prev, ok := out[k]; ok {
					if prev.Value != e.value {
						out[k] = diff.LastValue{Value: prev.Value, Mixed: true}
					}
					return
				}
				out[k] = diff.LastValue{Value: e.value}
			})
		})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[pipeline.CounterKey]diff.LastValue{}
	}
	return out, nil
}

// migrateLastValuesRowid moves an SQLite store's last values (schema
// version 9) from the WITHOUT ROWID table of version 7 to a table of the
// same columns and key with row ids, rows unchanged.
func migrateLastValuesRowid(ctx context.Context, tx *sql.Tx, d dialect) error {
	if d != dialectSQLite {
		return nil
	}
	for _, stmt := range []string{
		`CREATE TABLE eepipe_last_values_new (
			service TEXT NOT NULL,
			target_id BIGINT NOT NULL,
			account TEXT NOT NULL,
			counters TEXT NOT NULL,
			PRIMARY KEY (service, target_id, account)
		)`,
		`INSERT INTO eepipe_last_values_new (service, target_id, account, counters)
			SELECT service, target_id, account, counters FROM eepipe_last_values ORDER BY service, target_id, account`,
		`DROP TABLE eepipe_last_values`,
		`ALTER TABLE eepipe_last_values_new RENAME TO eepipe_last_values`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
