package diff

import (
	"context"
	"fmt"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
)

// HoldBack is a run's three-way rule: each change of the files is
// classified against the last values eepipe applied (Source, for Service)
// and the changes the service made meanwhile (ClassService, ClassBoth)
// are held back, unless Overwrite.
type HoldBack struct {
	// Source holds the last values applied; nil: no history (every
	// change is ClassNoHistory, nothing is held).
	Source    LastWriteSource
	Service   string // the service, as ServiceKey names it
	Overwrite bool   // make the service-side changes too
}

// ChangeSet classifies every plan of cs (ClassifyChanges) and holds back
// the service-side changes (holdServiceChanges); it returns what it held
// back (with Overwrite: what it would have held).
func (h HoldBack) ChangeSet(ctx context.Context, cs *ChangeSet) ([]HeldChange, error) {
	if err := ClassifyChanges(ctx, cs, h.Source, h.Service); err != nil {
		return nil, err
	}
	return holdServiceChanges(cs, h.Overwrite), nil
}

// Plan is ChangeSet for one plan's diff (classifyPlan, holdPlanChanges),
// as apply compares it: the ApplyHooks.Classify of a run.
func (h HoldBack) Plan(ctx context.Context, d *PlanDiff) ([]HeldChange, error) {
	if err := classifyPlan(ctx, d, h.Source, h.Service); err != nil {
		return nil, err
	}
	return holdPlanChanges(d, h.Overwrite), nil
}

// Unguarded counts the changes an apply writes to plans that already
// exist on the service with no value eepipe last applied on record
// (ClassNoHistory): there the run history cannot tell a change made on the
// service from the file's, and the file's value is written (a state store
// that is new or holds another history, or a file applied for the first
// time onto plans eepipe never wrote; docs/apply-and-state.md, "The state
// store"). Safe for concurrent use.
type Unguarded struct {
	mu             sync.Mutex
	plans, changes int
}

// Add counts the unguarded changes of d, classified (HoldBack.Plan), and
// returns the warning to log before its writes when d is the first plan
// of the run that has some ("" otherwise). store names the state store.
func (u *Unguarded) Add(d *PlanDiff, store string) string {
	if d.Action == ActionCreate || d.Action == ActionUnchanged || d.Server == nil {
		return ""
	}
	n := 0
	for _, f := range d.Fields {
		if f.Class == ClassNoHistory {
			n++
		}
	}
	for _, t := range d.Targets {
		for _, c := range t.Changes {
			if c.Class == ClassNoHistory {
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.plans++
	u.changes += n
	if u.plans > 1 {
		return ""
	}
	return fmt.Sprintf("%s already exists on the service and the state store %s holds no history of the %s the file makes to it: "+
		"changes made on the service cannot be told apart from the file's, and the file's values are written "+
		"(a mistyped --state, or a store that is new, starts an empty history; the run summary counts every such plan)",
		d.Title(), store, pipeline.Plural(n, "change"))
}

// Note returns the run's note on its unguarded changes, for the summary
// and the run report; "" when there were none.
func (u *Unguarded) Note(store string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.plans == 0 {
		return ""
	}
	return fmt.Sprintf("%s to %s that already existed on the service had no history in the state store %s: "+
		"changes made on the service there could not be told apart from the file's, and the file's values were written",
		pipeline.Plural(u.changes, "change"), pipeline.Plural(u.plans, "plan"), store)
}

// Changes returns how many unguarded changes were counted.
func (u *Unguarded) Changes() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.changes
}
