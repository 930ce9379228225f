package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// Drift is one difference between a saved change set and the service now.
type Drift struct {
	plan   string
	where  string // target or field
	what   string // counter or field name
	detail string
	// at is the file cell the counter's or field's value was read from,
	// as the change set recorded it (zero when it recorded none).
	at pipeline.Origin
}

// String formats the drift for messages, naming the cell first as held
// changes do: "v2.csv line 2, column 7: plan 3 "A" sector: ...".
func (d Drift) String() string {
	var b strings.Builder
	if d.at != (pipeline.Origin{}) {
		fmt.Fprintf(&b, "%s: ", diff.ShortOrigin(d.at))
	}
	parts := []string{d.plan}
	if d.where != "" {
		parts = append(parts, d.where)
	}
	if d.what != "" {
		parts = append(parts, d.what)
	}
	b.WriteString(strings.Join(parts, " ") + ": " + d.detail)
	return b.String()
}

// planSaved turns one plan of a saved change set into the PlanDiff to
// apply, checking it against the service: any target no longer holding
// the recorded service value, any field changed, and a plan to create that
// now exists (list: its account's plans before the run) is a Drift, handed
// to drift. The error is not nil only when the run must stop.
//
// prog is what earlier runs of the set wrote (nil or zero: none). When an
// earlier run wrote part of it, a counter or field the service already
// holds at the set's new value is applied and left out, a plan the set's
// earlier run created is completed rather than created again, and the rest
// is checked for drift as before.
func (r *Runner) planSaved(ctx context.Context, sp savedset.SavedPlan, list []pipeline.Plan, prog *pipeline.SavedProgress, drift func(Drift)) (*diff.PlanDiff, error) {
	in := &pipeline.InputPlan{}
	for _, st := range sp.Targets {
		t := &pipeline.InputTarget{Origin: pipeline.Origin{File: st.File}, YearNumber: st.YearNumber, TargetType: st.TargetType}
		for _, c := range st.Counters {
			t.Counters.Put(c.Counter, c.New)
		}
		in.Targets = append(in.Targets, t)
	}
	if sp.Action == diff.ActionCreate {
		return r.savedCreate(ctx, sp, in, list, prog, drift)
	}
	server, err := r.savedPlan(ctx, sp.Account, sp.PlanID)
	if errors.Is(err, pipeline.ErrNotFound) {
		drift(Drift{plan: sp.Title, detail: fmt.Sprintf("plan %d is no longer on account %s", sp.PlanID, sp.Account)})
		return diff.Failed(in, fmt.Sprintf("plan %d is no longer on the service", sp.PlanID)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading plan %d: %w", sp.Title, sp.PlanID, err)
	}
	d := &diff.PlanDiff{Input: in, Server: server, Account: sp.Account, Action: diff.ActionUpdate}
	// The plan's name is the stored one (Title): the set does not say the
	// file's, and only the fields it writes count as applied.
	in.PlanID = server.ID
	if err := savedFields(sp, server, d, prog, drift); err != nil {
		return nil, err
	}
	savedTargets(sp, server, d, prog, drift)
	if len(d.Fields) == 0 && len(d.Targets) == 0 {
		d.Action = diff.ActionUnchanged
	}
	return d, nil
}

// savedCreate is planSaved of a plan the set creates: drift when its
// account (list) now holds a plan of its name and start date, unless an
// earlier run of the set created it, which is then completed.
func (r *Runner) savedCreate(ctx context.Context, sp savedset.SavedPlan, in *pipeline.InputPlan, list []pipeline.Plan, prog *pipeline.SavedProgress, drift func(Drift)) (*diff.PlanDiff, error) {
	if sp.Create == nil {
		return nil, &savedset.SavedSetError{Problems: []string{fmt.Sprintf("%s: the change set creates a plan but gives no create request", sp.Title)}}
	}
	c := sp.Create
	in.Name, in.StartDate, in.EndDate, in.ScorecardID, in.Sector = c.Name, c.StartDate, c.EndDate, c.ScorecardID, c.Sector
	d := diff.Diff(in, nil, diff.DiffOptions{})
	d.Account = sp.Account
	found := pipeline.MatchPlans(list, 0, c.Name, c.StartDate, nil)
	if len(found) == 1 && prog.HasCreated(sp.Account, found[0].ID) {
		return r.resumeCreate(ctx, sp, in, found[0].ID, drift)
	}
	if len(found) > 0 {
		drift(Drift{plan: sp.Title, detail: fmt.Sprintf("the change set creates this plan, but account %s now holds plan %d %q starting %s",
			sp.Account, found[0].ID, found[0].Name, found[0].StartDate)})
	}
	return d, nil
}

// savedFields adds to d the plan fields sp writes, each compared with
// the stored plan server.
func savedFields(sp savedset.SavedPlan, server *pipeline.Plan, d *diff.PlanDiff, prog *pipeline.SavedProgress, drift func(Drift)) error {
	for _, f := range sp.Fields {
		pf, known := pipeline.PlanFieldNamed(f.Field)
		slot, patched := pf.Change(&d.Meta)
		if !known || !patched {
			return &savedset.SavedSetError{Problems: []string{fmt.Sprintf("%s: the change set changes the field %q, which apply cannot write", sp.Title, f.Field)}}
		}
		now := pf.Stored(server)
		at := savedset.SavedOrigin(f.File, f.Cell)
		if prog.Resumed() && now == f.New && now != f.Expected {
			continue // applied by an earlier run of the set
		}
		if now != f.Expected {
			drift(Drift{plan: sp.Title, what: f.Field, at: at, detail: fmt.Sprintf("the change set expects %s on the service, it now holds %s", diff.FieldValueText(f.Expected), diff.FieldValueText(now))})
		}
		*slot = diff.Ptr(f.New)
		d.Fields = append(d.Fields, diff.FieldChange{Field: f.Field, Old: now, New: f.New, Origin: at})
	}
	return nil
}

// savedTargets adds to d the counters sp writes, each compared with its
// target on the stored plan server.
func savedTargets(sp savedset.SavedPlan, server *pipeline.Plan, d *diff.PlanDiff, prog *pipeline.SavedProgress, drift func(Drift)) {
	in := d.Input
	for i, st := range sp.Targets {
		var m *pipeline.Milestone
		for j := range server.Milestones {
			if server.Milestones[j].ID == st.MilestoneID {
				m = &server.Milestones[j]
			}
		}
		var tgt *pipeline.Target
		if m != nil {
			for j := range m.Targets {
				if m.Targets[j].ID == st.TargetID {
					tgt = &m.Targets[j]
				}
			}
		}
		td := diff.TargetDiff{Input: in.Targets[i], YearNumber: st.YearNumber, TargetType: st.TargetType, MilestoneID: st.MilestoneID, TargetID: st.TargetID}
		if fy, err := savedset.ParseFinancialYearText(st.FinancialYear); err == nil {
			td.FinancialYear = fy
		}
		if tgt == nil {
			drift(Drift{plan: sp.Title, where: td.Label(), detail: fmt.Sprintf("target %d is no longer on plan %d", st.TargetID, sp.PlanID)})
			continue
		}
		for _, c := range st.Counters {
			now, ok := tgt.Counters.ByName(c.Counter)
			at := savedset.SavedOrigin(st.File, c.Cell)
			if prog.Resumed() && ok && now == c.New && (c.Expected == nil || now != *c.Expected) {
				continue // applied by an earlier run of the set
			}
			if c.Expected != nil && (!ok || now != *c.Expected) {
				drift(Drift{plan: sp.Title, where: td.Label(), what: c.Counter, at: at,
					detail: fmt.Sprintf("the change set was computed against %d on the service, it now holds %d (to write: %d)", *c.Expected, now, c.New)})
			}
			td.Changes = append(td.Changes, diff.CounterChange{Name: c.Counter, Old: now, OldKnown: true, New: c.New, Origin: at})
		}
		if len(td.Changes) > 0 {
			d.Targets = append(d.Targets, td)
		}
	}
}

// resumeCreate completes a plan to create that an earlier run of the set
// created (plan id): the counters not yet at the set's value are written
// to it. The set recorded no service value for them (the new plan was
// prefilled), so there is nothing else to check.
func (r *Runner) resumeCreate(ctx context.Context, sp savedset.SavedPlan, in *pipeline.InputPlan, id int64, drift func(Drift)) (*diff.PlanDiff, error) {
	server, err := r.savedPlan(ctx, sp.Account, id)
	if errors.Is(err, pipeline.ErrNotFound) {
		drift(Drift{plan: sp.Title, detail: fmt.Sprintf("plan %d, which an earlier run of this change set created, is no longer on account %s", id, sp.Account)})
		return diff.Failed(in, fmt.Sprintf("plan %d is no longer on the service", id)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading plan %d: %w", sp.Title, id, err)
	}
	in.PlanID = server.ID
	d := &diff.PlanDiff{Input: in, Server: server, Account: sp.Account, Action: diff.ActionUpdate}
	for i, st := range sp.Targets {
		var m *pipeline.Milestone
		var tgt *pipeline.Target
		for j := range server.Milestones {
			if server.Milestones[j].YearNumber == st.YearNumber {
				m = &server.Milestones[j]
			}
		}
		if m != nil {
			for j := range m.Targets {
				if m.Targets[j].TargetType == st.TargetType {
					tgt = &m.Targets[j]
				}
			}
		}
		td := diff.TargetDiff{Input: in.Targets[i], YearNumber: st.YearNumber, TargetType: st.TargetType}
		if fy, err := savedset.ParseFinancialYearText(st.FinancialYear); err == nil {
			td.FinancialYear = fy
		}
		if tgt == nil {
			drift(Drift{plan: sp.Title, where: td.Label(), detail: fmt.Sprintf("plan %d, which an earlier run of this change set created, has no such target", id)})
			continue
		}
		td.MilestoneID, td.TargetID = m.ID, tgt.ID
		for _, c := range st.Counters {
			now, ok := tgt.Counters.ByName(c.Counter)
			if ok && now == c.New {
				continue
			}
			td.Changes = append(td.Changes, diff.CounterChange{Name: c.Counter, Old: now, OldKnown: ok, New: c.New, Origin: savedset.SavedOrigin(st.File, c.Cell)})
		}
		if len(td.Changes) > 0 {
			d.Targets = append(d.Targets, td)
		}
	}
	if len(d.Targets) == 0 {
		d.Action = diff.ActionUnchanged
	}
	return d, nil
}
