package statestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ErrDamaged is matched (errors.Is) by the refusal of an SQLite store that
// fails its integrity check at open.
var ErrDamaged = errors.New("the state store is damaged")

// fullCheckMax is the largest SQLite store whose every page is checked at
// open (PRAGMA quick_check: 5 to 10 ms per MiB). A larger store has its
// small tables checked (the schema, the runs and the locks: what a run
// reads first and what every record hangs on), and SQLite's own checks
// of every page it reads then catch damage elsewhere as it is met.
const fullCheckMax = 64 << 20

// checkSQLite checks the integrity of the SQLite store at path, when it
// holds anything, on a connection of its own that writes nothing (no
// journal mode set, no migration): a damaged store is refused (ErrDamaged)
// before anything is written to it, and is left exactly as it was. With
// no write-ahead log beside the store the connection is a read-write one,
// so that it removes the -wal and -shm files its reads create when it
// closes (there is nothing to copy back); with a log left by a run that
// was killed, it is read-only, so that closing it does not copy the log
// into the store. A check that cannot run (the store locked for longer
// than the busy timeout, a log a read-only connection cannot read) is no
// verdict: the store's own open says more.
func checkSQLite(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return nil
	}
	mode := "rw"
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		mode = "ro"
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode="+mode+"&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	queries := []string{`PRAGMA quick_check(20)`}
	if st.Size() > fullCheckMax {
		queries = nil
		for _, t := range []string{"eepipe_schema", "eepipe_runs", "eepipe_locks"} {
			queries = append(queries, `PRAGMA quick_check(`+t+`)`)
		}
	}
	var found []string
	for _, q := range queries {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			if damagedMessage(err.Error()) {
				return damaged(path, err.Error())
			}
			return nil // no verdict on the file: the store's own open says more
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				break
			}
			if line != "ok" {
				found = append(found, line)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil && damagedMessage(err.Error()) {
			return damaged(path, err.Error())
		}
	}
	if len(found) > 0 {
		if len(found) > 3 {
			found = append(found[:3], fmt.Sprintf("and %d more", len(found)-3))
		}
		return damaged(path, strings.Join(found, "; "))
	}
	return nil
}

// damagedMessage reports whether an SQLite error says the file is damaged
// or is not a database.
func damagedMessage(msg string) bool {
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "file is not a database") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB")
}

func damaged(path, what string) error {
	return &damagedError{msg: fmt.Sprintf("the state store %s is damaged or not an eepipe state store: it failed SQLite's integrity check (%s); "+
		"it was not changed. Restore it from a backup, or move it aside to start a new history (the changes made on the service since "+
		"the last run are then not told apart), or give another store with --state", path, what)}
}

// damagedError is the refusal of a damaged store; errors.Is(err, ErrDamaged).
type damagedError struct{ msg string }

func (e *damagedError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrDamaged) true.
func (e *damagedError) Is(target error) bool { return target == ErrDamaged }
