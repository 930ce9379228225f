package pipeline

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
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
	if last == nil {
		return ClassNoHistory
	}
	return classifyAgainst(old, new, last.Value)
}

// ClassifyField returns the class of a plan field whose service value is
// old and file value is new, against the last value eepipe applied: the
// same rules as Classify.
func ClassifyField(old, new string, last *LastFieldWrite) ChangeClass {
	if last == nil {
		return ClassNoHistory
	}
	return classifyAgainst(old, new, last.Value)
}

// classifyAgainst is the three-way rule for a value that differs (old on
// the service, new in the file) and was last applied as last.
func classifyAgainst[T comparable](old, new, last T) ChangeClass {
	switch last {
	case old:
		return ClassFile
	case new:
		return ClassService
	}
	return ClassBoth
}

// LastWriteSource is what ClassifyChanges reads: the part of a StateStore
// that knows the last values applied. A source that is also a
// LastFieldSource classifies plan fields too.
type LastWriteSource interface {
	LastWrites(ctx context.Context, service, account string, targetIDs []int64) (map[CounterKey]LastWrite, error)
}

// LastFieldSource is the part of a StateStore that knows the last plan
// field values applied.
type LastFieldSource interface {
	LastFields(ctx context.Context, service, account string, planIDs []int64) (map[FieldKey]LastFieldWrite, error)
}

// LastValueSource is the part of a StateStore that reads the last values
// applied to the counters of targets alone, without the run that applied
// each (cheaper to read for the many targets apply finds in sync).
type LastValueSource interface {
	LastValues(ctx context.Context, service string, targetIDs []int64) (map[CounterKey]LastValue, error)
}

// LastValue is the last value eepipe applied to one counter. Mixed says
// runs under several names of its account applied values that differ:
// which is the last is not told.
type LastValue struct {
	Value int64
	Mixed bool
}

// LastValues are the last values eepipe applied to the targets and plan
// fields of one account: what ClassifyPlanWith classifies against.
type LastValues struct {
	Counters map[CounterKey]LastWrite
	Fields   map[FieldKey]LastFieldWrite
	// Pending are the writes to the targets that a run sent but never
	// recorded the answer of (the source is a PendingWriteSource), oldest
	// first.
	Pending []PendingWrite
	// Unsettled are the stored targets without a change (read for
	// Runner.recordInSync) that have a write an earlier run left pending:
	// their counters are recorded as agreed whatever their last value, so
	// that the pending write stays older than their last one.
	Unsettled map[int64]bool
	// Agreed are the last values applied to the counters of those
	// targets, when src is a LastValueSource (else they are in
	// Counters).
	Agreed map[CounterKey]LastValue
}

// agreedValues are what Runner.recordInSync needs of a plan's LastValues:
// the last values applied, and the targets with an unsettled write.
type agreedValues struct {
	counters  map[CounterKey]LastWrite
	values    map[CounterKey]LastValue
	unsettled map[int64]bool
}

// known reports whether the last value applied to counter name of stored
// target id is v, with no write of an earlier run to the target left
// pending: recording v again as agreed would add nothing.
func (a *agreedValues) known(id int64, name string, v int64) bool {
	if a == nil || a.unsettled[id] {
		return false
	}
	k := CounterKey{id, name}
	if lv, ok := a.values[k]; ok {
		return !lv.Mixed && lv.Value == v
	}
	lw, ok := a.counters[k]
	return ok && lw.Value == v
}

// agreedTargets returns the stored targets of d without a change, whose
// counters Runner.recordInSync records as agreed: those of an update or a
// plan in sync (a created or recreated plan's targets have no history).
func agreedTargets(d *PlanDiff) []int64 {
	if d.Action != ActionUpdate && d.Action != ActionUnchanged {
		return nil
	}
	var ids []int64
	for i := range d.Targets {
		if t := &d.Targets[i]; t.TargetID != 0 && len(t.Changes) == 0 {
			ids = append(ids, t.TargetID)
		}
	}
	return ids
}

// classified reports whether d's changes are classified three ways: the
// updates of a stored plan (a plan to create has no history) and the
// recreates (whose fields the file may change).
func classified(d *PlanDiff) bool { return d.Action == ActionUpdate || d.Action == ActionRecreate }

// ReadLastValues reads from src the last values applied to the targets and
// plans of the diffs (all of one account) that ClassifyPlanWith classifies,
// and to the stored targets without a change of the updates and the plans
// in sync, whose counters Runner.recordInSync records unless their last
// applied value already is the file's (Agreed, or Counters when src is no
// LastValueSource; Unsettled). With src nil it returns empty LastValues
// (every change is no history).
func ReadLastValues(ctx context.Context, src LastWriteSource, service, account string, ds ...*PlanDiff) (LastValues, error) {
	var lv LastValues
	if src == nil {
		return lv, nil
	}
	var targets, plans, agreed []int64
	for _, d := range ds {
		agreed = append(agreed, agreedTargets(d)...)
		if !classified(d) {
			continue
		}
		if len(d.Fields) > 0 && d.Server != nil {
			plans = append(plans, d.Server.ID)
		}
		if d.Action == ActionRecreate && d.Server != nil {
			// The old plan's targets: the file's counters are classified
			// against them (recreateHeld).
			for _, m := range d.Server.Milestones {
				for _, t := range m.Targets {
					targets = append(targets, t.ID)
				}
			}
			continue
		}
		if d.Action != ActionUpdate {
			continue
		}
		for i := range d.Targets {
			if t := &d.Targets[i]; t.TargetID != 0 && len(t.Changes) > 0 {
				targets = append(targets, t.TargetID)
			}
		}
	}
	var err error
	if read := slices.Concat(targets, agreed); len(read) > 0 {
		// The targets without a change need only the values, when src
		// reads them alone.
		vs, byValue := src.(LastValueSource)
		withRun := read
		if byValue {
			withRun = targets
		}
		if len(withRun) > 0 {
			if lv.Counters, err = src.LastWrites(ctx, service, account, withRun); err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
		}
		if byValue && len(agreed) > 0 {
			if lv.Agreed, err = vs.LastValues(ctx, service, agreed); err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
		}
		if ps, ok := src.(PendingWriteSource); ok {
			pending, err := ps.PendingWrites(ctx, service, read)
			if err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
			// The pending writes to the targets with a change are
			// resolved (adoptPending); those to the others only keep
			// their counters recorded as agreed.
			changed := make(map[int64]bool, len(targets))
			for _, id := range targets {
				changed[id] = true
			}
			for _, p := range pending {
				if changed[p.Write.TargetID] {
					lv.Pending = append(lv.Pending, p)
					continue
				}
				if lv.Unsettled == nil {
					lv.Unsettled = map[int64]bool{}
				}
				lv.Unsettled[p.Write.TargetID] = true
			}
		}
	}
	if fs, ok := src.(LastFieldSource); ok && len(plans) > 0 {
		if lv.Fields, err = fs.LastFields(ctx, service, account, plans); err != nil {
			return lv, fmt.Errorf("reading the state store: %w", err)
		}
	}
	return lv, nil
}

// ClassifyPlan is ClassifyChanges for one plan's diff: it reads the last
// values applied to d's targets and fields from src (ReadLastValues) and
// classifies d's changes against them (ClassifyPlanWith). apply
// classifies each plan as soon as it is compared.
func ClassifyPlan(ctx context.Context, d *PlanDiff, src LastWriteSource, service string) error {
	lv, err := ReadLastValues(ctx, src, service, d.Account, d)
	if err != nil {
		return err
	}
	ClassifyPlanWith(d, lv)
	return nil
}

// ClassifyPlanWith sets the Class and Last of every counter change and
// plan field change of one plan diff from the last values eepipe applied
// (lv, read for d's account): the three-way rules of Classify and
// ClassifyField. Counters are classified for updates, fields for updates
// and recreates; other plans are left alone.
func ClassifyPlanWith(d *PlanDiff, lv LastValues) {
	if lv.Counters != nil || lv.Agreed != nil {
		d.agreed = &agreedValues{counters: lv.Counters, values: lv.Agreed, unsettled: lv.Unsettled}
	}
	if !classified(d) {
		return
	}
	d.adoptPending(lv)
	for i := range d.Fields {
		f := &d.Fields[i]
		var lw *LastFieldWrite
		if d.Server != nil {
			if w, ok := lv.Fields[FieldKey{d.Server.ID, f.Field}]; ok {
				lw = &w
			}
		}
		f.Last = lw
		f.Class = ClassifyField(f.Old, f.New, lw)
	}
	if d.Action == ActionRecreate {
		d.classifyRecreate(lv)
		return
	}
	if d.Action != ActionUpdate {
		return
	}
	for i := range d.Targets {
		t := &d.Targets[i]
		for j := range t.Changes {
			c := &t.Changes[j]
			var lw *LastWrite
			if w, ok := lv.Counters[CounterKey{t.TargetID, c.Name}]; ok {
				lw = &w
			}
			c.Last = lw
			c.Class = Classify(c.Old, c.New, lw)
		}
	}
}

// adoptPending resolves the pending writes of lv to d's stored targets
// (a run recorded each before sending it, and stopped, or lost the end of
// its journal, before it recorded the answer) against the service, which
// is the source of truth. A write whose sent counters the service holds
// was accepted: it is adopted, its counters (those the service still
// holds) count as last applied by its run (in lv.Counters, unless a later
// write is on record), and d gets a note. Any other was not applied, or
// was changed on the service since: it is left out. Either way d.pending
// keeps the resolution for apply to record (Runner.recordPending). A
// write older than the last value on record of every counter it has is
// moot.
func (d *PlanDiff) adoptPending(lv LastValues) {
	d.pending = nil
	if d.Server == nil || len(lv.Pending) == 0 {
		return
	}
	stored := map[int64]*Target{}
	for mi := range d.Server.Milestones {
		for ti := range d.Server.Milestones[mi].Targets {
			t := &d.Server.Milestones[mi].Targets[ti]
			stored[t.ID] = t
		}
	}
	for _, p := range lv.Pending {
		w := p.Write
		st := stored[w.TargetID]
		if st == nil {
			continue
		}
		accepted, moot := true, true
		for _, c := range w.Counters {
			if lw, ok := lv.Counters[CounterKey{w.TargetID, c.Counter}]; !ok || !writtenAfter(lw.At, lw.RunID, w.At, p.RunID) {
				moot = false
			}
			if v, ok := st.Counters.ByName(c.Counter); c.Sent && (!ok || v != c.After) {
				accepted = false
			}
		}
		what := fmt.Sprintf("year %d %s (target %d)", w.YearNumber, w.TargetType, w.TargetID)
		res := w
		switch {
		case moot:
			res.Outcome = fmt.Sprintf("unknown: run %d was stopped before it recorded the answer; a later write is on record", p.RunID)
		case !accepted:
			res.Outcome = fmt.Sprintf("not applied, or changed on the service since: run %d was stopped before it recorded the answer, and the service did not hold the values sent", p.RunID)
		default:
			res.Outcome = fmt.Sprintf("%s from run %d: it was stopped before it recorded the answer; the service held the values sent", OutcomeAdopted, p.RunID)
			var kept []CounterWrite
			for _, c := range w.Counters {
				if v, ok := st.Counters.ByName(c.Counter); !ok || v != c.After {
					continue // changed on the service since
				}
				kept = append(kept, c)
				k := CounterKey{w.TargetID, c.Counter}
				if lw, ok := lv.Counters[k]; ok && writtenAfter(lw.At, lw.RunID, w.At, p.RunID) {
					continue
				}
				if lv.Counters != nil {
					lv.Counters[k] = LastWrite{Value: c.After, RunID: p.RunID, At: w.At, File: w.File}
				}
			}
			res.Counters = kept
			d.Notes = append(d.Notes, fmt.Sprintf("%s: run %d sent %s and was stopped before it recorded the answer; the service holds the values sent, "+
				"so they count as applied by run %d (adopted), not as changed on the service", what, p.RunID, Plural(countSent(w.Counters), "counter"), p.RunID))
		}
		d.pending = append(d.pending, res)
	}
}

func countSent(cs []CounterWrite) int {
	n := 0
	for _, c := range cs {
		if c.Sent {
			n++
		}
	}
	return n
}

// recordPending records the resolution of the pending writes d's
// classification found (adoptPending): their outcome, and for the adopted
// ones a write of this run whose counters count as applied. When that
// fails, the run stops (as for any write it cannot record).
func (r *Runner) recordPending(ctx context.Context, d *PlanDiff) []string {
	if r.journal == nil || len(d.pending) == 0 {
		return nil
	}
	ws := d.pending
	d.pending = nil
	if err := r.journal.PendingResolved(ctx, ws); err != nil {
		r.journalFailed(err)
		return []string{fmt.Sprintf("the writes an earlier run left unanswered could not be recorded as resolved in the state store: %v", err)}
	}
	return nil
}

// ClassifyChanges sets the Class and Last of every counter change and plan
// field change of the stored plans of cs (updates, and the fields of
// recreates; plans to create have no history) from the last values eepipe
// applied to service. With src nil every change is ClassNoHistory. It
// reads the store once per account, then applies ClassifyPlanWith to each
// plan.
func ClassifyChanges(ctx context.Context, cs *ChangeSet, src LastWriteSource, service string) error {
	byAccount := map[string][]*PlanDiff{}
	for _, d := range cs.Plans {
		if classified(d) || d.Action == ActionUnchanged {
			byAccount[d.Account] = append(byAccount[d.Account], d)
		}
	}
	accounts := make([]string, 0, len(byAccount))
	for a := range byAccount {
		accounts = append(accounts, a)
	}
	slices.Sort(accounts)
	for _, a := range accounts {
		lv, err := ReadLastValues(ctx, src, service, a, byAccount[a]...)
		if err != nil {
			return err
		}
		for _, d := range byAccount[a] {
			ClassifyPlanWith(d, lv)
		}
	}
	return nil
}

// HeldChange is a counter or a plan field apply left alone: changed on the
// service since eepipe last wrote it, or changed in both.
type HeldChange struct {
	Plan *PlanDiff
	// Target and Change are the counter held (Field nil).
	Target *TargetDiff
	Change CounterChange
	// Field is the plan field held (Target nil).
	Field *FieldChange
}

// String formats the held change for messages, naming the cell, the file
// value, the last applied value and its run, and the service value.
func (h HeldChange) String() string {
	if f := h.Field; f != nil {
		var b strings.Builder
		if f.Origin != (Origin{}) {
			fmt.Fprintf(&b, "%s: ", shortOrigin(f.Origin))
		}
		fmt.Fprintf(&b, "%s field %s: %s — %s", h.Plan.Title(), f.Field, f.heldText(), f.Class.Words(f.Last.run()))
		return b.String()
	}
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

// heldText formats a field's values: `file "A", service "B", last applied
// "A" by run 3 on DATE from v1.csv`.
func (f FieldChange) heldText() string {
	s := fmt.Sprintf("file %s, service %s", FieldValueText(f.New), FieldValueText(f.Old))
	if f.Last != nil {
		s += fmt.Sprintf(", last applied %s by %s", FieldValueText(f.Last.Value), f.Last)
		if f.Last.File != "" {
			s += " from " + f.Last.File
		}
	}
	return s
}

// HoldServiceChanges moves the changes apply must not make by default
// (ClassService and ClassBoth) of every plan of cs aside (HoldPlanChanges)
// and returns what it held back. With overwrite it holds nothing back and
// returns what would have been held.
func HoldServiceChanges(cs *ChangeSet, overwrite bool) []HeldChange {
	var held []HeldChange
	for _, d := range cs.Plans {
		held = append(held, HoldPlanChanges(d, overwrite)...)
	}
	return held
}

// HoldPlanChanges moves the changes of one update apply must not make by
// default (ClassService and ClassBoth) from each target's Changes to its
// Held and from the plan's Fields (and Meta) to its HeldFields, and turns
// an update left with nothing to send into ActionUnchanged. For a
// recreate it holds the name, sector and scorecard_id the same way: the
// new plan is created with the service's value. It returns what it held
// back. With overwrite it holds nothing back and returns what would have
// been held. Other actions are left alone.
func HoldPlanChanges(d *PlanDiff, overwrite bool) []HeldChange {
	if d.Action != ActionUpdate && d.Action != ActionRecreate {
		return nil
	}
	var held []HeldChange
	var keepFields []FieldChange
	for _, f := range d.Fields {
		hold := f.Class.Held() && (d.Action == ActionUpdate || f.Field != "start_date" && f.Field != "end_date")
		if !hold || overwrite {
			keepFields = append(keepFields, f)
		}
		if !hold {
			continue
		}
		if !overwrite {
			d.HeldFields = append(d.HeldFields, f)
			d.Meta.clear(f.Field)
			if d.Action == ActionRecreate {
				d.keepServiceField(f)
			}
		}
		held = append(held, HeldChange{Plan: d, Field: ptr(f)})
	}
	d.Fields = keepFields
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
	if !overwrite && d.Action == ActionUpdate && d.Meta.IsZero() && d.TargetsToPatch() == 0 {
		d.Action = ActionUnchanged
	}
	if n := len(d.recreateHeld); n > 0 {
		held = append(held, d.recreateHeld...)
		if !overwrite {
			// The new plan would take the file's values: the client's
			// changes would be lost with the old plan. Nothing of it is
			// sent.
			d.Action = ActionFailed
			d.Reason = fmt.Sprintf("not recreated: the new plan would replace %s that the client changed on the service since eepipe "+
				"last wrote %s (listed with the held changes); put the service's values in the workbook (eepipe export --plan %d) "+
				"or run with --overwrite-service-changes to recreate it with the file's values",
				Plural(n, "counter"), PluralNoun(n, "it", "them"), d.Server.ID)
		}
	}
	return held
}

// classifyRecreate classifies the counters the file sets in a recreate
// against the old plan's (the service's values, which the new plan would
// replace) and the values eepipe last applied to them, and keeps the held
// ones in d.recreateHeld.
func (d *PlanDiff) classifyRecreate(lv LastValues) {
	d.recreateHeld = nil
	if d.Input == nil || d.Server == nil {
		return
	}
	for i := range d.Targets {
		t := &d.Targets[i]
		if t.Input == nil || !slices.Contains(d.Input.Targets, t.Input) {
			continue // carried over from the old plan: the file sets nothing
		}
		old := d.oldTargetOf(t)
		if old == nil {
			continue
		}
		t.Input.Counters.Each(func(_ int, name string, v int64) {
			sv, ok := old.Counters.ByName(name)
			if !ok || sv == v {
				return
			}
			var lw *LastWrite
			if w, ok := lv.Counters[CounterKey{old.ID, name}]; ok {
				lw = &w
			}
			if c := Classify(sv, v, lw); c.Held() {
				d.recreateHeld = append(d.recreateHeld, HeldChange{Plan: d, Target: t, Change: CounterChange{
					Name: name, Old: sv, OldKnown: true, New: v, Origin: t.Input.CellOf(name), Class: c, Last: lw}})
			}
		})
	}
}

// oldTargetOf returns the target of a recreate's old plan (d.Server) for
// t's financial year and type, as carryOver matches them; nil if none.
func (d *PlanDiff) oldTargetOf(t *TargetDiff) *Target {
	old := d.Server
	for mi := range old.Milestones {
		m := &old.Milestones[mi]
		fy := FinancialYearOf(m.StartDate)
		if m.StartDate.IsZero() {
			fy = FinancialYearOf(old.StartDate) + FinancialYear(m.YearNumber-1)
		}
		if fy != t.FinancialYear {
			continue
		}
		for ti := range m.Targets {
			if m.Targets[ti].TargetType == t.TargetType {
				return &m.Targets[ti]
			}
		}
	}
	return nil
}

// keepServiceField makes a recreate create its new plan with the
// service's value of the held field f, and not patch the file's value in
// after the create (d.source is what the created plan is diffed against;
// d.Input, the file, is left as read).
func (d *PlanDiff) keepServiceField(f FieldChange) {
	var np, src *string
	switch f.Field {
	case "name":
		np = &d.Create.Name
		if d.source != nil {
			src = &d.source.Name
		}
	case "sector":
		np = &d.Create.Sector
		if d.source != nil {
			src = &d.source.Sector
		}
	case "scorecard_id":
		np = &d.Create.ScorecardID
		if d.source != nil {
			src = &d.source.ScorecardID
		}
	default:
		return
	}
	*np = f.Old
	if src != nil {
		*src = f.Old
	}
}

// WriteHeld writes the held changes, one per line, under a heading.
// dryRun words the heading for a run that sends nothing (diff, apply
// --dry-run): the changes would be (or would not be) overwritten.
func WriteHeld(w io.Writer, held []HeldChange, overwritten, dryRun bool) error {
	if len(held) == 0 {
		return nil
	}
	var b strings.Builder
	nf := 0
	for _, h := range held {
		if h.Field != nil {
			nf++
		}
	}
	var what []string
	if nc := len(held) - nf; nc > 0 {
		what = append(what, Plural(nc, "counter"))
	}
	if nf > 0 {
		what = append(what, Plural(nf, "plan field"))
	}
	counters, them := strings.Join(what, " and "), PluralNoun(len(held), "it", "them")
	switch {
	case overwritten && dryRun:
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s; would be overwritten (--overwrite-service-changes):\n", counters, them)
	case overwritten:
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s; overwritten (--overwrite-service-changes):\n", counters, them)
	case dryRun:
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s would not be overwritten "+
			"(run with --overwrite-service-changes to write the file's values anyway):\n", counters, them)
	default:
		fmt.Fprintf(&b, "%s changed on the service since eepipe last wrote %s %s NOT overwritten "+
			"(run with --overwrite-service-changes to write the file's values anyway):\n", counters, them, PluralNoun(len(held), "was", "were"))
	}
	for _, h := range held {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// recordSending records the target writes of d's targets with changes
// (plan planID) in the run's journal (RunOptions.Journal, or History's)
// before their requests are sent (the plan's together: TargetsSending), and returns them by target index (nil
// for a target with nothing to send, and all nil without a journal). The
// counters the file sets that are not sent and not held already hold the
// file's value: they are recorded as such (Sent false), so that a later
// change on the service is recognised. created says the plan was created
// by this run. When the journal fails the run stops and no request is
// sent.
func (r *Runner) recordSending(ctx context.Context, d *PlanDiff, planID int64, created bool) ([]*TargetWrite, error) {
	out := make([]*TargetWrite, len(d.Targets))
	if r.journal == nil {
		return out, nil
	}
	var ws []TargetWrite
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
			Plural(len(ws), "target"), jerr)
	}
	for k, i := range at {
		ws[k].ID = ids[k]
		out[i] = &ws[k]
	}
	return out, nil
}

// answered sets the outcome err of the target write w (recordSending's;
// nil without a journal) once its request completed.
func (r *Runner) answered(w *TargetWrite, err error) {
	if w == nil {
		return
	}
	w.Outcome, w.At = "ok", r.opts.now()
	if err != nil {
		w.Outcome = err.Error()
	}
}

// recordAnswers records the outcomes of a plan's target writes
// (recordSending's, answered; nil entries are skipped) together. When
// that fails the run stops, and the error says the writes were sent.
func (r *Runner) recordAnswers(ctx context.Context, ws []*TargetWrite) error {
	var out []TargetWrite
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
		return fmt.Errorf("%s sent, but their answers could not be recorded in the state store: %w", Plural(len(out), "target write"), jerr)
	}
	return nil
}

// JournalError is the failure to record a write of the run in the state
// store. It is fatal: the run stops writing, since its next writes would
// go unrecorded (and a later run could not tell them from a change made
// on the service).
type JournalError struct{ Err error }

func (e *JournalError) Error() string {
	return fmt.Sprintf("the state store failed to record a write (%v); the run stopped writing, "+
		"as its next writes would go unrecorded", e.Err)
}

// Unwrap returns the store's error.
func (e *JournalError) Unwrap() error { return e.Err }

// journalFailed stops the run after the state store failed to record a
// write: no request is sent after it (see gate).
func (r *Runner) journalFailed(err error) {
	r.gate.setFatal(&JournalError{Err: err})
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
// (flushInSync), one transaction per RunOptions.InSyncBatch counters and
// at the end of the run, so that what waits to be recorded stays bounded
// by the batch, not the file.
func (r *Runner) recordInSync(ctx context.Context, d *PlanDiff, planID int64, targets []TargetDiff, created bool, res *PlanResult) {
	agreed := d.agreed
	d.agreed = nil
	if r.journal == nil || d.Input == nil {
		return
	}
	if created {
		agreed = nil // no value before
	}
	fws := r.fieldsInSync(d, planID)
	var ws []TargetWrite
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
	ws    []TargetWrite
	fws   []FieldWrite
	plans []*PlanResult
	n     int
}

// DefaultInSyncBatch is how many counters and plan fields found in sync
// apply records together by default (RunOptions.InSyncBatch).
const DefaultInSyncBatch = 10000

func (o RunOptions) inSyncBatch() int {
	if o.InSyncBatch <= 0 {
		return DefaultInSyncBatch
	}
	return o.InSyncBatch
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
	}
}

// inSyncFailure is a plan whose counters and fields in sync could not be
// recorded, and why.
type inSyncFailure struct {
	res *PlanResult
	err error
}

// planFields are the plan fields eepipe records as last applied, with the
// PlanChange field each is written through ("" for the dates, fixed at
// creation).
var planFields = []string{"name", "sector", "scorecard_id", "start_date", "end_date"}

// fieldsInSync returns the plan fields of plan planID (diff d) whose value
// the file sets and the service holds after the run without a metadata
// update: not pending in d.Meta (recorded when the update succeeds,
// recordPlan) and not held. The dates are recorded as the service holds
// them (the file's end date may be clamped).
func (r *Runner) fieldsInSync(d *PlanDiff, planID int64) []FieldWrite {
	in, s := d.Input, d.Server
	if in == nil || s == nil || planID == 0 || planID != s.ID {
		return nil
	}
	var out []FieldWrite
	for _, f := range planFields {
		var v string
		switch f {
		case "name":
			v = in.Name
			if d.Meta.Name != nil || v != s.Name {
				continue
			}
		case "sector":
			v = in.Sector
			if d.Meta.Sector != nil || v != s.Sector {
				continue
			}
		case "scorecard_id":
			v = in.ScorecardID
			if d.Meta.ScorecardID != nil || v != s.ScorecardID {
				continue
			}
		case "start_date":
			if in.StartDate.IsZero() {
				continue
			}
			v = s.StartDate.String()
		case "end_date":
			if in.EndDate.IsZero() {
				continue
			}
			v = s.EndDate.String()
		}
		if v == "" || slices.ContainsFunc(d.HeldFields, func(h FieldChange) bool { return h.Field == f }) {
			continue
		}
		out = append(out, r.fieldWrite(d, planID, f, v))
	}
	return out
}

func (r *Runner) fieldWrite(d *PlanDiff, planID int64, field, value string) FieldWrite {
	w := FieldWrite{Account: d.Account, PlanID: planID, Field: field, Value: value, At: r.opts.now()}
	if d.Input != nil {
		w.File = d.Input.Origin.File
	}
	return w
}

// recordMeta records as last applied the fields a successful metadata
// update of plan planID (diff d) wrote.
func (r *Runner) recordMeta(ctx context.Context, d *PlanDiff, planID int64) error {
	var ws []FieldWrite
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", d.Meta.Name}, {"sector", d.Meta.Sector}, {"scorecard_id", d.Meta.ScorecardID}} {
		if f.v != nil {
			ws = append(ws, r.fieldWrite(d, planID, f.name, *f.v))
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
func (r *Runner) targetWrite(d *PlanDiff, planID int64, t *TargetDiff, created bool, agreed *agreedValues, err error) TargetWrite {
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
			if !sent[name] && !agreed.known(t.TargetID, name, v) {
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
	if r.journal == nil {
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
func fieldUpdates(fs []FieldChange) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %s -> %s", f.Field, FieldValueText(f.Old), FieldValueText(f.New))
	}
	return strings.Join(parts, ", ")
}

// writtenAfter reports whether the write at (at, runID) is later than the
// one at (other, otherRun): a later time, or the same time and a later run.
func writtenAfter(at time.Time, runID int64, other time.Time, otherRun int64) bool {
	return at.After(other) || at.Equal(other) && runID > otherRun
}
