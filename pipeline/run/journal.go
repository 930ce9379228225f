package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// recordPending records the resolution of the pending writes d's
// classification found (adoptPending): their outcome, and for the adopted
// ones a write of this run whose counters count as applied. When that
// fails, the run stops (as for any write it cannot record).
func (r *Runner) recordPending(ctx context.Context, d *diff.PlanDiff) []string {
	if r.journal == nil || len(d.Pending) == 0 {
		return nil
	}
	ws := d.Pending
	d.Pending = nil
	if err := r.journal.PendingResolved(ctx, ws); err != nil {
		r.journalFailed(err)
		return []string{fmt.Sprintf("the writes an earlier run left unanswered could not be recorded as resolved in the state store: %v", err)}
	}
	r.countHeld(ws)
	return nil
}

// countHeld counts the counters of ws, recorded, that count as already
// held (TargetWrite.Held).
func (r *Runner) countHeld(ws []pipeline.TargetWrite) {
	n := 0
	for _, w := range ws {
		n += w.Held()
	}
	r.held.Add(int64(n))
}

// recordSending records the target writes of d's targets with changes
// (plan planID) in RunOptions.Journal before their requests are sent (the
// plan's together: TargetsSending), and returns them by target index (nil
// for a target with nothing to send, and all nil without a journal). The
// counters the file sets that are not sent and not held already hold the
// file's value: they are recorded as such (Sent false), so that a later
// change on the service is recognised. created says the plan was created
// by this run. When the journal fails the run stops and no request is
// sent.
func (r *Runner) recordSending(ctx context.Context, d *diff.PlanDiff, planID int64, created bool) ([]*pipeline.TargetWrite, error) {
	out := make([]*pipeline.TargetWrite, len(d.Targets))
	if r.journal == nil {
		return out, nil
	}
	var ws []pipeline.TargetWrite
	var at []int
	for i := range d.Targets {
		if t := &d.Targets[i]; len(t.Changes) > 0 {
			ws = append(ws, r.targetWrite(d, planID, t, created, nil, nil))
			at = append(at, i)
		}
	}
	if len(ws) == 0 {
		return out, nil
	}
	ids, jerr := r.journal.TargetsSending(ctx, ws)
	if jerr == nil && len(ids) != len(ws) {
		jerr = fmt.Errorf("%d ids for %d writes", len(ids), len(ws))
	}
	if jerr != nil {
		r.journalFailed(jerr)
		return nil, fmt.Errorf("%s not patched: the writes could not be recorded in the state store before they were sent: %w",
			pipeline.Plural(len(ws), "target"), jerr)
	}
	for k, i := range at {
		ws[k].ID = ids[k]
		out[i] = &ws[k]
	}
	return out, nil
}

// answered sets the outcome err of the target write w (recordSending's;
// nil without a journal) once its request completed. A failure that may
// have been applied (ErrMaybeApplied) leaves w pending (no outcome to
// record): the next run that reads the target settles it (adoptPending).
func (r *Runner) answered(w *pipeline.TargetWrite, err error) {
	if w == nil {
		return
	}
	w.Outcome, w.At = "ok", r.opts.now()
	switch {
	case errors.Is(err, pipeline.ErrMaybeApplied):
		w.Outcome = ""
	case err != nil:
		w.Outcome = err.Error()
	}
}

// recordAnswers records the outcomes of a plan's target writes
// (recordSending's, answered; nil entries are skipped) together. When
// that fails the run stops, and the error says the writes were sent.
func (r *Runner) recordAnswers(ctx context.Context, ws []*pipeline.TargetWrite) error {
	var out []pipeline.TargetWrite
	for _, w := range ws {
		if w != nil && w.Outcome != "" {
			out = append(out, *w)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if jerr := r.journal.TargetsWritten(ctx, out); jerr != nil {
		r.journalFailed(jerr)
		return fmt.Errorf("%s sent, but their answers could not be recorded in the state store: %w", pipeline.Plural(len(out), "target write"), jerr)
	}
	r.countHeld(out)
	return nil
}

// journalError is the failure to record a write of the run in the state
// store. It is fatal: the run stops writing, since its next writes would
// go unrecorded (and a later run could not tell them from a change made
// on the service).
type journalError struct{ err error }

func (e *journalError) Error() string {
	return fmt.Sprintf("the state store failed to record a write (%v); the run stopped writing, "+
		"as its next writes would go unrecorded", e.err)
}

// Unwrap returns the store's error.
func (e *journalError) Unwrap() error { return e.err }

// journalFailed stops the run after the state store failed to record a
// write: no request is sent after it (see gate).
func (r *Runner) journalFailed(err error) {
	r.gate.setFatal(&journalError{err: err})
}

// recordInSync records, for the targets of plan planID (diff d, result
// res) that this run did not patch, the counters the file sets that the
// service holds (all but the held ones), as agreed by this run: they count
// as last applied, so that a later change on the service is recognised
// even for a counter eepipe never had to send. A counter whose last
// applied value already is the file's (d.agreed) is not recorded again:
// its last applied value stays the earlier run's. Targets the file does
// not describe (a recreate's carried-over targets) are not recorded.
// created says the plan was created by this run (its counters had no
// value before). The plans' records are gathered and recorded together
// (flushInSync), one transaction per RunOptions.inSyncBatchSize counters and
// at the end of the run, so that what waits to be recorded stays bounded
// by the batch, not the file.
func (r *Runner) recordInSync(ctx context.Context, d *diff.PlanDiff, planID int64, targets []diff.TargetDiff, created bool, res *PlanResult) {
	agreed := d.Agreed
	d.Agreed = nil
	if r.journal == nil || d.Input == nil {
		return
	}
	if created {
		agreed = nil // no value before
	}
	fws := r.fieldsInSync(d, planID)
	var ws []pipeline.TargetWrite
	n := len(fws)
	for i := range targets {
		t := &targets[i]
		if len(t.Changes) > 0 || t.Input == nil || t.TargetID == 0 || !slices.Contains(d.Input.Targets, t.Input) {
			continue
		}
		if w := r.targetWrite(d, planID, t, created, agreed, nil); len(w.Counters) > 0 {
			ws = append(ws, w)
			n += len(w.Counters)
		}
	}
	if n == 0 {
		return
	}
	r.syncMu.Lock()
	r.inSync.ws = append(r.inSync.ws, ws...)
	r.inSync.fws = append(r.inSync.fws, fws...)
	r.inSync.plans = append(r.inSync.plans, res)
	r.inSync.n += n
	var full inSyncBatch
	if r.inSync.n >= r.opts.inSyncBatch() {
		full, r.inSync = r.inSync, inSyncBatch{}
	}
	r.syncMu.Unlock()
	r.recordAgreed(ctx, full)
}

// inSyncBatch is what recordInSync gathered and flushInSync has not
// recorded yet: the target records, the plan fields, the plans they are
// of, and how many counters and fields they hold.
type inSyncBatch struct {
	ws    []pipeline.TargetWrite
	fws   []pipeline.FieldWrite
	plans []*PlanResult
	n     int
}

// defaultInSyncBatch is how many counters and plan fields found in sync
// apply records together by default (RunOptions.inSyncBatchSize).
const defaultInSyncBatch = 10000

func (o RunOptions) inSyncBatch() int {
	if o.inSyncBatchSize <= 0 {
		return defaultInSyncBatch
	}
	return o.inSyncBatchSize
}

// recordAgreed records batch b in the journal. When that fails, the plans
// concerned get a note at the end of the run (flushInSync): their values
// then have no history.
func (r *Runner) recordAgreed(ctx context.Context, b inSyncBatch) {
	if b.n == 0 {
		return
	}
	err := r.journal.TargetsInSync(ctx, b.ws)
	if err == nil && len(b.fws) > 0 {
		err = r.journal.FieldsApplied(ctx, b.fws)
	}
	if err != nil {
		r.syncMu.Lock()
		defer r.syncMu.Unlock()
		for _, res := range b.plans {
			r.inSyncFailed = append(r.inSyncFailed, inSyncFailure{res, err})
		}
		return
	}
	r.countHeld(b.ws)
}

// inSyncFailure is a plan whose counters and fields in sync could not be
// recorded, and why.
type inSyncFailure struct {
	res *PlanResult
	err error
}

// fieldsInSync returns the plan fields of plan planID (diff d) whose value
// the file sets and the service holds after the run without a metadata
// update: not pending in d.Meta (recorded when the update succeeds,
// recordMeta) and not held. The dates are recorded as the service holds
// them (the file's end date may be clamped).
func (r *Runner) fieldsInSync(d *diff.PlanDiff, planID int64) []pipeline.FieldWrite {
	in, s := d.Input, d.Server
	if in == nil || s == nil || planID == 0 || planID != s.ID {
		return nil
	}
	var out []pipeline.FieldWrite
	for _, f := range pipeline.PlanFields {
		v := f.Input(in)
		if f.Date {
			if v == "" {
				continue
			}
			v = f.Stored(s)
		} else if slot, _ := f.Change(&d.Meta); *slot != nil || v != f.Stored(s) {
			continue
		}
		if v == "" || slices.ContainsFunc(d.HeldFields, func(h diff.FieldChange) bool { return h.Field == f.Name }) {
			continue
		}
		out = append(out, r.fieldWrite(d, planID, f.Name, v))
	}
	return out
}

func (r *Runner) fieldWrite(d *diff.PlanDiff, planID int64, field, value string) pipeline.FieldWrite {
	w := pipeline.FieldWrite{Account: d.Account, PlanID: planID, Field: field, Value: value, At: r.opts.now()}
	if d.Input != nil {
		w.File = d.Input.Origin.File
	}
	return w
}

// recordMeta records as last applied the fields a successful metadata
// update of plan planID (diff d) wrote.
func (r *Runner) recordMeta(ctx context.Context, d *diff.PlanDiff, planID int64) error {
	var ws []pipeline.FieldWrite
	for _, f := range pipeline.PatchedPlanFields() {
		if v, _ := f.Change(&d.Meta); *v != nil {
			ws = append(ws, r.fieldWrite(d, planID, f.Name, **v))
		}
	}
	if len(ws) == 0 {
		return nil
	}
	return r.journal.FieldsApplied(ctx, ws)
}

// flushInSync records what recordInSync gathered since its last batch,
// once every plan is done, and notes on each plan whose values in sync
// could not be recorded.
func (r *Runner) flushInSync(ctx context.Context) {
	r.syncMu.Lock()
	b := r.inSync
	r.inSync = inSyncBatch{}
	r.syncMu.Unlock()
	r.recordAgreed(ctx, b)
	r.syncMu.Lock()
	failed := r.inSyncFailed
	r.inSyncFailed = nil
	r.syncMu.Unlock()
	for _, f := range failed {
		f.res.Notes = append(f.res.Notes, fmt.Sprintf("the counters and fields of %s already in sync could not be recorded in the state store "+
			"(a later change on the service to them will show as no history): %v", f.res.Diff.Title(), f.err))
	}
}

// targetWrite builds the record of target t of plan planID (diff d) with
// outcome err: the counters sent, then the counters the file sets that
// were neither sent nor held (Sent false; with no value before when the
// plan was created by this run), but for those whose last applied value
// agreed knows to be the file's.
func (r *Runner) targetWrite(d *diff.PlanDiff, planID int64, t *diff.TargetDiff, created bool, agreed *diff.AgreedValues, err error) pipeline.TargetWrite {
	w := pipeline.TargetWrite{
		Account: d.Account, PlanID: planID, MilestoneID: t.MilestoneID, TargetID: t.TargetID,
		YearNumber: t.YearNumber, TargetType: t.TargetType, Outcome: "ok", At: r.opts.now(),
	}
	if d.Input != nil {
		w.PlanName = d.Input.Name
	}
	if w.PlanName == "" && d.Server != nil {
		w.PlanName = d.Server.Name
	}
	if t.FinancialYear != 0 {
		w.FinancialYear = t.FinancialYear.String()
	}
	if err != nil {
		w.Outcome = err.Error()
	}
	sent := map[string]bool{}
	for _, c := range t.Changes {
		cw := pipeline.CounterWrite{Counter: c.Name, After: c.New, Sent: true}
		if c.OldKnown {
			cw.Before = diff.Ptr(c.Old)
		}
		w.Counters = append(w.Counters, cw)
		sent[c.Name] = true
	}
	for _, c := range t.Held {
		sent[c.Name] = true
	}
	if t.Input != nil {
		w.File = t.Input.Origin.File
		// The values before of the counters not sent, in one allocation
		// (a first apply records millions).
		var before []int64
		for name, v := range t.Input.Counters.All() {
			if !sent[name] && !agreed.Known(t.TargetID, name, v) {
				cw := pipeline.CounterWrite{Counter: name, After: v}
				if !created {
					if before == nil {
						before = make([]int64, 0, t.Input.Counters.Count())
						w.Counters = slices.Grow(w.Counters, t.Input.Counters.Count())
					}
					before = append(before, v)
					cw.Before = &before[len(before)-1]
				}
				w.Counters = append(w.Counters, cw)
			}
		}
	}
	return w
}

// recordPlan records a plan request (p is the plan it concerns, nil for a
// failed create) and returns a note when it could not be recorded.
func (r *Runner) recordPlan(ctx context.Context, d *diff.PlanDiff, p *pipeline.Plan, action string, err error) []string {
	if r.journal == nil {
		return nil
	}
	w := pipeline.PlanWrite{Account: d.Account, Action: action, Outcome: "ok", At: r.opts.now()}
	if p != nil {
		w.PlanID = p.ID
	}
	if d.Input != nil {
		w.PlanName = d.Input.Name
	}
	if w.PlanName == "" && p != nil {
		w.PlanName = p.Name
	}
	if w.PlanName == "" && d.Server != nil {
		w.PlanName = d.Server.Name
	}
	if err != nil {
		w.Outcome = err.Error()
	}
	jerr := r.journal.PlanWritten(ctx, w)
	if jerr == nil && err == nil && p != nil && strings.HasPrefix(action, "update") {
		jerr = r.recordMeta(ctx, d, p.ID)
	}
	if jerr != nil {
		r.journalFailed(jerr)
		return []string{fmt.Sprintf("the %s request could not be recorded in the state store: %v", action, jerr)}
	}
	return nil
}

// fieldUpdates describes a metadata update for the run history:
// `sector "Education" -> "Construction", name "A" -> "B"` (the value
// before and the value written, as for counters).
func fieldUpdates(fs []diff.FieldChange) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %s -> %s", f.Field, diff.FieldValueText(f.Old), diff.FieldValueText(f.New))
	}
	return strings.Join(parts, ", ")
}
