package statestore

import (
	"context"
	"database/sql"

	"github.com/eepipe/eepipe/pipeline"
)

// LastValues implements pipeline.LastValueSource: the last value applied
// to each counter of the given targets of service, by the service's own
// target id as LastWrites, without the run, time and file LastWrites
// reads (apply compares the counters it finds in sync with them, for
// every target of the file: see README "Run history and team state"). A
// counter applied under several names of its account with values that
// differ is Mixed.
func (s *Store) LastValues(ctx context.Context, service string, targetIDs []int64) (map[pipeline.CounterKey]pipeline.LastValue, error) {
	s.flush()
	out := map[pipeline.CounterKey]pipeline.LastValue{}
	names := map[string]string{} // one string per counter name
	var counter sql.RawBytes
	err := s.eachByID(ctx, `SELECT target_id, counter, value FROM eepipe_last_applied WHERE service = ? AND target_id IN `,
		service, targetIDs, func(rows *sql.Rows) error {
			var id, v int64
			if err := rows.Scan(&id, &counter, &v); err != nil {
				return err
			}
			name, ok := names[string(counter)]
			if !ok {
				name = string(counter)
				names[name] = name
			}
			k := pipeline.CounterKey{TargetID: id, Counter: name}
			if prev, ok := out[k]; ok {
				if prev.Value != v {
					out[k] = pipeline.LastValue{Value: prev.Value, Mixed: true}
				}
				return nil
			}
			out[k] = pipeline.LastValue{Value: v}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
