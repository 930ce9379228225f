package statestore

import (
	"context"
	"database/sql"
	"errors"
	"hash/fnv"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// lockPoll is how often a waiting run asks again for a held lock.
const lockPoll = 250 * time.Millisecond

// LockAccount implements pipeline.StateStore. On PostgreSQL it takes a
// session advisory lock keyed by the service and account on a connection
// of its own (released when the returned func is called, or by the server
// when the process dies), and records who holds it so that a run that
// finds it held can say who. On SQLite it is a no-op: the local lock of
// apply covers one machine.
func (s *Store) LockAccount(ctx context.Context, service, account, holder string, wait time.Duration) (func(), error) {
	if s.dialect != dialectPostgres {
		return func() {}, nil
	}
	name := service + " " + account
	h := fnv.New64a()
	h.Write([]byte("eepipe-account-lock\x00" + name))
	key := int64(h.Sum64())
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.explain(err)
	}
	start := time.Now()
	for {
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
			conn.Close()
			return nil, s.explain(err)
		}
		if got {
			break
		}
		waited := time.Since(start)
		if waited >= wait {
			e := &pipeline.StoreLockHeldError{Account: account, Waited: waited.Round(time.Millisecond)}
			var since string
			if err := conn.QueryRowContext(ctx, `SELECT holder, since FROM eepipe_locks WHERE lock_key = $1`, name).Scan(&e.Holder, &since); err == nil {
				e.Since = parseTime(since)
			} else if !errors.Is(err, sql.ErrNoRows) {
				conn.Close()
				return nil, s.explain(err)
			}
			if wait <= 0 {
				e.Waited = 0
			}
			conn.Close()
			return nil, e
		}
		t := time.NewTimer(min(lockPoll, wait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			conn.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO eepipe_locks (lock_key, holder, since) VALUES ($1, $2, $3)
		ON CONFLICT (lock_key) DO UPDATE SET holder = excluded.holder, since = excluded.since`, name, holder, fmtTime(time.Now())); err != nil {
		conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		conn.Close()
		return nil, s.explain(err)
	}
	return func() {
		bg := context.WithoutCancel(ctx)
		conn.ExecContext(bg, `DELETE FROM eepipe_locks WHERE lock_key = $1 AND holder = $2`, name, holder)
		conn.ExecContext(bg, `SELECT pg_advisory_unlock($1)`, key)
		conn.Close()
	}, nil
}
