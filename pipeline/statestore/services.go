package statestore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
)

// The service of each key pair (eepipe_key_services, schema version 10):
// the address a key pair's run history is kept under, by the key's
// pipeline.AccountLockKey (a digest: neither the key nor its secret is
// stored). The first run recorded with a key pair records it; a run that
// reaches the service at another address is stopped before it writes
// (pipeline.ServiceAddress.CheckHistory; docs/apply-and-state.md, "The
// state store").

// recordKeyServices records service as the address of each of keys that
// has none yet, by run id, in the run's transaction tx. A key whose
// address on record is another is a *KeyServiceError: a run through the
// other address recorded it since this run checked (the two did not share
// a lock), and this run must not start a second history. The keys are
// taken in one order (sorted), whatever order the configuration lists its
// accounts in: two runs recording the same key pairs at once each wait
// for the other's uncommitted row, which in opposite orders is a deadlock
// on PostgreSQL.
func (s *Store) recordKeyServices(ctx context.Context, tx *sql.Tx, run int64, service string, keys []string) error {
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_key_services (key_id, service, run_id) VALUES (?, ?, ?)
			ON CONFLICT (key_id) DO NOTHING`), k, service, run); err != nil {
			return err
		}
		var there string
		if err := tx.QueryRowContext(ctx, s.q(`SELECT service FROM eepipe_key_services WHERE key_id = ?`), k).Scan(&there); err != nil {
			return err
		}
		if there != service {
			return &KeyServiceError{Service: service, Recorded: there}
		}
	}
	return nil
}

// KeyServiceError refuses to record a run whose key pair has its history
// under another service address.
type KeyServiceError struct {
	Service, Recorded string
}

func (e *KeyServiceError) Error() string {
	return "a key pair of this run has its run history under the service address " + e.Recorded + ", not " + e.Service +
		": a run through that address recorded it while this one started (they did not share a lock folder); " +
		"the run was not recorded (declare one service with same_service_as, docs/configuration.md)"
}

// KeyServices returns the address (a pipeline.ServiceKey) each of keys
// (pipeline.AccountLockKey) has its run history under; a key without
// history is not in the map.
func (s *Store) KeyServices(ctx context.Context, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT key_id, service FROM eepipe_key_services WHERE key_id IN (?`+
		strings.Repeat(", ?", len(keys)-1)+`)`), args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, svc string
		if err := rows.Scan(&k, &svc); err != nil {
			return nil, s.explain(err)
		}
		out[k] = svc
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return out, nil
}

// RunServices returns the services (pipeline.ServiceKey) the store holds
// runs of, sorted.
func (s *Store) RunServices(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT service FROM eepipe_runs ORDER BY service`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var svc string
		if err := rows.Scan(&svc); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, svc)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return out, nil
}
