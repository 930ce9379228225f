package statestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// migration is one versioned schema change; {ID} is the backend's
// auto-increment primary key column type, {KEY} a primary key it gives
// (SQLite: the largest plus one, without AUTOINCREMENT's bookkeeping),
// {JSON} its JSON column type and
// {WITHOUT_ROWID} SQLite's table option (nothing on PostgreSQL).
type migration struct {
	version int
	name    string
	sql     string
	// then, when set, runs after sql in the migration's transaction.
	then func(ctx context.Context, tx *sql.Tx, d dialect) error
}

// migrations are applied in order, each in its own transaction, and never
// edited once released: a change is a new migration.
var migrations = []migration{
	{1, "runs, writes, last values applied, locks", `
CREATE TABLE eepipe_runs (
	id {ID},
	started TEXT NOT NULL,
	finished TEXT,
	usr TEXT NOT NULL,
	host TEXT NOT NULL,
	command TEXT NOT NULL,
	service TEXT NOT NULL,
	status TEXT NOT NULL,
	change_set TEXT
);
CREATE UNIQUE INDEX eepipe_runs_change_set ON eepipe_runs (change_set) WHERE change_set IS NOT NULL;
CREATE TABLE eepipe_run_files (
	run_id BIGINT NOT NULL REFERENCES eepipe_runs (id),
	path TEXT NOT NULL,
	sha256 TEXT NOT NULL
);
CREATE TABLE eepipe_run_accounts (
	run_id BIGINT NOT NULL REFERENCES eepipe_runs (id),
	account TEXT NOT NULL
);
CREATE TABLE eepipe_writes (
	id {ID},
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
	at TEXT NOT NULL
);
CREATE INDEX eepipe_writes_run ON eepipe_writes (run_id);
CREATE INDEX eepipe_writes_plan ON eepipe_writes (account, plan_id);
CREATE TABLE eepipe_write_counters (
	id {ID},
	write_id BIGINT NOT NULL REFERENCES eepipe_writes (id),
	counter TEXT NOT NULL,
	before_value BIGINT,
	after_value BIGINT NOT NULL,
	sent INTEGER NOT NULL
);
CREATE INDEX eepipe_write_counters_write ON eepipe_write_counters (write_id);
CREATE INDEX eepipe_write_counters_counter ON eepipe_write_counters (counter);
CREATE TABLE eepipe_last_applied (
	service TEXT NOT NULL,
	account TEXT NOT NULL,
	target_id BIGINT NOT NULL,
	counter TEXT NOT NULL,
	value BIGINT NOT NULL,
	run_id BIGINT NOT NULL,
	at TEXT NOT NULL,
	file TEXT NOT NULL,
	PRIMARY KEY (service, account, target_id, counter)
);
CREATE TABLE eepipe_locks (
	lock_key TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	since TEXT NOT NULL
);
`, nil},
	{2, "plan requests", `
CREATE TABLE eepipe_plan_writes (
	id {ID},
	run_id BIGINT NOT NULL REFERENCES eepipe_runs (id),
	account TEXT NOT NULL,
	plan_id BIGINT NOT NULL,
	plan_name TEXT NOT NULL,
	action TEXT NOT NULL,
	outcome TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE INDEX eepipe_plan_writes_run ON eepipe_plan_writes (run_id);
`, nil},
	{3, "last values applied by target", `
CREATE INDEX IF NOT EXISTS eepipe_last_applied_target ON eepipe_last_applied (service, target_id);
`, nil},
	{4, "last plan field values applied", `
CREATE TABLE IF NOT EXISTS eepipe_last_fields (
	service TEXT NOT NULL,
	account TEXT NOT NULL,
	plan_id BIGINT NOT NULL,
	field TEXT NOT NULL,
	value TEXT NOT NULL,
	run_id BIGINT NOT NULL REFERENCES eepipe_runs (id),
	at TEXT NOT NULL,
	file TEXT NOT NULL,
	PRIMARY KEY (service, account, plan_id, field)
);
CREATE INDEX IF NOT EXISTS eepipe_last_fields_plan ON eepipe_last_fields (service, plan_id);
`, nil},
	// A change set is applied when its writes are (docs/apply-and-state.md, "Saved change
	// sets"): several runs may carry one set (one stopped before its first
	// write, one resumed after a partial apply), so its index is no longer
	// unique; the run that finished it is the one with status ok.
	{5, "change sets applied by their writes", `
DROP INDEX IF EXISTS eepipe_runs_change_set;
CREATE INDEX IF NOT EXISTS eepipe_runs_change_set_runs ON eepipe_runs (change_set);
`, nil},
	{6, "target writes sent but not answered", `
CREATE INDEX IF NOT EXISTS eepipe_writes_pending ON eepipe_writes (target_id) WHERE outcome = 'pending';
`, nil},
	// The packed columns (packed.go): a write's counters in its row, a
	// target's last values in one row, each counter named by its id in
	// eepipe_counter_names; the index by plan, which no read can use
	// (they match the account by its key), goes.
	{7, "counters packed by write and by target", `
CREATE TABLE eepipe_counter_names (
	id {KEY},
	name TEXT NOT NULL UNIQUE
);
ALTER TABLE eepipe_writes ADD COLUMN counters TEXT NOT NULL DEFAULT '[]';
CREATE TABLE eepipe_last_values (
	service TEXT NOT NULL,
	target_id BIGINT NOT NULL,
	account TEXT NOT NULL,
	counters {JSON} NOT NULL,
	PRIMARY KEY (service, target_id, account)
) {WITHOUT_ROWID};
DROP INDEX IF EXISTS eepipe_writes_plan;
`, migratePacked},
	// The spellings of the accounts, with their pipeline.AccountKey
	// (accounts.go): the history's account filters match by it, the rule
	// routing and locks use, which SQL's LOWER and TRIM do not follow.
	{8, "account names matched by their key", `
CREATE TABLE eepipe_account_keys (
	account TEXT PRIMARY KEY,
	account_key TEXT NOT NULL
);
CREATE INDEX eepipe_account_keys_key ON eepipe_account_keys (account_key);
`, migrateAccountKeys},
	// SQLite: a target's last values (about 1.6 KB for the 90 counters of
	// a grid target) do not fit in a WITHOUT ROWID table's page (SQLite
	// keeps at most about 1 KB of a key's row there, and the rest on an
	// overflow page of its own, three quarters of it unused): a row id
	// table keeps such rows whole, two or more a page, and finds them by
	// the key's index (docs/performance.md, "Reading the last values").
	// The rows and their meaning are unchanged; PostgreSQL is left as it is.
	{9, "last values kept whole in their pages (SQLite)", ``, migrateLastValuesRowid},
	// The service address each account's key pair has its history under
	// (services.go): a key pair belongs to one account of one service,
	// so a run reaching it at another address is stopped, not given a
	// second history. An older store's runs did not record their key
	// pairs: each is recorded by its first run from this version on.
	{10, "the service of each key pair", `
CREATE TABLE eepipe_key_services (
	key_id TEXT PRIMARY KEY,
	service TEXT NOT NULL,
	run_id BIGINT NOT NULL REFERENCES eepipe_runs (id)
);
`, nil},
	// The API keys eepipe created (apikeys.go): the service lists no keys,
	// so a rotation revokes the old key by the id its create answered.
	{11, "API keys created by eepipe", `
CREATE TABLE eepipe_api_keys (
	service TEXT NOT NULL,
	api_key TEXT NOT NULL,
	key_id BIGINT NOT NULL,
	account TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT,
	revoked_at TEXT,
	PRIMARY KEY (service, api_key)
);
`, nil},
	// The person who signed off the change set a run applied, from its
	// verified sign-off (docs/apply-and-state.md, "Who can sign"); NULL
	// for a run of workbooks, an unsigned set, and every earlier run.
	{12, "the signer of a run's change set", `
ALTER TABLE eepipe_runs ADD COLUMN signer TEXT;
`, nil},
}

// SchemaVersion is the newest schema this eepipe knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrationLockKey serialises the first use of a PostgreSQL store by
// several hosts at once.
const migrationLockKey = 7_265_656_970_653_001

// pgCurrent reports whether the PostgreSQL store's schema is at least
// this eepipe's: then no upgrade is run and its lock is not taken (two
// runs open an upgraded store at once without waiting on each other).
func (s *Store) pgCurrent(ctx context.Context, conn *sql.Conn) bool {
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT to_regclass('eepipe_schema') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return false
	}
	var have sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT MAX(version) FROM eepipe_schema`).Scan(&have); err != nil {
		return false
	}
	return int(have.Int64) >= SchemaVersion()
}

// init checks the schema version and runs the missing migrations.
func (s *Store) init(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.dialect == dialectPostgres && !s.pgCurrent(ctx, conn) {
		if err := s.migrationLock(ctx, conn, s.lockWait); err != nil {
			return err
		}
		defer func() {
			bg := context.WithoutCancel(ctx)
			conn.ExecContext(bg, `SELECT pg_advisory_unlock($1)`, int64(migrationLockKey))
			conn.ExecContext(bg, `RESET application_name`)
		}()
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS eepipe_schema (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	var have sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT MAX(version) FROM eepipe_schema`).Scan(&have); err != nil {
		return err
	}
	if int(have.Int64) > SchemaVersion() {
		return fmt.Errorf("%w: the state store %s has schema version %d, but this eepipe knows versions up to %d; "+
			"upgrade eepipe (or use another store with --state); the store was not changed",
			pipeline.ErrStoreTooNew, s.where, have.Int64, SchemaVersion())
	}
	types := strings.NewReplacer("{ID}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{KEY}", "INTEGER PRIMARY KEY", "{JSON}", "TEXT", "{WITHOUT_ROWID}", "WITHOUT ROWID")
	if s.dialect == dialectPostgres {
		types = strings.NewReplacer("{ID}", "BIGSERIAL PRIMARY KEY", "{KEY}", "BIGSERIAL PRIMARY KEY", "{JSON}", "JSONB", "{WITHOUT_ROWID}", "")
	}
	for _, m := range migrations {
		if m.version <= int(have.Int64) {
			continue
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		// Another process may have migrated meanwhile (SQLite: the
		// transaction holds the write lock from its start).
		var now sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM eepipe_schema`).Scan(&now); err != nil {
			tx.Rollback()
			return err
		}
		if int(now.Int64) >= m.version {
			tx.Rollback()
			continue
		}
		for _, stmt := range strings.Split(types.Replace(m.sql), ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if m.then != nil {
			if err := m.then(ctx, tx, s.dialect); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO eepipe_schema (version, name, applied_at) VALUES (?, ?, ?)`),
			m.version, m.name, fmtTime(time.Now())); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
