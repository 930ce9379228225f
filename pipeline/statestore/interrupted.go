package statestore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// interruptEarlier records as interrupted the runs before run id (r) of
// r's service and one of its accounts that are still recorded as
// running: run id holds the locks of its accounts, which a run holds
// until it records its end, so those runs ended without recording it
// (killed, crashed, a power cut). A run wrongly taken so (one that held
// another lock folder's lock) still records its own end when it ends.
func interruptEarlier(ctx context.Context, tx *sql.Tx, d dialect, id int64, r pipeline.RunRecord) error {
	if len(r.Accounts) == 0 {
		return nil
	}
	keys := map[string]bool{}
	args := []any{pipeline.RunInterrupted, pipeline.RunRunning, r.Service, id}
	for _, a := range r.Accounts {
		if k := pipeline.AccountKey(a); !keys[k] {
			keys[k] = true
			args = append(args, k)
		}
	}
	marks := "?" + strings.Repeat(", ?", len(keys)-1)
	_, err := tx.ExecContext(ctx, rebind(d, `UPDATE eepipe_runs SET status = ? WHERE status = ? AND service = ? AND id < ?
		AND id IN (SELECT a.run_id FROM eepipe_run_accounts a JOIN eepipe_account_keys k ON k.account = a.account
		WHERE k.account_key IN (`+marks+`))`), args...)
	return err
}
