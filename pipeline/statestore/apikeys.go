package statestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/keyrotate"
)

// The store is the key book of a rotation (keyrotate.Book): the id, account
// and expiry of each API key eepipe created, and of each key it rotated
// away from whose id the configuration gave (recorded before the switch,
// so that a rotation stopped before its revoke leaves the id known; its
// created_at is when it was recorded), by service and key
// (eepipe_api_keys, schema version 11). Keys are not secrets; secrets are
// never stored.

// KeyID returns the id of key on service, when eepipe created it and it
// is not known revoked.
func (s *Store) KeyID(ctx context.Context, service, key string) (int64, bool, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT key_id FROM eepipe_api_keys WHERE service = ? AND api_key = ? AND revoked_at IS NULL`),
		service, key).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, s.explain(err)
	}
	return id, true, nil
}

// RecordKey records a key created for account on service at at, with
// the key by: the new key takes over by's run history, the address it is
// kept under (eepipe_key_services), when by has one and the new key none.
func (s *Store) RecordKey(ctx context.Context, service, account, by string, c keyrotate.Created, at time.Time) error {
	var expires any
	if c.ExpiresAt != "" {
		expires = c.ExpiresAt
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_api_keys (service, api_key, key_id, account, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (service, api_key) DO UPDATE SET key_id = excluded.key_id, account = excluded.account,
			created_at = excluded.created_at, expires_at = excluded.expires_at, revoked_at = NULL`),
		service, c.Key, c.ID, account, fmtTime(at), expires); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_key_services (key_id, service, run_id)
		SELECT ?, service, run_id FROM eepipe_key_services WHERE key_id = ?
		ON CONFLICT (key_id) DO NOTHING`),
		pipeline.AccountLockKey(c.Key), pipeline.AccountLockKey(by)); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// RecordRevoked records that key on service was revoked at at.
func (s *Store) RecordRevoked(ctx context.Context, service, key string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE eepipe_api_keys SET revoked_at = ? WHERE service = ? AND api_key = ?`),
		fmtTime(at), service, key)
	return s.explain(err)
}

// Unrevoked returns the keys of account on service the book holds and
// does not know revoked (id and key), oldest first.
func (s *Store) Unrevoked(ctx context.Context, service, account string) ([]keyrotate.Created, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT key_id, api_key FROM eepipe_api_keys
		WHERE service = ? AND account = ? AND revoked_at IS NULL ORDER BY created_at, key_id`), service, account)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []keyrotate.Created
	for rows.Next() {
		var c keyrotate.Created
		if err := rows.Scan(&c.ID, &c.Key); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, c)
	}
	return out, s.explain(rows.Err())
}
