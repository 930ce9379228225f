package pipeline

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ChangeClass classifies a differing counter three ways: the file's value,
// the service's value, and the value eepipe last applied (from the state
// store).
type ChangeClass string

// Change classes. The zero class means "not classified" (no state store).
const (
	// ClassFile: changed in the file; the service still holds what eepipe
	// last wrote.
	ClassFile ChangeClass = "changed_in_file"
	// ClassService: changed on the service since eepipe last wrote it; the
	// file still holds what eepipe last wrote.
	ClassService ChangeClass = "changed_on_service"
	// ClassBoth: changed in the file and on the service: a conflict.
	ClassBoth ChangeClass = "changed_in_both"
	// ClassNoHistory: eepipe never wrote this counter (or has no store).
	ClassNoHistory ChangeClass = "no_history"
)

// Words returns the class in plain words, with the run it refers to.
func (c ChangeClass) Words(last *LastWrite) string {
	switch c {
	case ClassFile:
		return "changed in the file"
	case ClassService:
		if last != nil {
			return "changed on the service since " + last.String()
		}
		return "changed on the service"
	case ClassBoth:
		if last != nil {
			return "changed in both the file and on the service since " + last.String() + " (conflict)"
		}
		return "changed in both (conflict)"
	case ClassNoHistory:
		return "no history"
	}
	return ""
}

// Held reports whether apply leaves a change of this class alone by
// default.
func (c ChangeClass) Held() bool { return c == ClassService || c == ClassBoth }

// Classify returns the class of a counter whose service value is old and
// file value is new, against the last value eepipe applied.
func Classify(old, new int64, last *LastWrite) ChangeClass {
	switch {
	case last == nil:
		return ClassNoHistory
	case last.Value == old:
		return ClassFile
	case last.Value == new:
		return ClassService
	}
	return ClassBoth
}

// LastWriteSource is what ClassifyChanges reads: the part of a StateStore
// that knows the last values applied.
type LastWriteSource interface {
	LastWrites(ctx context.Context, service, account string, targetIDs []int64) (map[CounterKey]LastWrite, error)
}

// ClassifyChanges sets the Class and Last of every counter change of the
// stored plans of cs (updates; plans to create have no history) from the
// last values eepipe applied to service. With src nil every change is
// ClassNoHistory.
func ClassifyChanges(ctx context.Context, cs *ChangeSet, src LastWriteSource, service string) error {
	ids := map[string][]int64{}
	for _, d := range cs.Plans {
		if d.Action != ActionUpdate {
			continue
		}
		for i := range d.Targets {
			if t := &d.Targets[i]; t.TargetID != 0 && len(t.Changes) > 0 {
				ids[d.Account] = append(ids[d.Account], t.TargetID)
			}
		}
	}
	last := map[string]map[CounterKey]LastWrite{}
	if src != nil {
		accounts := make([]string, 0, len(ids))
		for a := range ids {
			accounts = append(accounts, a)
		}
		slices.Sort(accounts)
		for _, a := range accounts {
			m, err := src.LastWrites(ctx, service, a, ids[a])
			if err != nil {
				return fmt.Errorf("reading the state store: %w", err)
			}
			last[a] = m
		}
	}
	for _, d := range cs.Plans {
		if d.Action != ActionUpdate {
			continue
		}
		for i := range d.Targets {
			t := &d.Targets[i]
			for j := range t.Changes {
				c := &t.Changes[j]
				var lw *LastWrite
				if w, ok := last[d.Account][CounterKey{t.TargetID, c.Name}]; ok {
					lw = &w
				}
				c.Last = lw
				c.Class = Classify(c.Old, c.New, lw)
			}
		}
	}
	return nil
}

// ClassifyPlan is ClassifyChanges for one plan's diff: apply classifies
// each plan as soon as it is compared (Runner.PlanApply).
func ClassifyPlan(ctx context.Context, d *PlanDiff, src LastWriteSource, service string) error {
	return ClassifyChanges(ctx, &ChangeSet{Plans: []*PlanDiff{d}}, src, service)
}

// HoldPlanChanges is HoldServiceChanges for one plan's diff.
func HoldPlanChanges(d *PlanDiff, overwrite bool) []HeldChange {
	return HoldServiceChanges(&ChangeSet{Plans: []*PlanDiff{d}}, overwrite)
}

// HeldChange is a counter apply left alone: changed on the service since
// eepipe last wrote it, or changed in both.
type HeldChange struct {
	Plan   *PlanDiff
	Target *TargetDiff
	Change CounterChange
}

// String formats the held change for messages, naming the cell, the file
// value, the last applied value and its run, and the service value.
func (h HeldChange) String() string {
	c := h.Change
	var b strings.Builder
	if c.Origin != (Origin{}) {
		fmt.Fprintf(&b, "%s: ", shortOrigin(c.Origin))
	}
	fmt.Fprintf(&b, "%s %s %s: file %d, service %d", h.Plan.Title(), h.Target.Label(), c.Name, c.New, c.Old)
	if c.Last != nil {
		fmt.Fprintf(&b, ", last applied %d by %s", c.Last.Value, c.Last)
		if c.Last.File != "" {
			fmt.Fprintf(&b, " from %s", c.Last.File)
		}
	}
	fmt.Fprintf(&b, " — %s", c.Class.Words(c.Last))
	return b.String()
}

// HoldServiceChanges moves the changes apply must not make by default
// (ClassService and ClassBoth) from each target's Changes to its Held, and
// turns an update left with nothing to send into ActionUnchanged. It
// returns what it held back. With overwrite it holds nothing back and
// returns what would have been held.
func HoldServiceChanges(cs *ChangeSet, overwrite bool) []HeldChange {
	var held []HeldChange
	for _, d := range cs.Plans {
		if d.Action != ActionUpdate {
			continue
		}
		for i := range d.Targets {
			t := &d.Targets[i]
			var keep []CounterChange
			for _, c := range t.Changes {
				if !c.Class.Held() {
					keep = append(keep, c)
					continue
				}
				if overwrite {
					keep = append(keep, c)
				} else {
					t.Held = append(t.Held, c)
				}
				held = append(held, HeldChange{Plan: d, Target: t, Change: c})
			}
			t.Changes = keep
		}
		if !overwrite && d.Meta.IsZero() && d.TargetsToPatch() == 0 {
			d.Action = ActionUnchanged
		}
	}
	return held
}

// WriteHeld writes the held changes, one per line, under a heading.
func WriteHeld(w io.Writer, held []HeldChange, overwritten bool) error {
	if len(held) == 0 {
		return nil
	}
	var b strings.Builder
	counters, them := Plural(len(held), "counter"), PluralNoun(len(held), "it", "them")
	if overwritten {
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s; overwritten (--overwrite-service-changes):\n", counters, them)
	} else {
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s %s NOT overwritten "+
			"(run with --overwrite-service-changes to write the file's values anyway):\n", counters, them, PluralNoun(len(held), "was", "were"))
	}
	for _, h := range held {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// recordWrite records the target write of t (of plan planID, diff d) and
// its outcome err in RunOptions.Journal. The counters the file sets that
// were not sent and not held already held the file's value: they are
// recorded as such (Sent false), so that a later change on the service is
// recognised. created says the plan was created by this run.
func (r *Runner) recordWrite(ctx context.Context, d *PlanDiff, planID int64, t *TargetDiff, created bool, err error) error {
	if r.opts.Journal == nil {
		return nil
	}
	w := r.targetWrite(d, planID, t, created, err)
	if jerr := r.opts.Journal.TargetWritten(ctx, w); jerr != nil {
		return fmt.Errorf("%s (target %d): the write could not be recorded in the state store: %w", t.Label(), t.TargetID, jerr)
	}
	return nil
}

// recordInSync notes, for the targets of plan planID (diff d, result res)
// that this run did not patch, the counters the file sets that the service
// holds (all but the held ones), as agreed by this run: they count as last
// applied, so that a later change on the service is recognised even for a
// counter eepipe never had to send. Targets the file does not describe (a
// recreate's carried-over targets) are not recorded. created says the
// plan was created by this run (its counters had no value before). They
// are recorded together at the end of the run (flushInSync): one
// transaction, not one per plan.
func (r *Runner) recordInSync(d *PlanDiff, planID int64, targets []TargetDiff, created bool, res *PlanResult) {
	if r.opts.Journal == nil || d.Input == nil {
		return
	}
	var ws []TargetWrite
	for i := range targets {
		t := &targets[i]
		if len(t.Changes) > 0 || t.Input == nil || t.TargetID == 0 || !slices.Contains(d.Input.Targets, t.Input) {
			continue
		}
		if w := r.targetWrite(d, planID, t, created, nil); len(w.Counters) > 0 {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return
	}
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.inSync = append(r.inSync, ws...)
	r.inSyncOf = append(r.inSyncOf, res)
}

// flushInSync records the agreed counters recordInSync collected; when
// they cannot be recorded, each plan concerned gets a note.
func (r *Runner) flushInSync(ctx context.Context) {
	r.syncMu.Lock()
	ws, plans := r.inSync, r.inSyncOf
	r.inSync, r.inSyncOf = nil, nil
	r.syncMu.Unlock()
	if len(ws) == 0 {
		return
	}
	if err := r.opts.Journal.TargetsInSync(ctx, ws); err != nil {
		for _, res := range plans {
			res.Notes = append(res.Notes, fmt.Sprintf("the counters of %s already in sync could not be recorded in the state store "+
				"(a later change on the service to them will show as no history): %v", res.Diff.Title(), err))
		}
	}
}

// targetWrite builds the record of target t of plan planID (diff d) with
// outcome err: the counters sent, then the counters the file sets that
// were neither sent nor held (Sent false; with no value before when the
// plan was created by this run).
func (r *Runner) targetWrite(d *PlanDiff, planID int64, t *TargetDiff, created bool, err error) TargetWrite {
	w := TargetWrite{
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
		cw := CounterWrite{Counter: c.Name, After: c.New, Sent: true}
		if c.OldKnown {
			cw.Before = ptr(c.Old)
		}
		w.Counters = append(w.Counters, cw)
		sent[c.Name] = true
	}
	for _, c := range t.Held {
		sent[c.Name] = true
	}
	if t.Input != nil {
		w.File = t.Input.Origin.File
		for name, v := range t.Input.Counters.All() {
			if !sent[name] {
				cw := CounterWrite{Counter: name, After: v}
				if !created {
					cw.Before = ptr(v)
				}
				w.Counters = append(w.Counters, cw)
			}
		}
	}
	return w
}

// recordPlan records a plan request (p is the plan it concerns, nil for a
// failed create) and returns a note when it could not be recorded.
func (r *Runner) recordPlan(ctx context.Context, d *PlanDiff, p *Plan, action string, err error) []string {
	if r.opts.Journal == nil {
		return nil
	}
	w := PlanWrite{Account: d.Account, Action: action, Outcome: "ok", At: r.opts.now()}
	if p != nil {
		w.PlanID = p.ID
	}
	if d.Input != nil {
		w.PlanName = d.Input.Name
	}
	if w.PlanName == "" && p != nil {
		w.PlanName = p.Name
	}
	if err != nil {
		w.Outcome = err.Error()
	}
	if jerr := r.opts.Journal.PlanWritten(ctx, w); jerr != nil {
		return []string{fmt.Sprintf("the %s request could not be recorded in the state store: %v", action, jerr)}
	}
	return nil
}
