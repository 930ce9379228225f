package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// A recreate (--recreate-on-date-change) creates the plan with its new
// dates, then deletes the old one. A run killed in between, or whose
// DELETE failed, leaves the new plan beside the old; the next recreate
// adopts it rather than create a third (Runner.findRecreated). diff must
// say so too: the functions below are the one rule and the one wording
// for both.

// recreateLeftovers returns the plans of list that an earlier, unfinished
// recreate of d left: other than the old plan, with the new name and start
// date (matchPlans) and the new end date (or the clamped one the service
// stored).
func recreateLeftovers(list []pipeline.Plan, d *diff.PlanDiff) []*pipeline.Plan {
	var found []*pipeline.Plan
	for _, p := range pipeline.MatchPlans(list, 0, d.Create.Name, d.Create.StartDate, map[int64]bool{d.Server.ID: true}) {
		if p.EndDate == d.Create.EndDate || p.EndDate == pipeline.ClampEnd(d.Create.EndDate) {
			found = append(found, p)
		}
	}
	return found
}

// leftoverAdoptedNote words the adoption of the plan id left by an earlier
// recreate: as apply reports it (done) or as diff announces it.
func leftoverAdoptedNote(id int64, done bool) string {
	verb := "will be adopted"
	if done {
		verb = "was adopted"
	}
	return fmt.Sprintf("plan %d with the new dates was left by an earlier recreate that did not finish; it %s, not created again", id, verb)
}

// leftoversError is the failure of a recreate that finds several plans
// left by earlier recreates: which one to keep is the user's choice.
func leftoversError(found []*pipeline.Plan, oldID int64) error {
	ids := make([]string, len(found))
	for i, p := range found {
		ids[i] = fmt.Sprint(p.ID)
	}
	return fmt.Errorf("plans %s already have the new name and dates of plan %d (left by earlier recreates); "+
		"delete all but one of them, then run again", strings.Join(ids, ", "), oldID)
}

// planLeftovers makes each recreate of cs say what apply will do when its
// account's plans (cs.listed) hold plans left by an earlier recreate that
// did not finish: with one, its Reason says the plan will be adopted and
// the old one deleted, and its counters are compared with the adopted
// plan's (read in full), which is what apply then patches; with several,
// the plan fails as apply fails it.
func (r *Runner) planLeftovers(ctx context.Context, cs *diff.ChangeSet) {
	type adopt struct {
		d    *diff.PlanDiff
		ref  storedRef
		from string // the Reason's "the dates change from ... to ...:"
	}
	var todo []adopt
	for i, d := range cs.Plans {
		if d == nil || d.Action != diff.ActionRecreate || d.Server == nil || d.Create == nil {
			continue
		}
		list, ok := cs.Listed[d.Account]
		if !ok {
			continue
		}
		found := recreateLeftovers(list, d)
		switch len(found) {
		case 0:
			continue
		case 1:
		default:
			f := diff.Failed(d.Input, leftoversError(found, d.Server.ID).Error())
			f.Server, f.Account, f.Company = d.Server, d.Account, d.Company
			cs.Plans[i] = f
			continue
		}
		a := -1
		for k, acc := range r.accounts {
			if pipeline.SameAccount(acc.Name, d.Account) {
				a = k
			}
		}
		if a < 0 {
			continue
		}
		from, _, _ := strings.Cut(d.Reason, ": ")
		todo = append(todo, adopt{d, storedRef{a, found[0].ID}, from})
	}
	if len(todo) == 0 {
		return
	}
	refs := make([]storedRef, len(todo))
	for k, t := range todo {
		refs[k] = t.ref
	}
	got, errs := r.getPlans(ctx, refs)
	for k, t := range todo {
		d := t.d
		if errs[k] != nil {
			f := diff.Failed(d.Input, fmt.Sprintf("plan %d, left with the new dates by an earlier recreate, could not be read: %v", t.ref.id, errs[k]))
			f.Server, f.Account, f.Company = d.Server, d.Account, d.Company
			for i := range cs.Plans {
				if cs.Plans[i] == d {
					cs.Plans[i] = f
				}
			}
			continue
		}
		d.Reason = fmt.Sprintf("%s: %s, and the old plan %d will be deleted; counters the file leaves blank keep their stored values",
			t.from, leftoverAdoptedNote(t.ref.id, false), d.Server.ID)
		// apply patches the adopted plan with what differs from it.
		work := diff.Diff(d.CreateSource(), got[k], r.opts.Diff)
		if work.Action == diff.ActionFailed {
			continue // apply fails it after adopting; the recreate stands
		}
		d.RemapTargets(work.Targets)
		d.Targets = work.Targets
	}
}
