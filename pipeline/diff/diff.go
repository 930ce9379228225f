package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// Action is what making the service match one input plan takes.
type Action int

// Actions of a PlanDiff.
const (
	// ActionUnchanged: the plan exists and already holds every value the
	// file sets; nothing is sent.
	ActionUnchanged Action = iota
	// ActionCreate: the plan is not on the service; it is created (with
	// scorecard prefill when the file names a scorecard), then its targets
	// are patched with the counters that differ from the created plan.
	ActionCreate
	// ActionUpdate: the plan exists; its metadata is patched when it
	// differs, and each target with differing counters is patched with
	// only those counters.
	ActionUpdate
	// actionRecreate: the plan exists but the file changes its dates,
	// which the service fixes at creation; with
	// DiffOptions.RecreateOnDateChange the plan is created again with the
	// new dates and the old one deleted.
	ActionRecreate
	// actionFailed: the plan cannot be applied; PlanDiff.Reason says why.
	ActionFailed
)

var actionNames = [...]string{"unchanged", "create", "update", "recreate", "failed"}

// String returns "unchanged", "create", "update", "recreate" or "failed".
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// MarshalText implements encoding.TextMarshaler.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if n == string(b) {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("unknown plan action %q", b)
}

// Changes reports whether the action sends a write.
func (a Action) Changes() bool { return a == ActionCreate || a == ActionUpdate || a == ActionRecreate }

// DiffOptions tune Diff.
type DiffOptions struct {
	// RecreateOnDateChange turns a change of an existing plan's dates from
	// a failure into actionRecreate.
	RecreateOnDateChange bool
}

// FieldChange is one plan metadata field whose file value differs from the
// service's: "name", "sector", "scorecard_id", and for actionRecreate
// "start_date" and "end_date". Old is "" when the service holds null or
// the plan does not exist yet.
//
// In JSON it is {"field": name, "old": text, "new": text, "cell":
// "Targets!E12" or "line 12, column 5", "class": ..., "last_applied": ...},
// as a CounterChange.
type FieldChange struct {
	Field string
	Old   string
	New   string
	// Origin is the file cell the field was read from (the flat row's
	// column, the grid's labelled cell), else where the plan is described.
	Origin pipeline.Origin
	// Class is the three-way classification against the value eepipe last
	// applied to the field (ClassifyChanges); Last is that value and its
	// run, nil without history.
	Class ChangeClass
	Last  *pipeline.LastFieldWrite
}

type fieldChangeJSON struct {
	Field string                   `json:"field"`
	Old   string                   `json:"old"`
	New   string                   `json:"new"`
	Cell  string                   `json:"cell,omitempty"`
	Class ChangeClass              `json:"class,omitempty"`
	Last  *pipeline.LastFieldWrite `json:"last_applied,omitempty"`
}

// MarshalJSON writes the change as documented on FieldChange.
func (f FieldChange) MarshalJSON() ([]byte, error) {
	j := fieldChangeJSON{Field: f.Field, Old: f.Old, New: f.New, Class: f.Class, Last: f.Last}
	if f.Origin != (pipeline.Origin{}) {
		j.Cell = f.Origin.Ref()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes (the cell's file is not kept).
func (f *FieldChange) UnmarshalJSON(b []byte) error {
	var j fieldChangeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = FieldChange{Field: j.Field, Old: j.Old, New: j.New, Class: j.Class, Last: j.Last}
	return nil
}

// fieldValueText formats a plan field's value for messages: quoted, or
// (blank) for an empty value (a field cleared on the service or in the
// file), never an empty pair of quotes.
func FieldValueText(v string) string {
	if v == "" {
		return "(blank)"
	}
	return strconv.Quote(v)
}

// fieldChange is the change of plan field field of in from old (the
// service's) to new, at the cell the field was read from.
func fieldChange(in *pipeline.InputPlan, field, old, new string) FieldChange {
	pf, _ := pipeline.PlanFieldNamed(field)
	return FieldChange{Field: field, Old: old, New: new, Origin: in.FieldOrigin(pf.Column)}
}

// CounterChange is one counter the file sets to a value the service does
// not hold.
//
// In JSON it is {"counter": name, "old": n or null when unknown, "new": n,
// "cell": "Targets!F12" or "line 12, column 6"}.
type CounterChange struct {
	Name string
	// Old is the service's value. OldKnown is false when it cannot be known
	// before the write: a plan to be created with scorecard prefill (the
	// service fills the counters from the scorecard's workforce).
	Old      int64
	OldKnown bool
	New      int64
	// Origin is the file cell the new value was read from
	// (InputTarget.Cells), so a report can mark that exact cell.
	Origin pipeline.Origin
	// Class is the three-way classification against the last value eepipe
	// applied (ClassifyChanges); Last is that value and its run, nil
	// without history.
	Class ChangeClass
	Last  *pipeline.LastWrite
}

type counterChangeJSON struct {
	Name  string              `json:"counter"`
	Old   *int64              `json:"old"`
	New   int64               `json:"new"`
	Cell  string              `json:"cell,omitempty"`
	Class ChangeClass         `json:"class,omitempty"`
	Last  *pipeline.LastWrite `json:"last_applied,omitempty"`
}

// MarshalJSON writes the change as documented on CounterChange.
func (c CounterChange) MarshalJSON() ([]byte, error) {
	j := counterChangeJSON{Name: c.Name, New: c.New, Class: c.Class, Last: c.Last}
	if c.OldKnown {
		j.Old = &c.Old
	}
	if c.Origin != (pipeline.Origin{}) {
		j.Cell = c.Origin.Ref()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes (the cell's file is not kept).
func (c *CounterChange) UnmarshalJSON(b []byte) error {
	var j counterChangeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = CounterChange{Name: j.Name, New: j.New, Class: j.Class, Last: j.Last}
	if j.Old != nil {
		c.Old, c.OldKnown = *j.Old, true
	}
	return nil
}

// String formats the change as "name old -> new" ("(prefill)" for an
// unknown old value).
func (c CounterChange) String() string {
	old := "(prefill)"
	if c.OldKnown {
		old = fmt.Sprint(c.Old)
	}
	return fmt.Sprintf("%s %s -> %d", c.Name, old, c.New)
}

// TargetDiff is the difference for one input target (one row of a flat
// file, one grid of a grid workbook).
type TargetDiff struct {
	Input         *pipeline.InputTarget  `json:"-"`
	YearNumber    int                    `json:"year_number"`
	FinancialYear pipeline.FinancialYear `json:"financial_year"`
	TargetType    string                 `json:"target_type"`
	// MilestoneID and TargetID locate the target on the service; both are
	// 0 while the plan does not exist (ActionCreate, actionRecreate).
	MilestoneID int64 `json:"milestone_id,omitempty"`
	TargetID    int64 `json:"target_id,omitempty"`
	// Changes lists the counters to send, in catalog order; counters the
	// file leaves blank never appear.
	Changes []CounterChange `json:"changes,omitempty"`
	// Same counts the counters the file sets that already hold its value.
	Same int `json:"same"`
	// Held lists the counters the service changed since eepipe last wrote
	// them (or that changed in both), left alone by holdServiceChanges.
	Held []CounterChange `json:"held,omitempty"`
	// dropped is the number of Changes once they were let go
	// (PlanDiff.DropChanges).
	dropped int
}

// ChangeCount is the number of counters to send: len(Changes), or what it
// was before PlanDiff.DropChanges let them go.
func (t *TargetDiff) ChangeCount() int {
	if t.Changes != nil {
		return len(t.Changes)
	}
	return t.dropped
}

// DropChanges keeps each target's number of changes and lets the changes
// go. A plan's diff is held until the run ends, for its counts; once a
// created plan is written (its patches sent from the diff against the
// plan as created), its own changes are no longer read, and a first
// apply of an account's plans would hold millions of them
// (docs/performance.md, "A first apply of 2,000 new plans").
func (d *PlanDiff) DropChanges() {
	for i := range d.Targets {
		t := &d.Targets[i]
		if t.Changes != nil {
			t.dropped, t.Changes = len(t.Changes), nil
		}
	}
}

// patch returns the body of the target update: only the changed counters.
func (t *TargetDiff) Patch() map[string]int64 {
	m := make(map[string]int64, len(t.Changes))
	for _, c := range t.Changes {
		m[c.Name] = c.New
	}
	return m
}

// label formats the target for messages: "year 2 (2026/27) all_employees".
func (t *TargetDiff) Label() string {
	if t.FinancialYear != 0 {
		return fmt.Sprintf("year %d (%s) %s", t.YearNumber, t.FinancialYear, t.TargetType)
	}
	return fmt.Sprintf("year %d %s", t.YearNumber, t.TargetType)
}

// PlanDiff is the difference between one input plan and the service: what
// apply would do, and why. It is computed by Diff (one plan against its
// stored state) and by Runner.Plan, which also resolves the company and
// the account and fills Account and Company.
type PlanDiff struct {
	Input *pipeline.InputPlan `json:"-"`
	// server is the stored plan with milestones, or nil when the plan is
	// not on the service (or could not be read).
	Server *pipeline.Plan `json:"-"`
	// Account is the name of the account the plan belongs to; Company the
	// company record found by the lookup (nil when no lookup was made).
	Account string            `json:"account,omitempty"`
	Company *pipeline.Company `json:"company,omitempty"`

	Action Action `json:"action"`
	// Reason explains actionFailed in plain words, and actionRecreate.
	Reason string `json:"reason,omitempty"`
	// Notes say what else the comparison found that the user should know
	// (a plan_id that no longer exists, replaced by a recreated plan).
	Notes []string `json:"notes,omitempty"`
	// create is what the create request sends (ActionCreate, actionRecreate).
	Create *pipeline.NewPlan `json:"-"`
	// meta is the metadata update (ActionUpdate); zero sends nothing.
	Meta pipeline.PlanChange `json:"-"`
	// Fields lists the metadata differences in words, for reports.
	Fields []FieldChange `json:"fields,omitempty"`
	// HeldFields lists the fields the service changed since eepipe last
	// applied them (or that changed in both), left alone by
	// holdServiceChanges: not in Fields, not in meta.
	HeldFields []FieldChange `json:"held_fields,omitempty"`
	// Targets has one entry per input target, in input order, also for
	// targets without changes. Empty for failures found before matching.
	// For actionRecreate it also has the targets the file does not
	// describe whose stored counters are carried over to the new plan
	// (their Input is not one of the file's targets).
	Targets []TargetDiff `json:"targets,omitempty"`

	// source is what the plan is created from and diffed against after
	// the create: Input, or for a recreate Input with the stored counters
	// carried over; origOf maps its targets back to Input's.
	source *pipeline.InputPlan
	origOf map[*pipeline.InputTarget]*pipeline.InputTarget

	// recreateHeld are the counters of a recreate that the client changed
	// on the service since eepipe last wrote them (or that changed in
	// both), against the old plan (classifyPlanWith); holdPlanChanges
	// fails the recreate over them unless overwriting.
	recreateHeld []HeldChange

	// pending are the writes to the plan's stored targets that an earlier
	// run sent but never recorded the answer of, resolved against the
	// service by classifyPlanWith (adoptPending): apply records them
	// (Runner.recordPending).
	Pending []pipeline.TargetWrite `json:"-"`

	// agreed are the last values applied to the counters of the stored
	// targets apply finds in sync (classifyPlanWith): Runner.recordInSync
	// does not record again a counter whose last applied value is the
	// file's. Nil when none were read (no state store).
	Agreed *AgreedValues `json:"-"`
}

// createSource returns the input the created plan is diffed against.
func (d *PlanDiff) CreateSource() *pipeline.InputPlan {
	if d.source != nil {
		return d.source
	}
	return d.Input
}

// remapTargets points the targets of a diff of d.source back at the
// file's targets.
func (d *PlanDiff) RemapTargets(targets []TargetDiff) {
	for i := range targets {
		if o, ok := d.origOf[targets[i].Input]; ok {
			targets[i].Input = o
		}
	}
}

// Failed returns a PlanDiff that fails in with reason.
func Failed(in *pipeline.InputPlan, reason string) *PlanDiff {
	return &PlanDiff{Input: in, Action: ActionFailed, Reason: reason}
}

// planID returns the id of the stored plan, or 0.
func (d *PlanDiff) PlanID() int64 {
	if d.Server != nil {
		return d.Server.ID
	}
	if d.Input != nil {
		return d.Input.PlanID
	}
	return 0
}

// Title formats the plan for messages: `plan 17 "Acme 2026"` or
// `new plan "Acme 2026" starting 2026-09-01`.
func (d *PlanDiff) Title() string {
	name := ""
	if d.Input != nil {
		name = d.Input.Name
	}
	if name == "" && d.Server != nil {
		name = d.Server.Name
	}
	if id := d.PlanID(); id != 0 {
		if name == "" {
			return fmt.Sprintf("plan %d", id)
		}
		return fmt.Sprintf("plan %d %q", id, name)
	}
	start := ""
	if d.Input != nil {
		start = d.Input.StartDate.String()
	}
	return fmt.Sprintf("plan %q starting %s", name, start)
}

// targetsToPatch counts the targets with at least one counter to send.
func (d *PlanDiff) targetsToPatch() int {
	n := 0
	for i := range d.Targets {
		if d.Targets[i].ChangeCount() > 0 {
			n++
		}
	}
	return n
}

// countersToChange counts the counters to send over all targets.
func (d *PlanDiff) countersToChange() int {
	n := 0
	for i := range d.Targets {
		n += d.Targets[i].ChangeCount()
	}
	return n
}

// Diff compares one input plan with its stored state. server is the plan
// as retrieved with milestones and targets, or nil when the plan is not on
// the service. Diff sends nothing and never fails: problems become
// actionFailed with a Reason.
//
// Rules, in the words of the contract:
//   - Blank cells never send anything: only counters present in
//     InputTarget.Counters and fields the file fills are compared.
//   - A plan to create without a scorecard starts with every counter at
//     zero, so only non-zero file counters are changes. With a scorecard the
//     service pre-fills the counters, which cannot be known beforehand:
//     every file counter is a change with OldKnown false. After the create,
//     call Diff again with the created plan to get the exact patches.
//   - Name, sector and scorecard_id are updated only when the file gives a
//     value that differs; the service has no way to clear them through the
//     file (a blank cell means "leave as is").
//   - The dates of a stored plan are fixed. A file that gives other dates
//     fails the plan with an explanation, unless opts.RecreateOnDateChange:
//     then the action is actionRecreate, and the stored counters the file
//     leaves blank are carried over to the new plan for the financial years
//     both date ranges cover (Targets then also lists targets the file does
//     not describe).
//   - Every target must name a year the plan has and a target type; a
//     counter the service does not carry fails the plan (it would be
//     silently ignored by the service).
func Diff(in *pipeline.InputPlan, server *pipeline.Plan, opts DiffOptions) *PlanDiff {
	d := &PlanDiff{Input: in, Server: server}
	if server == nil {
		return diffNew(d, in)
	}
	if dateChanged(in, server) {
		return diffDates(d, in, server, opts)
	}
	d.diffMeta(in, server)
	if failed := d.diffTargets(in, server); failed != nil {
		return failed
	}
	d.Action = ActionUnchanged
	if !d.Meta.IsZero() || d.targetsToPatch() > 0 {
		d.Action = ActionUpdate
	}
	return d
}

// diffNew fills d for a plan the service does not hold: it is created.
func diffNew(d *PlanDiff, in *pipeline.InputPlan) *PlanDiff {
	d = diffCreate(d, in, ActionCreate, newPlanFrom(in, nil))
	if skipped := pipeline.SkippedYears(in); len(skipped) > 0 && d.Action == ActionCreate {
		years, fill := pipeline.SkippedYearsText(in, skipped)
		d.Notes = append(d.Notes, fmt.Sprintf("%s is new and the file skips its %s: the service fills %s %s",
			d.Title(), years, pipeline.PluralNoun(len(skipped), "that year", "those years"), fill))
	}
	return d
}

// diffDates fills d for a plan whose file gives other dates than the
// stored plan's: it fails, or with opts.RecreateOnDateChange it is
// recreated, carrying over the stored counters the file leaves blank.
func diffDates(d *PlanDiff, in *pipeline.InputPlan, server *pipeline.Plan, opts DiffOptions) *PlanDiff {
	from := fmt.Sprintf("(%s to %s)", server.StartDate, server.EndDate)
	to := fmt.Sprintf("(%s to %s)", orDate(in.StartDate, server.StartDate), orDate(in.EndDate, server.EndDate))
	if !opts.RecreateOnDateChange {
		return d.fail(fmt.Sprintf("the file gives the dates %s but plan %d on the service runs %s; "+
			"the service fixes a plan's dates when the plan is created and cannot change them. "+
			"To change them the plan must be deleted and created again: run with --recreate-on-date-change "+
			"(the plan then gets a new id; counters the file leaves blank keep their stored values for the "+
			"financial years both date ranges cover)", to, server.ID, from))
	}
	np := newPlanFrom(in, server)
	source, origOf := carryOver(in, server, np)
	d = diffCreate(d, source, ActionRecreate, np)
	d.Input = in
	if d.Action == ActionRecreate {
		d.source, d.origOf = source, origOf
		d.RemapTargets(d.Targets)
		d.Reason = fmt.Sprintf("the dates change from %s to %s: plan %d will be created again with the new dates and the old plan deleted; "+
			"counters the file leaves blank keep their stored values", from, to, server.ID)
		var dates []FieldChange
		for _, f := range pipeline.PlanFields {
			if old, v := f.Stored(server), f.New(&np); f.Date && v != old {
				dates = append(dates, fieldChange(in, f.Name, old, v))
			}
		}
		d.Fields = append(dates, d.Fields...)
	}
	return d
}

// diffMeta compares the plan's name, sector and scorecard_id. The readers
// trim a name's cell, so a file cannot hold the spaces around a service's
// name: they are no change.
func (d *PlanDiff) diffMeta(in *pipeline.InputPlan, server *pipeline.Plan) {
	for _, f := range pipeline.PatchedPlanFields() {
		if v, old := f.Input(in), f.Stored(server); f.Differs(v, old) {
			slot, _ := f.Change(&d.Meta)
			*slot = Ptr(v)
			d.Fields = append(d.Fields, fieldChange(in, f.Name, old, v))
		}
	}
}

// diffTargets compares each of the file's targets with the stored one
// (diffTarget). It returns the failed diff when a target cannot be
// compared, nil otherwise.
func (d *PlanDiff) diffTargets(in *pipeline.InputPlan, server *pipeline.Plan) *PlanDiff {
	seen := map[[2]any]bool{}
	years := make([]int, 0, len(server.Milestones))
	for _, m := range server.Milestones {
		years = append(years, m.YearNumber)
	}
	for _, t := range in.Targets {
		td, fail := d.diffTarget(t, server, years, seen)
		if fail != "" {
			return d.failTarget(t, fail)
		}
		d.Targets = append(d.Targets, td)
	}
	return nil
}

// diffTarget compares target t with its stored target: its year must be
// one of the plan's years (the milestones' year numbers), given once
// (seen), with a target of its type, and every counter one the service
// knows. fail says why it cannot be compared.
func (d *PlanDiff) diffTarget(t *pipeline.InputTarget, server *pipeline.Plan, years []int, seen map[[2]any]bool) (td TargetDiff, fail string) {
	n, ok := t.Year(server.StartDate)
	if !ok {
		return td, fmt.Sprintf("the year of %s cannot be placed in %s, which starts %s", describeYear(t), d.Title(), server.StartDate)
	}
	m := findMilestone(server, n)
	if m == nil {
		return td, fmt.Sprintf("%s is not a year of %s, which has years %s", describeYear(t), d.Title(), yearList(years))
	}
	if seen[[2]any{n, t.TargetType}] {
		return td, fmt.Sprintf("year %d %s is given twice for %s", n, t.TargetType, d.Title())
	}
	seen[[2]any{n, t.TargetType}] = true
	st := findTarget(m, t.TargetType)
	if st == nil {
		return td, fmt.Sprintf("year %d of %s has no %s target on the service", n, d.Title(), t.TargetType)
	}
	td = TargetDiff{
		Input: t, YearNumber: n, FinancialYear: pipeline.FinancialYearOf(m.StartDate), TargetType: t.TargetType,
		MilestoneID: m.ID, TargetID: st.ID,
	}
	if m.StartDate.IsZero() {
		td.FinancialYear = pipeline.FinancialYearOf(server.StartDate) + pipeline.FinancialYear(n-1)
	}
	unknown := ""
	td.Same = pipeline.DiffCounters(t.Counters, st.Counters, func(c pipeline.CounterDelta) {
		if !c.OldKnown {
			if unknown == "" {
				unknown = c.Name
			}
			return
		}
		td.Changes = append(td.Changes, CounterChange{Name: c.Name, Old: c.Old, OldKnown: true, New: c.New, Origin: t.CellOf(c.Name)})
	})
	if cap(td.Changes) > len(td.Changes)+len(td.Changes)/8 {
		// Held until the run ends: without the room appending left
		// (docs/performance.md, "A first apply of 2,000 new plans").
		td.Changes = slices.Clone(td.Changes)
	}
	if unknown != "" {
		return td, fmt.Sprintf("the service does not know the counter %s (year %d %s of %s); "+
			"it would ignore the value, so nothing of this plan is sent. Check the counter name or the --catalog file",
			unknown, n, t.TargetType, d.Title())
	}
	return td, ""
}

// diffCreate fills d for a plan that will be created as np.
func diffCreate(d *PlanDiff, in *pipeline.InputPlan, action Action, np pipeline.NewPlan) *PlanDiff {
	if d.Server == nil && in.PlanID != 0 {
		return Failed(in, fmt.Sprintf("plan %d is not on the service for this account; remove the plan_id to create a new plan", in.PlanID))
	}
	if np.StartDate.IsZero() || np.EndDate.IsZero() {
		return Failed(in, fmt.Sprintf("%s is not on the service and the file does not give both start_date and end_date, which a new plan needs", d.Title()))
	}
	if np.EndDate.Before(np.StartDate) {
		return Failed(in, fmt.Sprintf("end_date %s is before start_date %s", np.EndDate, np.StartDate))
	}
	fys := pipeline.PlanYears(np.StartDate, pipeline.ClampEnd(np.EndDate))
	prefill := np.ScorecardID != ""
	d.Action = action
	d.Create = &np
	seen := map[[2]any]bool{}
	for _, t := range in.Targets {
		n, ok := t.Year(np.StartDate)
		if !ok || n > len(fys) {
			return failTarget(in, t, fmt.Sprintf("%s is not a year of %s, which runs %s to %s (years %s)",
				describeYear(t), d.Title(), np.StartDate, pipeline.ClampEnd(np.EndDate), yearList(seq(len(fys)))))
		}
		if seen[[2]any{n, t.TargetType}] {
			return failTarget(in, t, fmt.Sprintf("year %d %s is given twice for %s", n, t.TargetType, d.Title()))
		}
		seen[[2]any{n, t.TargetType}] = true
		if !pipeline.Contains(pipeline.TargetTypes, t.TargetType) {
			return failTarget(in, t, fmt.Sprintf("target type %q is not one of %s", t.TargetType, strings.Join(pipeline.TargetTypes, ", ")))
		}
		td := TargetDiff{Input: t, YearNumber: n, FinancialYear: fys[n-1], TargetType: t.TargetType}
		// Each counter to write is held until the run ends (a first apply
		// of an account's plans holds millions): room for exactly them,
		// not what appending would leave spare (docs/performance.md, "A
		// first apply of 2,000 new plans").
		changes := 0
		t.Counters.Each(func(_ int, _ string, v int64) {
			if prefill || v != 0 {
				changes++
			}
		})
		if changes > 0 {
			td.Changes = make([]CounterChange, 0, changes)
		}
		t.Counters.Each(func(_ int, name string, v int64) {
			if !prefill && v == 0 {
				td.Same++
				return
			}
			td.Changes = append(td.Changes, CounterChange{Name: name, OldKnown: !prefill, New: v, Origin: t.CellOf(name)})
		})
		d.Targets = append(d.Targets, td)
	}
	if action == ActionCreate {
		for _, f := range pipeline.PatchedPlanFields() {
			if v := f.New(&np); v != "" {
				d.Fields = append(d.Fields, fieldChange(in, f.Name, "", v))
			}
		}
	} else {
		s := d.Server
		for _, f := range pipeline.PatchedPlanFields() {
			if old, v := f.Stored(s), f.New(&np); v != old {
				d.Fields = append(d.Fields, fieldChange(in, f.Name, old, v))
			}
		}
	}
	return d
}

// newPlanFrom builds the create request for in; fields the file leaves
// blank come from old when the plan is recreated.
func newPlanFrom(in *pipeline.InputPlan, old *pipeline.Plan) pipeline.NewPlan {
	np := pipeline.NewPlan{Name: in.Name, StartDate: in.StartDate, EndDate: in.EndDate, ScorecardID: in.ScorecardID, Sector: in.Sector}
	if old != nil {
		np.Name = orString(np.Name, old.Name)
		np.StartDate = orDate(np.StartDate, old.StartDate)
		np.EndDate = orDate(np.EndDate, old.EndDate)
		np.ScorecardID = orString(np.ScorecardID, old.ScorecardID)
		np.Sector = orString(np.Sector, old.Sector)
	}
	return np
}

// dateChanged reports whether the file gives dates other than the stored
// plan's. The file's end date is compared after the clamp the service
// applies to post_2025 plans.
func dateChanged(in *pipeline.InputPlan, s *pipeline.Plan) bool {
	if !in.StartDate.IsZero() && in.StartDate != s.StartDate {
		return true
	}
	if in.EndDate.IsZero() {
		return false
	}
	end := in.EndDate
	if s.Era != "pre_2025" {
		end = pipeline.ClampEnd(end)
	}
	return end != s.EndDate
}

func failTarget(in *pipeline.InputPlan, t *pipeline.InputTarget, msg string) *PlanDiff {
	return Failed(in, fmt.Sprintf("%s: %s", t.Origin, msg))
}

// fail turns d into a failure with reason, keeping the stored plan.
func (d *PlanDiff) fail(reason string) *PlanDiff {
	f := Failed(d.Input, reason)
	f.Server = d.Server
	return f
}

// failTarget fails d because of target t, keeping the stored plan.
func (d *PlanDiff) failTarget(t *pipeline.InputTarget, msg string) *PlanDiff {
	return d.fail(fmt.Sprintf("%s: %s", t.Origin, msg))
}

func describeYear(t *pipeline.InputTarget) string {
	switch {
	case t.YearNumber != 0 && t.FinancialYear != 0:
		return fmt.Sprintf("year %d (financial year %s)", t.YearNumber, t.FinancialYear)
	case t.FinancialYear != 0:
		return fmt.Sprintf("financial year %s", t.FinancialYear)
	default:
		return fmt.Sprintf("year %d", t.YearNumber)
	}
}

func findMilestone(p *pipeline.Plan, year int) *pipeline.Milestone {
	for i := range p.Milestones {
		if p.Milestones[i].YearNumber == year {
			return &p.Milestones[i]
		}
	}
	return nil
}

func findTarget(m *pipeline.Milestone, typ string) *pipeline.Target {
	for i := range m.Targets {
		if m.Targets[i].TargetType == typ {
			return &m.Targets[i]
		}
	}
	return nil
}

func yearList(years []int) string {
	if len(years) == 0 {
		return "none"
	}
	s := slices.Clone(years)
	slices.Sort(s)
	if len(s) > 1 && s[len(s)-1]-s[0] == len(s)-1 {
		return fmt.Sprintf("%d to %d", s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, y := range s {
		parts[i] = fmt.Sprint(y)
	}
	return strings.Join(parts, ", ")
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func Ptr[T any](v T) *T { return &v }

func orString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orDate(a, b pipeline.Date) pipeline.Date {
	if !a.IsZero() {
		return a
	}
	return b
}

// carryOver returns the input a recreated plan is built from: in's
// targets with, for every financial year the stored plan and the new dates
// share, the stored counters the file leaves blank (so recreating to
// change dates loses no data), plus targets for the shared years the file
// does not describe. The map leads from the copies back to in's targets.
func carryOver(in *pipeline.InputPlan, old *pipeline.Plan, np pipeline.NewPlan) (*pipeline.InputPlan, map[*pipeline.InputTarget]*pipeline.InputTarget) {
	out := *in
	out.Targets = nil
	origOf := map[*pipeline.InputTarget]*pipeline.InputTarget{}
	fys := pipeline.PlanYears(np.StartDate, pipeline.ClampEnd(np.EndDate))
	type key struct {
		fy  pipeline.FinancialYear
		typ string
	}
	byKey := map[key]*pipeline.InputTarget{}
	for _, t := range in.Targets {
		c := *t
		c.Counters = t.Counters.Clone()
		out.Targets = append(out.Targets, &c)
		origOf[&c] = t
		if n, ok := t.Year(np.StartDate); ok && n <= len(fys) {
			byKey[key{fys[n-1], t.TargetType}] = &c
		}
	}
	for _, m := range old.Milestones {
		fy := pipeline.FinancialYearOf(m.StartDate)
		if m.StartDate.IsZero() {
			fy = pipeline.FinancialYearOf(old.StartDate) + pipeline.FinancialYear(m.YearNumber-1)
		}
		n := slices.Index(fys, fy) + 1
		if n == 0 {
			continue
		}
		for _, st := range m.Targets {
			t := byKey[key{fy, st.TargetType}]
			if t == nil {
				t = &pipeline.InputTarget{Origin: in.Origin, YearNumber: n, TargetType: st.TargetType}
				byKey[key{fy, st.TargetType}] = t
				out.Targets = append(out.Targets, t)
			}
			t.Counters = t.Counters.FillBlanks(st.Counters)
		}
	}
	return &out, origOf
}
