// Package statestore keeps eepipe's run history: the runs, every target
// each apply wrote (recorded as pending before the request is sent, then
// with its answer), the last value applied per counter, and the saved
// change sets applied. It implements
// pipeline.StateStore over SQLite (modernc.org/sqlite, pure Go: the
// default, one file in the user's state folder) or PostgreSQL (pgx, for
// teams: shared history and an advisory lock per account).
//
// Both backends share the schema and the reads; only the id and JSON
// columns and the placeholders differ. A write's counters and a target's
// last values are packed in one row each, naming counters by their id
// (packed.go, names.go). The history's account filters match a name by
// pipeline.AccountKey through the spellings the store keeps (accounts.go),
// not by SQL's LOWER, which folds other letters on each backend. The
// address each account's key pair has its history under is kept by a
// digest of the key (services.go), so that one account reached at two
// addresses never gets two histories. The
// journal's writes have statements of each backend's own
// (journal_sqlite.go; journal_postgres.go, whose take a plan's writes as
// arrays). Migrations are versioned and run on first
// use (migrate.go); a store whose schema is newer than this eepipe knows
// is refused.
//
// Every record goes through the store's journal (journal.go): one writer
// goroutine that commits what has queued in one transaction (group
// commit; with SQLite, lingering briefly while several plans record at
// once).
//
// It is the one home of whether a PostgreSQL account lock is still held
// (lock.go: the locks of a run on one session, probed and shared like a
// group commit; lockwatch.go: the session's socket looked at between
// probes).
package statestore
