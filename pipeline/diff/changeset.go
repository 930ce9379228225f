package diff

import (
	"fmt"
	"io"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// ChangeSet is the difference between a batch of input plans and the
// service: one PlanDiff per input plan, in input order. `eepipe apply`
// executes it, `apply --dry-run` and `eepipe diff` print it with Render,
// and `eepipe reconcile` reports it cell by cell (CounterChange.Origin).
type ChangeSet struct {
	Plans []*PlanDiff `json:"plans"`
	// listed holds, per account name, the account's plans as listed (without
	// milestones) when Runner.Plan read them: reconcile uses it to find the
	// plans only the service holds, without listing again.
	Listed map[string][]pipeline.Plan `json:"-"`
}

// DiffSummary counts a ChangeSet.
type DiffSummary struct {
	Create           int `json:"create"`
	Update           int `json:"update"`
	Recreate         int `json:"recreate"`
	Unchanged        int `json:"unchanged"`
	Failed           int `json:"failed"`
	TargetsToPatch   int `json:"targets_to_patch"`
	CountersToChange int `json:"counters_to_change"`
}

// Summary counts the plans by action and the targets and counters to send.
func (cs *ChangeSet) Summary() DiffSummary {
	var s DiffSummary
	for _, d := range cs.Plans {
		s.Add(d)
	}
	return s
}

// add counts one plan's diff into s.
func (s *DiffSummary) Add(d *PlanDiff) {
	switch d.Action {
	case ActionCreate:
		s.Create++
	case ActionUpdate:
		s.Update++
	case ActionRecreate:
		s.Recreate++
	case ActionUnchanged:
		s.Unchanged++
	case ActionFailed:
		s.Failed++
	}
	if d.Action.Changes() {
		s.TargetsToPatch += d.targetsToPatch()
		s.CountersToChange += d.countersToChange()
	}
}

// HasChanges reports whether applying would send any write.
func (cs *ChangeSet) HasChanges() bool {
	for _, d := range cs.Plans {
		if d.Action.Changes() {
			return true
		}
	}
	return false
}

// HasFailures reports whether any plan cannot be applied.
func (cs *ChangeSet) HasFailures() bool {
	for _, d := range cs.Plans {
		if d.Action == ActionFailed {
			return true
		}
	}
	return false
}

// String formats the summary on one line.
func (s DiffSummary) String() string {
	return fmt.Sprintf("%d to create, %d to update, %d to recreate, %d unchanged, %d failed; %s to patch, %s to change",
		s.Create, s.Update, s.Recreate, s.Unchanged, s.Failed, pipeline.Plural(s.TargetsToPatch, "target"), pipeline.Plural(s.CountersToChange, "counter"))
}

// RenderOptions tune ChangeSet.Render.
type RenderOptions struct {
	// Unchanged lists unchanged plans one per line (default: only counted).
	Unchanged bool
	// MaxCounters limits the counters listed per target; 0 lists all.
	MaxCounters int
	// Brief gives each plan one line of counts (counters, targets)
	// instead of its targets and counters: what diff prints by default.
	Brief bool
}

// Render writes the change set like a plan, for people:
//
//   - create plan "Acme 2026" starting 2026-09-01 (account acme, company Acme Foods (Pty) Ltd)
//     pre-filled from scorecard scorecard_acme_2025
//     year 1 (2026/27) all_employees
//     number_of_african_male_top_managers  (prefill) -> 3
//     ~ update plan 17 "Acme 2025" (account acme)
//     sector: "Manufacturing" -> "Construction"
//     year 2 (2026/27) disabled_employees
//     number_of_white_female_senior_managers  2 -> 1
//     -/+ recreate plan 18 ...
//     ! failed plan "X" starting 2026-09-01: company not found ...
//     = unchanged plan 19 "Y"
//
// and a summary line.
func (cs *ChangeSet) Render(w io.Writer, opts RenderOptions) error {
	var b strings.Builder
	for _, d := range cs.Plans {
		if d.Action == ActionUnchanged && !opts.Unchanged {
			continue
		}
		renderPlan(&b, d, opts)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return RenderSummary(w, cs.Summary(), opts)
}

// renderSummary writes the closing lines of Render for a change set
// counted in s.
func RenderSummary(w io.Writer, s DiffSummary, opts RenderOptions) error {
	var b strings.Builder
	if !opts.Unchanged && s.Unchanged > 0 {
		fmt.Fprintf(&b, "(%d unchanged plans not listed)\n", s.Unchanged)
	}
	fmt.Fprintf(&b, "Plan: %s.\n", s)
	_, err := io.WriteString(w, b.String())
	return err
}

// RenderPlan writes one plan's diff as Render does, without the summary:
// apply shows each plan on a terminal as it is written.
func RenderPlan(w io.Writer, d *PlanDiff, opts RenderOptions) error {
	var b strings.Builder
	renderPlan(&b, d, opts)
	_, err := io.WriteString(w, b.String())
	return err
}

var actionSigns = map[Action]string{
	ActionCreate: "+", ActionUpdate: "~", ActionRecreate: "-/+", ActionUnchanged: "=", ActionFailed: "!",
}

func renderPlan(b *strings.Builder, d *PlanDiff, opts RenderOptions) {
	fmt.Fprintf(b, "%s %s %s", actionSigns[d.Action], d.Action, d.Title())
	var where []string
	if d.Account != "" {
		where = append(where, "account "+d.Account)
	}
	if d.Company != nil {
		where = append(where, fmt.Sprintf("company %s (%s)", d.Company.TradingName, d.Company.ID))
	} else if d.Input != nil && !d.Input.Company.IsZero() {
		where = append(where, "company "+d.Input.Company.String())
	}
	if len(where) > 0 {
		fmt.Fprintf(b, " (%s)", strings.Join(where, ", "))
	}
	if d.Action == ActionFailed {
		fmt.Fprintf(b, ": %s\n", d.Reason)
		if d.Input != nil && d.Input.Origin.File != "" {
			fmt.Fprintf(b, "    in %s\n", d.Input.Origin)
		}
		return
	}
	b.WriteByte('\n')
	if d.Action == ActionRecreate {
		fmt.Fprintf(b, "    %s\n", d.Reason)
	}
	if d.Create != nil && d.Create.ScorecardID != "" {
		fmt.Fprintf(b, "    pre-filled from scorecard %s\n", d.Create.ScorecardID)
	}
	for _, f := range d.Fields {
		if d.Action == ActionCreate {
			fmt.Fprintf(b, "    %s: %s\n", f.Field, FieldValueText(f.New))
			continue
		}
		fmt.Fprintf(b, "    %s: %s -> %s", f.Field, FieldValueText(f.Old), FieldValueText(f.New))
		if f.Class != "" && f.Class != ClassNoHistory {
			fmt.Fprintf(b, "  (%s)", f.Class.Words(f.Last.Run()))
		}
		b.WriteByte('\n')
	}
	if opts.Brief {
		renderCounts(b, d)
		return
	}
	for i := range d.Targets {
		t := &d.Targets[i]
		if len(t.Changes) == 0 {
			continue
		}
		fmt.Fprintf(b, "    %s", t.Label())
		if t.TargetID != 0 {
			fmt.Fprintf(b, " (target %d)", t.TargetID)
		}
		fmt.Fprintf(b, ": %s\n", pipeline.Plural(len(t.Changes), "counter"))
		width := 0
		for _, c := range t.Changes {
			width = max(width, len(c.Name))
		}
		for j, c := range t.Changes {
			if opts.MaxCounters > 0 && j == opts.MaxCounters {
				fmt.Fprintf(b, "      ... and %d more\n", len(t.Changes)-j)
				break
			}
			old := "(prefill)"
			if c.OldKnown {
				old = fmt.Sprint(c.Old)
			}
			fmt.Fprintf(b, "      %-*s  %s -> %d", width, c.Name, old, c.New)
			if c.Class != "" && c.Class != ClassNoHistory {
				fmt.Fprintf(b, "  (%s)", c.Class.Words(c.Last))
			}
			b.WriteByte('\n')
		}
	}
}

// classCountWords name the classes of a three-way diff in a count.
var classCountWords = map[ChangeClass]string{
	ClassFile: "changed in the file", ClassService: "changed on the service", ClassBoth: "changed in both the file and on the service",
}

// renderCounts writes a plan's counter changes as one line of counts:
// how many counters in how many targets, how many the service held back
// classified (service changes, conflicts), and for a pre-filled plan how
// many take their old value from the scorecard.
func renderCounts(b *strings.Builder, d *PlanDiff) {
	counters, targets, prefill := 0, 0, 0
	classes := map[ChangeClass]int{}
	for i := range d.Targets {
		t := &d.Targets[i]
		if len(t.Changes) == 0 {
			continue
		}
		targets++
		counters += len(t.Changes)
		for _, c := range t.Changes {
			if !c.OldKnown {
				prefill++
			}
			if c.Class != "" && c.Class != ClassNoHistory {
				classes[c.Class]++
			}
		}
	}
	if counters == 0 {
		return
	}
	fmt.Fprintf(b, "    %s in %s", pipeline.Plural(counters, "counter"), pipeline.Plural(targets, "target"))
	var notes []string
	if prefill > 0 && d.Create != nil && d.Create.ScorecardID != "" {
		notes = append(notes, "the scorecard's prefill may already hold some of these values")
	}
	for _, c := range []ChangeClass{ClassFile, ClassService, ClassBoth} {
		if n := classes[c]; n > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n, classCountWords[c]))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, " (%s)", strings.Join(notes, ", "))
	}
	b.WriteByte('\n')
}

// SameNameOtherStart warns about each plan to create whose account
// already holds a plan of the same name with another start date: a file
// that changed a plan's start date (without its plan_id) creates a second
// plan rather than changing the first, which the service cannot do.
func (cs *ChangeSet) SameNameOtherStart() []string {
	var out []string
	for _, d := range cs.Plans {
		if d.Action != ActionCreate || d.Create == nil || strings.TrimSpace(d.Create.Name) == "" {
			continue
		}
		for _, p := range cs.Listed[d.Account] {
			if pipeline.SameName(p.Name, d.Create.Name) && p.StartDate != d.Create.StartDate {
				out = append(out, fmt.Sprintf("%s will be created as a new plan, but account %s already has plan %d %q starting %s; "+
					"a plan's dates cannot change: if the file means that plan, give its plan_id (then the date change fails, or is made with --recreate-on-date-change)",
					d.Title(), d.Account, p.ID, p.Name, p.StartDate))
				break
			}
		}
	}
	return out
}
