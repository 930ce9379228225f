package pipeline

import (
	"slices"
	"strings"
)

// PlanField is one field of a plan (not of its targets) that a file sets,
// the service stores, diff compares and the history records as last
// applied, with where each side keeps it. PlanFields is the one table of
// them: a place that maps a field's name to a struct field looks it up
// here, so a new field is one row (docs/apply-and-state.md).
type PlanField struct {
	// Name is the field's name on the service and in the history ("name",
	// "sector", "scorecard_id", "start_date", "end_date").
	Name string
	// Column is its column in a flat table (ColPlanName, ...).
	Column string
	// Date is true for the dates, which a plan is created with and which
	// no metadata update changes: a changed date recreates the plan.
	Date bool

	// trimmed: the readers trim the field's cell, so spaces around the
	// service's value are no difference.
	trimmed bool

	text   func(name, sector, scorecard *string, start, end *Date) string
	ptr    func(name, sector, scorecard *string) *string
	change func(*PlanChange) **string
}

// PlanFields are the plan fields, in the order reports list them.
var PlanFields = [...]PlanField{
	{Name: "name", Column: ColPlanName, trimmed: true,
		ptr: func(n, _, _ *string) *string { return n }, change: func(c *PlanChange) **string { return &c.Name }},
	{Name: "sector", Column: ColSector,
		ptr: func(_, s, _ *string) *string { return s }, change: func(c *PlanChange) **string { return &c.Sector }},
	{Name: "scorecard_id", Column: ColScorecardID,
		ptr: func(_, _, c *string) *string { return c }, change: func(c *PlanChange) **string { return &c.ScorecardID }},
	{Name: "start_date", Column: ColStartDate, Date: true, text: func(_, _, _ *string, s, _ *Date) string { return dateText(*s) }},
	{Name: "end_date", Column: ColEndDate, Date: true, text: func(_, _, _ *string, _, e *Date) string { return dateText(*e) }},
}

// dateText is a date as a plan field's text: ISO, or "" when not given.
func dateText(d Date) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// PlanFieldNamed returns the plan field called name, and whether there is
// one.
func PlanFieldNamed(name string) (PlanField, bool) {
	for _, f := range PlanFields {
		if f.Name == name {
			return f, true
		}
	}
	return PlanField{}, false
}

// PatchedPlanFields are the fields a metadata update writes (the dates
// are not among them). The slice is shared and must not be modified.
func PatchedPlanFields() []PlanField { return patchedPlanFields }

// patchedPlanFields is PatchedPlanFields, built once: diff and the
// journal ask for it for every plan.
var patchedPlanFields = func() []PlanField {
	var out []PlanField
	for _, f := range PlanFields {
		if !f.Date {
			out = append(out, f)
		}
	}
	return slices.Clip(out)
}()

func (f PlanField) value(name, sector, scorecard *string, start, end *Date) string {
	if f.Date {
		return f.text(name, sector, scorecard, start, end)
	}
	return *f.ptr(name, sector, scorecard)
}

// Stored returns the field's value in a stored plan as text (a date as
// ISO text).
func (f PlanField) Stored(p *Plan) string {
	return f.value(&p.Name, &p.Sector, &p.ScorecardID, &p.StartDate, &p.EndDate)
}

// Input returns the field's value in a file's plan as text; "" when the
// file does not give it.
func (f PlanField) Input(p *InputPlan) string {
	return f.value(&p.Name, &p.Sector, &p.ScorecardID, &p.StartDate, &p.EndDate)
}

// New returns the field's value in a plan to create as text.
func (f PlanField) New(p *NewPlan) string {
	return f.value(&p.Name, &p.Sector, &p.ScorecardID, &p.StartDate, &p.EndDate)
}

// SetNew sets a text field of a plan to create (the dates are not set
// through it); it reports whether the field is one it sets.
func (f PlanField) SetNew(p *NewPlan, v string) bool {
	if f.Date {
		return false
	}
	*f.ptr(&p.Name, &p.Sector, &p.ScorecardID) = v
	return true
}

// SetInput sets a text field of a file's plan, as SetNew.
func (f PlanField) SetInput(p *InputPlan, v string) bool {
	if f.Date {
		return false
	}
	*f.ptr(&p.Name, &p.Sector, &p.ScorecardID) = v
	return true
}

// Change returns the field's slot in a metadata update (nil when the
// update does not send it), and false for a date, which no update sends.
func (f PlanField) Change(c *PlanChange) (**string, bool) {
	if f.Date {
		return nil, false
	}
	return f.change(c), true
}

// Differs reports whether a file's value changes a stored one: the file
// gives it (not "") and it is not the stored value (spaces around a
// stored name are no change: the readers trim a name's cell).
func (f PlanField) Differs(file, stored string) bool {
	if file == "" || file == stored {
		return false
	}
	return !f.trimmed || file != strings.TrimSpace(stored)
}

// PlanChange is a metadata update; nil fields are not sent. A pointer to ""
// sends null (for ScorecardID and Sector).
type PlanChange struct {
	Name        *string
	ScorecardID *string
	Sector      *string
}

// IsZero reports whether the change sends nothing.
func (c PlanChange) IsZero() bool {
	for _, f := range PatchedPlanFields() {
		if slot, _ := f.Change(&c); *slot != nil {
			return false
		}
	}
	return true
}

// Clear removes field (a PlanFields name) from the change.
func (c *PlanChange) Clear(field string) {
	if f, ok := PlanFieldNamed(field); ok {
		if slot, ok := f.Change(c); ok {
			*slot = nil
		}
	}
}
