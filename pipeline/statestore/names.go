package statestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
)

// counterIDs is a store's table of counter names (eepipe_counter_names,
// schema version 7) as far as this process has read it: the packed
// columns (packed.go) name a counter by its id there, a few bytes instead
// of a name of forty. A name's id never changes once given.
type counterIDs struct {
	mu     sync.Mutex
	byName map[string]int64
	byID   map[int64]string
}

// execQuerier is what the table is read and added to through: the
// journal's connection or a migration's transaction.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (c *counterIDs) add(id int64, name string) {
	if c.byName == nil {
		c.byName, c.byID = map[string]int64{}, map[int64]string{}
	}
	c.byName[name], c.byID[id] = id, name
}

// namesPerStmt bounds the names one statement adds or reads.
const namesPerStmt = 200

// ids returns the ids of names, adding to the table (through q) those it
// lacks; another process adding the same name at once gets the same id.
func (c *counterIDs) ids(ctx context.Context, q execQuerier, d dialect, names map[string]bool) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	var missing []string
	c.mu.Lock()
	for n := range names {
		if id, ok := c.byName[n]; ok {
			out[n] = id
		} else {
			missing = append(missing, n)
		}
	}
	c.mu.Unlock()
	for start := 0; start < len(missing); start += namesPerStmt {
		part := missing[start:min(start+namesPerStmt, len(missing))]
		args := make([]any, len(part))
		for i, n := range part {
			args[i] = n
		}
		marks := "(?" + strings.Repeat("), (?", len(part)-1) + ")"
		if _, err := q.ExecContext(ctx, rebind(d, `INSERT INTO eepipe_counter_names (name) VALUES `+marks+` ON CONFLICT (name) DO NOTHING`), args...); err != nil {
			return nil, err
		}
		in := "(?" + strings.Repeat(", ?", len(part)-1) + ")"
		if err := c.read(ctx, q, rebind(d, `SELECT id, name FROM eepipe_counter_names WHERE name IN `+in), args...); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range missing {
			id, ok := c.byName[n]
			if !ok {
				return nil, fmt.Errorf("counter %q was given no id", n)
			}
			out[n] = id
		}
	}
	return out, nil
}

// read adds the (id, name) rows of query to the table.
func (c *counterIDs) read(ctx context.Context, q execQuerier, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		c.add(id, name)
	}
	return rows.Err()
}

// id returns the id of name when the table has it (reading the table
// again when this process does not know it yet).
func (c *counterIDs) id(ctx context.Context, db *sql.DB, name string) (int64, bool, error) {
	c.mu.Lock()
	id, ok := c.byName[name]
	c.mu.Unlock()
	if ok {
		return id, true, nil
	}
	if err := c.read(ctx, db, `SELECT id, name FROM eepipe_counter_names`); err != nil {
		return 0, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok = c.byName[name]
	return id, ok, nil
}

// namer returns the name of a counter id for one read: it keeps the names
// it has looked up (by id in a slice, the ids being small and dense: a
// read names millions of counters), and reads the table again (from db)
// at most once, for an id given after this process last read it.
func (c *counterIDs) namer(ctx context.Context, db *sql.DB) func(id int64) (string, error) {
	var local []string // by id below namerDense
	far := map[int64]string{}
	reread := false
	return func(id int64) (string, error) {
		if id >= 0 && id < int64(len(local)) && local[id] != "" {
			return local[id], nil
		}
		if n, ok := far[id]; ok {
			return n, nil
		}
		c.mu.Lock()
		n, ok := c.byID[id]
		c.mu.Unlock()
		if !ok && !reread {
			reread = true
			if err := c.read(ctx, db, `SELECT id, name FROM eepipe_counter_names`); err != nil {
				return "", err
			}
			c.mu.Lock()
			n, ok = c.byID[id]
			c.mu.Unlock()
		}
		if !ok {
			return "", fmt.Errorf("counter id %d is not in eepipe_counter_names", id)
		}
		if id >= 0 && id < namerDense {
			if id >= int64(len(local)) {
				local = append(local, make([]string, int(id)+1-len(local))...)
			}
			local[id] = n
		} else {
			far[id] = n
		}
		return n, nil
	}
}

// namerDense bounds the counter ids a namer keeps in its slice.
const namerDense = 1 << 16

// batchNames returns the counter names of the target writes of batch. A
// write whose counters are named as the one before it (the targets of a
// file set the same counters, in the catalog's order) adds nothing and is
// skipped: a first apply's batch holds about 10,000 counters of a few
// names.
func batchNames(batch []*op) map[string]bool {
	names := map[string]bool{}
	var prev []pipeline.CounterWrite
	for _, o := range batch {
		switch o.kind {
		case opWrites, opOutcome, opResolve:
			for _, w := range o.ws {
				if sameNames(w.Counters, prev) {
					continue
				}
				for _, c := range w.Counters {
					names[c.Counter] = true
				}
				prev = w.Counters
			}
		}
	}
	return names
}

// sameNames reports whether a and b name the same counters in the same
// order.
func sameNames(a, b []pipeline.CounterWrite) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Counter != b[i].Counter {
			return false
		}
	}
	return true
}
