package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// DryRun turns a ChangeSet into a report without sending anything.
func (r *Runner) DryRun(cs *diff.ChangeSet, started time.Time) *RunReport {
	rep := &RunReport{Started: started, DryRun: true}
	for _, d := range cs.Plans {
		res := &PlanResult{Diff: d, PlanID: d.PlanID(), Notes: slices.Clone(d.Notes)}
		switch d.Action {
		case diff.ActionCreate:
			res.Outcome = outcomeWouldCreate
		case diff.ActionUpdate:
			res.Outcome = outcomeWouldUpdate
		case diff.ActionRecreate:
			res.Outcome = outcomeWouldRecreate
		case diff.ActionUnchanged:
			res.Outcome = outcomeUnchanged
		default:
			res.Outcome = OutcomeFailed
			res.Err = errors.New(d.Reason)
		}
		for _, t := range d.Targets {
			res.Targets = append(res.Targets, TargetResult{Diff: t})
		}
		rep.Plans = append(rep.Plans, res)
	}
	rep.Requests = r.gate.snapshot()
	rep.Finished = r.opts.now()
	return rep
}

// finishApply ends an apply whose plans are done: it records the counters
// found in sync, recalculates the linked scorecards (unless NoRecalc) and
// completes rep.
func (r *Runner) finishApply(ctx context.Context, rep *RunReport) {
	r.flushInSync(ctx)
	if !r.opts.NoRecalc {
		rep.Recalcs = r.recalcLinked(ctx, rep.Plans)
	}
	rep.Requests = r.gate.snapshot()
	rep.Fatal = r.gate.fatalErr()
	rep.Interrupted = ctx.Err() != nil
	rep.CountersHeld = int(r.held.Load())
	rep.Finished = r.opts.now()
}

// planDone counts res and hands it to RunOptions.Observer.
func (r *Runner) planDone(res *PlanResult) {
	r.done.Add(1)
	if r.opts.Observer != nil {
		r.mu.Lock()
		r.opts.Observer.PlanDone(res)
		r.mu.Unlock()
	}
}

// applyPlan applies one PlanDiff: a plan with nothing to write is
// settled at once (settled); a new or recreated plan is created first
// (createPlan), then the plan's fields and targets are written
// (writePlan).
func (r *Runner) applyPlan(ctx context.Context, d *diff.PlanDiff) *PlanResult {
	res := &PlanResult{Diff: d, PlanID: d.PlanID(), Notes: slices.Clone(d.Notes)}
	// What became of the writes an earlier run left unanswered, before
	// this run writes the same targets.
	res.Notes = append(res.Notes, r.recordPending(ctx, d)...)
	if r.settled(ctx, d, res) {
		return res
	}
	svc := r.account(d.Account)
	if svc == nil {
		res.Outcome, res.Err = OutcomeFailed, fmt.Errorf("account %q is not configured", d.Account)
		return res
	}

	work := d
	defer func() { d.Agreed = nil }() // a recreate's: read for the old plan
	created := d.Action == diff.ActionCreate || d.Action == diff.ActionRecreate
	if created {
		if work = r.createPlan(ctx, svc, d, res); work == nil {
			return res
		}
	} else {
		res.Outcome = OutcomeUpdated
	}
	r.writePlan(ctx, svc, work, created, res)
	if work != d {
		// Sent from work: d's changes are kept as counts only.
		d.DropChanges()
		if r.opts.CountsOnly {
			for i := range res.Targets {
				tr := &res.Targets[i]
				tr.changed, tr.Diff.Changes = tr.changeCount(), nil
			}
		}
	}
	return res
}

// settled gives res the outcome of a plan that is not written: unchanged,
// failed before the run, or not applied because the run has stopped. It
// reports false when the plan is to be written.
func (r *Runner) settled(ctx context.Context, d *diff.PlanDiff, res *PlanResult) bool {
	switch d.Action {
	case diff.ActionUnchanged:
		res.Outcome = outcomeUnchanged
		for _, t := range d.Targets {
			res.Targets = append(res.Targets, TargetResult{Diff: t})
		}
		r.recordInSync(ctx, d, d.PlanID(), d.Targets, false, res)
		return true
	case diff.ActionFailed:
		res.Outcome = OutcomeFailed
		if strings.HasPrefix(d.Reason, "not compared: not sent") {
			res.Outcome = OutcomeNotApplied
		}
		res.Err = errors.New(d.Reason)
		return true
	}
	if err := r.gate.stopErr(ctx); err != nil {
		res.Outcome, res.Err = OutcomeNotApplied, err
		return true
	}
	return false
}

// createPlan creates the plan of a create or recreate (adopting a plan an
// earlier create or recreate made), deletes a recreate's old plan, and
// returns what is left to write to the created plan: the diff of the file
// against it. It returns nil when the plan failed (res says why).
func (r *Runner) createPlan(ctx context.Context, svc pipeline.PlanService, d *diff.PlanDiff, res *PlanResult) *diff.PlanDiff {
	skip := map[int64]bool{}
	if d.Server != nil {
		skip[d.Server.ID] = true
	}
	var created *pipeline.Plan
	var notes []string
	var err error
	if d.Action == diff.ActionRecreate {
		// A recreate killed between its create and its delete (or
		// whose delete failed) left the new plan: adopt it rather than
		// create a third.
		created, notes, err = r.findRecreated(ctx, svc, d)
	}
	if created == nil && err == nil {
		var more []string
		created, more, err = r.create(ctx, svc, d, skip)
		notes = append(notes, more...)
	}
	res.Notes = append(res.Notes, notes...)
	res.Notes = append(res.Notes, r.recordPlan(ctx, d, created, "create", err)...)
	if err != nil {
		res.Err = err
		res.Outcome = OutcomeFailed
		if errors.Is(err, pipeline.ErrStopped) {
			res.Outcome = OutcomeNotApplied
		}
		if d.Action == diff.ActionRecreate {
			res.Err = fmt.Errorf("the new plan could not be created, so plan %d was kept unchanged: %w", d.Server.ID, err)
		}
		return nil
	}
	res.Wrote = true
	res.PlanID = created.ID
	res.Outcome = OutcomeCreated
	if d.Action == diff.ActionRecreate {
		r.deleteOld(ctx, svc, d, created, res)
	}
	// The created plan holds the prefill (or zeros): patch only what differs.
	work := diff.Diff(d.CreateSource(), created, r.opts.Diff)
	work.Input, work.Account, work.Company = d.Input, d.Account, d.Company
	d.RemapTargets(work.Targets)
	if work.Action == diff.ActionFailed {
		res.Err = fmt.Errorf("plan %d was created but its targets cannot be patched: %s", created.ID, work.Reason)
		res.Outcome = OutcomeFailed
		return nil
	}
	return work
}

// deleteOld deletes the old plan of a recreate whose new plan, created,
// exists.
func (r *Runner) deleteOld(ctx context.Context, svc pipeline.PlanService, d *diff.PlanDiff, created *pipeline.Plan, res *PlanResult) {
	res.OldPlanID = d.Server.ID
	res.Outcome = OutcomeRecreated
	err := svc.DeletePlan(ctx, d.Server.ID)
	res.Notes = append(res.Notes, r.recordPlan(ctx, d, d.Server, "delete", err)...)
	if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
		// A failure, not a recreate: two plans now exist.
		res.Err = recreateDeleteError(d, created.ID, err)
		res.Outcome = OutcomeFailed
	} else {
		res.Notes = append(res.Notes, fmt.Sprintf("recreated with the new dates as plan %d; the old plan %d was deleted", created.ID, d.Server.ID))
	}
}

// writePlan writes the plan's fields and targets, concurrently (the plan
// exists now), and gives res their outcome. The target writes are on
// record before any is sent.
func (r *Runner) writePlan(ctx context.Context, svc pipeline.PlanService, work *diff.PlanDiff, created bool, res *PlanResult) {
	var mu sync.Mutex
	var errs []error
	jws, jerr := r.recordSending(ctx, work, res.PlanID, created)
	if jerr != nil {
		errs = append(errs, jerr)
	}
	tp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	if !work.Meta.IsZero() {
		tp.Go(func() {
			_, err := svc.UpdatePlan(ctx, res.PlanID, work.Meta)
			notes := r.recordPlan(ctx, work, &pipeline.Plan{ID: res.PlanID}, "update "+fieldUpdates(work.Fields), err)
			mu.Lock()
			defer mu.Unlock()
			res.Notes = append(res.Notes, notes...)
			if err != nil {
				errs = append(errs, fmt.Errorf("plan metadata (%s) not updated: %w", fieldNames(work.Fields), err))
				return
			}
			res.metaUpdated, res.Wrote = true, true
		})
	}
	res.Targets = make([]TargetResult, len(work.Targets))
	for i, t := range work.Targets {
		res.Targets[i] = TargetResult{Diff: t}
		if len(t.Changes) == 0 {
			continue
		}
		if jerr != nil {
			res.Targets[i].err = fmt.Errorf("%s (target %d) not patched: %w", t.Label(), t.TargetID, pipeline.ErrStopped)
			continue
		}
		tp.Go(func() {
			err := pipeline.PatchTarget(ctx, svc, res.PlanID, t.MilestoneID, t.TargetID, t.Patch())
			r.answered(jws[i], err)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Targets[i].err = patchError(&t, err)
				errs = append(errs, res.Targets[i].err)
				return
			}
			res.Targets[i].Patched, res.Wrote = true, true
			r.patched.Add(1)
			r.counters.Add(int64(len(t.Changes)))
		})
	}
	tp.Wait()
	// The plan's answers, together (until then the writes are on record
	// as pending: see docs/apply-and-state.md, "What a crash can lose").
	if err := r.recordAnswers(ctx, jws); err != nil {
		errs = append(errs, err)
	}
	// The targets not patched hold what the file says (but for held
	// counters): the run agreed them with the service.
	r.recordInSync(ctx, work, res.PlanID, work.Targets, created, res)
	writeFailures(res, errs)
}

// patchError words the failure err of target t's patch: not patched, or,
// when an attempt may have been applied (ErrMaybeApplied: an earlier
// attempt got no clear answer), that it may have been and that the next
// run confirms it (its write stays pending in the state store: see
// docs/apply-and-state.md, "What a crash can lose").
func patchError(t *diff.TargetDiff, err error) error {
	if errors.Is(err, pipeline.ErrMaybeApplied) {
		return fmt.Errorf("%s (target %d) may have been patched: an attempt got no clear answer and the last failed (%w); "+
			"the next apply reads the target and confirms it (adopted when the service holds the values)", t.Label(), t.TargetID, err)
	}
	return fmt.Errorf("%s (target %d) not patched: %w", t.Label(), t.TargetID, err)
}

// writeFailures gives res the outcome of the failed writes errs: not
// applied when the run stopped before any write, failed otherwise.
func writeFailures(res *PlanResult, errs []error) {
	if len(errs) == 0 {
		return
	}
	stoppedOnly := true
	for _, e := range errs {
		stoppedOnly = stoppedOnly && errors.Is(e, pipeline.ErrStopped)
	}
	msg := errs[0].Error()
	if len(errs) > 1 {
		msg = fmt.Sprintf("%s (and %s)", msg, pipeline.Plural(len(errs)-1, "more failure"))
	}
	if res.Err != nil {
		msg = res.Err.Error() + "; also " + msg // a recreate's failed delete stays in the message
	}
	res.Err = errors.New(msg)
	if stoppedOnly && !res.Wrote {
		res.Outcome = OutcomeNotApplied
		res.Err = errs[0]
	} else {
		res.Outcome = OutcomeFailed
	}
}

func fieldNames(fs []diff.FieldChange) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Field
	}
	return strings.Join(names, ", ")
}

// account returns the gated service of the named account (SameAccount).
func (r *Runner) account(name string) pipeline.PlanService {
	for _, a := range r.accounts {
		if pipeline.SameAccount(a.Name, name) {
			return a.Service
		}
	}
	return nil
}

// recreateDeleteError words the failure of a recreate whose new plan
// exists but whose old plan could not be deleted, with advice that holds:
// a rerun with the old plan_id adopts the new plan and deletes the old one;
// a file without plan_id would match both while they share a start date.
func recreateDeleteError(d *diff.PlanDiff, newID int64, err error) error {
	oldID := d.Server.ID
	advice := fmt.Sprintf("delete plan %d by hand", oldID)
	if d.Input != nil && d.Input.PlanID == oldID {
		advice = fmt.Sprintf("run the same apply --recreate-on-date-change again (it adopts plan %d and deletes plan %d, creating nothing), "+
			"or delete plan %d by hand and put plan_id %d in the workbook", newID, oldID, oldID, newID)
	} else if d.Server.StartDate == d.Create.StartDate {
		advice += fmt.Sprintf("; until then both plans have the file's name and start date, so the file needs plan_id %d", newID)
	}
	return fmt.Errorf("created plan %d with the new dates, but the old plan %d could not be deleted (%v); %s",
		newID, oldID, err, advice)
}

// create sends the create request of d and never duplicates a plan: when
// the POST gets no clear answer, the account's plans are listed again; a
// plan with d's name and start date that was not there before (ids in skip
// were) is adopted, otherwise the POST is sent again, up to
// RunOptions.createAttempts times.
func (r *Runner) create(ctx context.Context, svc pipeline.PlanService, d *diff.PlanDiff, skip map[int64]bool) (*pipeline.Plan, []string, error) {
	attempts := r.opts.createAttempts
	if attempts <= 0 {
		attempts = 3
	}
	var (
		notes   []string
		created *pipeline.Plan
	)
	// No wait between attempts (pace.Fixed(0)): a create is sent again only
	// once the list shows it was not applied, which makes it repeatable.
	// The pacer's context does not end: whether the run stopped is the
	// gate's to say when the create is sent again (a *stoppedError).
	err := pace.Pacer{MaxAttempts: attempts}.Call(context.WithoutCancel(ctx), func(a pace.Attempt) pace.Verdict {
		p, err := svc.CreatePlan(ctx, *d.Create)
		if err == nil {
			if len(p.Milestones) == 0 {
				// A create response without milestones: read the plan.
				full, gerr := r.readBack(ctx, svc, p.ID)
				if gerr != nil {
					return pace.Done(fmt.Errorf("plan %d was created but could not be read back: %w", p.ID, gerr))
				}
				p = full
			}
			created = p
			return pace.Done(nil)
		}
		if errors.Is(err, pipeline.ErrStopped) {
			return pace.Done(err)
		}
		if !errors.Is(err, pipeline.ErrUnclearOutcome) {
			return pace.Done(fmt.Errorf("create rejected: %w", err))
		}
		if strings.TrimSpace(d.Create.Name) == "" {
			return pace.Done(fmt.Errorf("the create request got no clear answer (%w); a plan without a name cannot be found again safely, "+
				"so it was not sent again: check the account's plans before running again", err))
		}
		found, lerr := r.findCreated(ctx, svc, d.Create.Name, d.Create.StartDate, skip)
		if lerr != nil {
			// Not ErrStopped even when the list was not sent: the create
			// may have been applied, so the plan is failed, not "not applied".
			return pace.Done(fmt.Errorf("the create request got no clear answer (%w) and the plans could not be listed to check whether it was applied (%v); "+
				"list the account's plans before running again", err, lerr))
		}
		switch {
		case len(found) == 1:
			full, gerr := r.readBack(ctx, svc, found[0].ID)
			if gerr != nil {
				return pace.Done(fmt.Errorf("the create request got no clear answer; plan %d was created by it but could not be read: %w", found[0].ID, gerr))
			}
			notes = append(notes, fmt.Sprintf("the create request got no clear answer (%v); the plan had been created as plan %d and was adopted, not created twice", err, full.ID))
			created = full
			return pace.Done(nil)
		case len(found) > 1:
			return pace.Done(fmt.Errorf("the create request got no clear answer and now %d plans named %q start %s; check them on the service", len(found), d.Create.Name, d.Create.StartDate))
		}
		if a.Last {
			return pace.Done(fmt.Errorf("the create request got no clear answer %d times and the plan was not created: %w", a.N, err))
		}
		notes = append(notes, fmt.Sprintf("the create request got no clear answer (%v) and the plan was not created; sent it again", err))
		return pace.Again(err) // not applied, as the list shows: safe to send again
	})
	if err != nil {
		return nil, notes, err
	}
	return created, notes, nil
}
