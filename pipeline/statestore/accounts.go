package statestore

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
)

// accountKeys is a store's table of account spellings (eepipe_account_keys,
// schema version 8): each spelling of an account name the store holds a
// record of (a run's accounts, a target write's, a plan request's) with
// its pipeline.AccountKey. The history's account filters match an account
// through it, by the rule routing and locks use (pipeline.SameAccount:
// surrounding spaces and letter case ignored, beyond ASCII too: "ÉLAN" is
// "élan"), which SQL's LOWER and TRIM do not follow on either backend. A
// spelling is added before the first record that names it is committed;
// known is what this process has added or found there.
type accountKeys struct {
	mu    sync.Mutex
	known map[string]bool
}

// accountMatch is the SQL condition that col names the account whose
// pipeline.AccountKey is the one argument.
func accountMatch(col string) string {
	return col + ` IN (SELECT k.account FROM eepipe_account_keys k WHERE k.account_key = ?)`
}

// add adds the spellings of accounts the table lacks (through q); another
// process adding the same spelling at once is no error.
func (a *accountKeys) add(ctx context.Context, q execQuerier, d dialect, accounts map[string]bool) error {
	var missing []string
	a.mu.Lock()
	for n := range accounts {
		if !a.known[n] {
			missing = append(missing, n)
		}
	}
	a.mu.Unlock()
	for start := 0; start < len(missing); start += namesPerStmt {
		part := missing[start:min(start+namesPerStmt, len(missing))]
		args := make([]any, 0, 2*len(part))
		for _, n := range part {
			args = append(args, n, pipeline.AccountKey(n))
		}
		marks := "(?, ?" + strings.Repeat("), (?, ?", len(part)-1) + ")"
		if _, err := q.ExecContext(ctx, rebind(d, `INSERT INTO eepipe_account_keys (account, account_key) VALUES `+marks+
			` ON CONFLICT (account) DO NOTHING`), args...); err != nil {
			return err
		}
		a.mu.Lock()
		if a.known == nil {
			a.known = map[string]bool{}
		}
		for _, n := range part {
			a.known[n] = true
		}
		a.mu.Unlock()
	}
	return nil
}

// batchAccounts returns the accounts the records of batch name.
func batchAccounts(batch []*op) map[string]bool {
	accounts := map[string]bool{}
	for _, o := range batch {
		switch o.kind {
		case opWrites, opOutcome, opResolve:
			for _, w := range o.ws {
				if w.Account != "" {
					accounts[w.Account] = true
				}
			}
		case opPlan:
			accounts[o.pw.Account] = true
		case opFields:
			for _, w := range o.fws {
				accounts[w.Account] = true
			}
		}
	}
	return accounts
}

// migrateAccountKeys fills eepipe_account_keys with the spellings of the
// accounts a store of schema version 7 holds records of.
func migrateAccountKeys(ctx context.Context, tx *sql.Tx, d dialect) error {
	rows, err := tx.QueryContext(ctx, `SELECT account FROM eepipe_run_accounts
		UNION SELECT account FROM eepipe_writes
		UNION SELECT account FROM eepipe_plan_writes`)
	if err != nil {
		return err
	}
	accounts := map[string]bool{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return err
		}
		accounts[a] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var keys accountKeys // not the store's: the transaction may yet fail
	return keys.add(ctx, tx, d, accounts)
}
