package diff

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
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
func (c ChangeClass) Words(last *pipeline.LastWrite) string {
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

// held reports whether apply leaves a change of this class alone by
// default.
func (c ChangeClass) held() bool { return c == ClassService || c == ClassBoth }

// classify returns the class of a counter whose service value is old and
// file value is new, against the last value eepipe applied.
func classify(old, new int64, last *pipeline.LastWrite) ChangeClass {
	if last == nil {
		return ClassNoHistory
	}
	return classifyAgainst(old, new, last.Value)
}

// classifyField returns the class of a plan field whose service value is
// old and file value is new, against the last value eepipe applied: the
// same rules as Classify.
func classifyField(old, new string, last *pipeline.LastFieldWrite) ChangeClass {
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
// lastFieldSource classifies plan fields too.
type LastWriteSource interface {
	LastWrites(ctx context.Context, service, account string, targetIDs []int64) (map[pipeline.CounterKey]pipeline.LastWrite, error)
}

// lastFieldSource is the part of a StateStore that knows the last plan
// field values applied.
type lastFieldSource interface {
	LastFields(ctx context.Context, service, account string, planIDs []int64) (map[pipeline.FieldKey]pipeline.LastFieldWrite, error)
}

// lastValueSource is the part of a StateStore that reads the last values
// applied to the counters of targets alone, without the run that applied
// each (cheaper to read for the many targets apply finds in sync).
type lastValueSource interface {
	LastValues(ctx context.Context, service string, targetIDs []int64) (map[pipeline.CounterKey]LastValue, error)
}

// LastValue is the last value eepipe applied to one counter. Mixed says
// runs under several names of its account applied values that differ:
// which is the last is not told.
type LastValue struct {
	Value int64
	Mixed bool
}

// lastValues are the last values eepipe applied to the targets and plan
// fields of one account: what classifyPlanWith classifies against.
type lastValues struct {
	counters map[pipeline.CounterKey]pipeline.LastWrite
	fields   map[pipeline.FieldKey]pipeline.LastFieldWrite
	// pending are the writes to the targets read (with a change or
	// without) that a run sent but never recorded the answer of (the
	// source is a pendingWriteSource), oldest first: adoptPending
	// resolves every one.
	pending []pipeline.PendingWrite
	// agreed are the last values applied to the counters of those
	// targets, when src is a lastValueSource (else they are in
	// Counters).
	agreed map[pipeline.CounterKey]LastValue
}

// agreedValues are what Runner.recordInSync needs of a plan's lastValues:
// the last values applied (with the writes adoptPending adopted).
type AgreedValues struct {
	Counters map[pipeline.CounterKey]pipeline.LastWrite
	Values   map[pipeline.CounterKey]LastValue
}

// known reports whether the last value applied to counter name of stored
// target id is v: recording v again as agreed would add nothing.
func (a *AgreedValues) Known(id int64, name string, v int64) bool {
	if a == nil {
		return false
	}
	k := pipeline.CounterKey{TargetID: id, Counter: name}
	if lv, ok := a.Values[k]; ok {
		return !lv.Mixed && lv.Value == v
	}
	lw, ok := a.Counters[k]
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

// readLastValues reads from src the last values applied to the targets and
// plans of the diffs (all of one account) that classifyPlanWith classifies,
// and to the stored targets without a change of the updates and the plans
// in sync, whose counters Runner.recordInSync records unless their last
// applied value already is the file's (agreed, or counters when src is no
// lastValueSource), and the writes earlier runs left pending to any of
// these targets (pending). With src nil it returns empty lastValues
// (every change is no history).
func readLastValues(ctx context.Context, src LastWriteSource, service, account string, ds ...*PlanDiff) (lastValues, error) {
	var lv lastValues
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
		vs, byValue := src.(lastValueSource)
		withRun := read
		if byValue {
			withRun = targets
		}
		if len(withRun) > 0 {
			if lv.counters, err = src.LastWrites(ctx, service, account, withRun); err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
		}
		if byValue && len(agreed) > 0 {
			if lv.agreed, err = vs.LastValues(ctx, service, agreed); err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
		}
		if ps, ok := src.(pipeline.PendingWriteSource); ok {
			pending, err := ps.PendingWrites(ctx, service, read)
			if err != nil {
				return lv, fmt.Errorf("reading the state store: %w", err)
			}
			// Every pending write to a target read is resolved
			// (adoptPending), whether the target has a change or is in
			// sync (the write the run before sent and never recorded the
			// answer of is then usually on the service).
			lv.pending = pending
		}
	}
	if fs, ok := src.(lastFieldSource); ok && len(plans) > 0 {
		if lv.fields, err = fs.LastFields(ctx, service, account, plans); err != nil {
			return lv, fmt.Errorf("reading the state store: %w", err)
		}
	}
	return lv, nil
}

// classifyPlan is ClassifyChanges for one plan's diff: it reads the last
// values applied to d's targets and fields from src (readLastValues) and
// classifies d's changes against them (classifyPlanWith). apply
// classifies each plan as soon as it is compared.
func classifyPlan(ctx context.Context, d *PlanDiff, src LastWriteSource, service string) error {
	lv, err := readLastValues(ctx, src, service, d.Account, d)
	if err != nil {
		return err
	}
	classifyPlanWith(d, lv)
	return nil
}

// classifyPlanWith sets the Class and Last of every counter change and
// plan field change of one plan diff from the last values eepipe applied
// (lv, read for d's account): the three-way rules of Classify and
// classifyField. Counters are classified for updates, fields for updates
// and recreates; other plans are left alone.
func classifyPlanWith(d *PlanDiff, lv lastValues) {
	d.adoptPending(&lv)
	if lv.counters != nil || lv.agreed != nil {
		d.Agreed = &AgreedValues{Counters: lv.counters, Values: lv.agreed}
	}
	if !classified(d) {
		return
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		var lw *pipeline.LastFieldWrite
		if d.Server != nil {
			if w, ok := lv.fields[pipeline.FieldKey{PlanID: d.Server.ID, Field: f.Field}]; ok {
				lw = &w
			}
		}
		f.Last = lw
		f.Class = classifyField(f.Old, f.New, lw)
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
			var lw *pipeline.LastWrite
			if w, ok := lv.counters[pipeline.CounterKey{TargetID: t.TargetID, Counter: c.Name}]; ok {
				lw = &w
			}
			c.Last = lw
			c.Class = classify(c.Old, c.New, lw)
		}
	}
}

// adoptPending resolves the pending writes of lv to d's stored targets
// (a run recorded each before sending it, and stopped, or lost the end of
// its journal, before it recorded the answer) against the service, which
// is the source of truth: those to targets with a change and those to
// targets in sync alike, for a plan to update, in sync or recreated. A
// write whose sent counters the service holds was accepted: it is
// adopted, its counters (those the service still holds) count as last
// applied by its run (in lv.counters and lv.agreed, unless a later write
// is on record), and d gets a note. Any other was not applied, or was
// changed on the service since: it is left out (a target whose file
// value differs from the service's is sent as any other). Either way
// d.pending keeps the resolution for apply to record
// (Runner.recordPending). A write older than the last value on record of
// every counter it has is moot.
func (d *PlanDiff) adoptPending(lv *lastValues) {
	d.Pending = nil
	if d.Server == nil || len(lv.pending) == 0 {
		return
	}
	stored := map[int64]*pipeline.Target{}
	for mi := range d.Server.Milestones {
		for ti := range d.Server.Milestones[mi].Targets {
			t := &d.Server.Milestones[mi].Targets[ti]
			stored[t.ID] = t
		}
	}
	for _, p := range lv.pending {
		w := p.Write
		st := stored[w.TargetID]
		if st == nil {
			continue
		}
		accepted, moot := true, true
		for _, c := range w.Counters {
			if lw, ok := lv.counters[pipeline.CounterKey{TargetID: w.TargetID, Counter: c.Counter}]; !ok || !writtenAfter(lw.At, lw.RunID, w.At, p.RunID) {
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
			res.Outcome = fmt.Sprintf("%s: run %d recorded no answer (it was stopped first, or got no clear one); a later write is on record", pipeline.OutcomeMoot, p.RunID)
		case !accepted:
			res.Outcome = fmt.Sprintf("%s: run %d recorded no answer (it was stopped first, or got no clear one), and the service did not hold the values sent", pipeline.OutcomeLeftOut, p.RunID)
		default:
			res.Outcome = fmt.Sprintf("%s from run %d: it recorded no answer (it was stopped first, or got no clear one); the service held the values sent", pipeline.OutcomeAdopted, p.RunID)
			var kept []pipeline.CounterWrite
			for _, c := range w.Counters {
				if v, ok := st.Counters.ByName(c.Counter); !ok || v != c.After {
					continue // changed on the service since
				}
				kept = append(kept, c)
				k := pipeline.CounterKey{TargetID: w.TargetID, Counter: c.Counter}
				if lw, ok := lv.counters[k]; ok && writtenAfter(lw.At, lw.RunID, w.At, p.RunID) {
					continue
				}
				if lv.counters == nil {
					lv.counters = map[pipeline.CounterKey]pipeline.LastWrite{}
				}
				lv.counters[k] = pipeline.LastWrite{Value: c.After, RunID: p.RunID, At: w.At, File: w.File}
				if lv.agreed != nil {
					lv.agreed[k] = LastValue{Value: c.After}
				}
			}
			res.Counters = kept
			d.Notes = append(d.Notes, fmt.Sprintf("%s: run %d sent %s and recorded no answer (it was stopped first, or got no clear one); the service holds the values sent, "+
				"so they count as applied by run %d (adopted), not as changed on the service", what, p.RunID, pipeline.Plural(countSent(w.Counters), "counter"), p.RunID))
		}
		d.Pending = append(d.Pending, res)
	}
}

func countSent(cs []pipeline.CounterWrite) int {
	n := 0
	for _, c := range cs {
		if c.Sent {
			n++
		}
	}
	return n
}

// ClassifyChanges sets the Class and Last of every counter change and plan
// field change of the stored plans of cs (updates, and the fields of
// recreates; plans to create have no history) from the last values eepipe
// applied to service. With src nil every change is ClassNoHistory. It
// reads the store once per account, then applies classifyPlanWith to each
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
		lv, err := readLastValues(ctx, src, service, a, byAccount[a]...)
		if err != nil {
			return err
		}
		for _, d := range byAccount[a] {
			classifyPlanWith(d, lv)
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
		if f.Origin != (pipeline.Origin{}) {
			fmt.Fprintf(&b, "%s: ", ShortOrigin(f.Origin))
		}
		fmt.Fprintf(&b, "%s field %s: %s — %s", h.Plan.Title(), f.Field, f.HeldText(), f.Class.Words(f.Last.Run()))
		return b.String()
	}
	c := h.Change
	var b strings.Builder
	if c.Origin != (pipeline.Origin{}) {
		fmt.Fprintf(&b, "%s: ", ShortOrigin(c.Origin))
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
func (f FieldChange) HeldText() string {
	s := fmt.Sprintf("file %s, service %s", FieldValueText(f.New), FieldValueText(f.Old))
	if f.Last != nil {
		s += fmt.Sprintf(", last applied %s by %s", FieldValueText(f.Last.Value), f.Last)
		if f.Last.File != "" {
			s += " from " + f.Last.File
		}
	}
	return s
}

// holdServiceChanges moves the changes apply must not make by default
// (ClassService and ClassBoth) of every plan of cs aside (holdPlanChanges)
// and returns what it held back. With overwrite it holds nothing back and
// returns what would have been held.
func holdServiceChanges(cs *ChangeSet, overwrite bool) []HeldChange {
	var held []HeldChange
	for _, d := range cs.Plans {
		held = append(held, holdPlanChanges(d, overwrite)...)
	}
	return held
}

// holdPlanChanges moves the changes of one update apply must not make by
// default (ClassService and ClassBoth) from each target's Changes to its
// Held and from the plan's Fields (and Meta) to its HeldFields, and turns
// an update left with nothing to send into ActionUnchanged. For a
// recreate it holds the name, sector and scorecard_id the same way: the
// new plan is created with the service's value. It returns what it held
// back. With overwrite it holds nothing back and returns what would have
// been held. Other actions are left alone.
func holdPlanChanges(d *PlanDiff, overwrite bool) []HeldChange {
	if d.Action != ActionUpdate && d.Action != ActionRecreate {
		return nil
	}
	var held []HeldChange
	var keepFields []FieldChange
	for _, f := range d.Fields {
		pf, _ := pipeline.PlanFieldNamed(f.Field)
		hold := f.Class.held() && (d.Action == ActionUpdate || !pf.Date)
		if !hold || overwrite {
			keepFields = append(keepFields, f)
		}
		if !hold {
			continue
		}
		if !overwrite {
			d.HeldFields = append(d.HeldFields, f)
			d.Meta.Clear(f.Field)
			if d.Action == ActionRecreate {
				d.keepServiceField(f)
			}
		}
		held = append(held, HeldChange{Plan: d, Field: Ptr(f)})
	}
	d.Fields = keepFields
	for i := range d.Targets {
		t := &d.Targets[i]
		var keep []CounterChange
		for _, c := range t.Changes {
			if !c.Class.held() {
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
	if !overwrite && d.Action == ActionUpdate && d.Meta.IsZero() && d.targetsToPatch() == 0 {
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
				pipeline.Plural(n, "counter"), pipeline.PluralNoun(n, "it", "them"), d.Server.ID)
		}
	}
	return held
}

// classifyRecreate classifies the counters the file sets in a recreate
// against the old plan's (the service's values, which the new plan would
// replace) and the values eepipe last applied to them, and keeps the held
// ones in d.recreateHeld.
func (d *PlanDiff) classifyRecreate(lv lastValues) {
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
			var lw *pipeline.LastWrite
			if w, ok := lv.counters[pipeline.CounterKey{TargetID: old.ID, Counter: name}]; ok {
				lw = &w
			}
			if c := classify(sv, v, lw); c.held() {
				d.recreateHeld = append(d.recreateHeld, HeldChange{Plan: d, Target: t, Change: CounterChange{
					Name: name, Old: sv, OldKnown: true, New: v, Origin: t.Input.CellOf(name), Class: c, Last: lw}})
			}
		})
	}
}

// oldTargetOf returns the target of a recreate's old plan (d.Server) for
// t's financial year and type, as carryOver matches them; nil if none.
func (d *PlanDiff) oldTargetOf(t *TargetDiff) *pipeline.Target {
	old := d.Server
	for mi := range old.Milestones {
		m := &old.Milestones[mi]
		fy := pipeline.FinancialYearOf(m.StartDate)
		if m.StartDate.IsZero() {
			fy = pipeline.FinancialYearOf(old.StartDate) + pipeline.FinancialYear(m.YearNumber-1)
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
	pf, ok := pipeline.PlanFieldNamed(f.Field)
	if !ok || !pf.SetNew(d.Create, f.Old) {
		return
	}
	if d.source != nil {
		pf.SetInput(d.source, f.Old)
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
		what = append(what, pipeline.Plural(nc, "counter"))
	}
	if nf > 0 {
		what = append(what, pipeline.Plural(nf, "plan field"))
	}
	counters, them := strings.Join(what, " and "), pipeline.PluralNoun(len(held), "it", "them")
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
			"(run with --overwrite-service-changes to write the file's values anyway):\n", counters, them, pipeline.PluralNoun(len(held), "was", "were"))
	}
	for _, h := range held {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writtenAfter reports whether the write at (at, runID) is later than the
// one at (other, otherRun): a later time, or the same time and a later run.
func writtenAfter(at time.Time, runID int64, other time.Time, otherRun int64) bool {
	return at.After(other) || at.Equal(other) && runID > otherRun
}
