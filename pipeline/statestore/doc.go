// Package statestore keeps eepipe's run history: the runs, every target
// each apply wrote (recorded as each request completes), the last value
// applied per counter, and the saved change sets applied. It implements
// pipeline.StateStore over SQLite (modernc.org/sqlite, pure Go: the
// default, one file in the user's state folder) or PostgreSQL (pgx, for
// teams: shared history and an advisory lock per account).
//
// Both backends share the SQL; only the schema's id columns and the
// placeholders differ. Migrations are versioned and run on first use; a
// store whose schema is newer than this eepipe knows is refused.
package statestore
