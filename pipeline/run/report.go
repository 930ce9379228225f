package run

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// Outcome is what happened to a plan or an input row in a run.
type Outcome string

// Outcomes. The "would" outcomes are those of a dry run.
const (
	OutcomeCreated       Outcome = "created"
	OutcomeUpdated       Outcome = "updated"
	OutcomeRecreated     Outcome = "recreated"
	outcomeUnchanged     Outcome = "unchanged"
	OutcomeFailed        Outcome = "failed"
	OutcomeNotApplied    Outcome = "not applied" // the run stopped before anything of it was sent
	outcomeWouldCreate   Outcome = "would create"
	outcomeWouldUpdate   Outcome = "would update"
	outcomeWouldRecreate Outcome = "would recreate"
)

// PlanResult is what applying one PlanDiff did.
type PlanResult struct {
	Diff    *diff.PlanDiff
	Outcome Outcome
	// PlanID is the plan's id on the service afterwards (the new id for a
	// created or recreated plan); OldPlanID the deleted plan of a recreate.
	PlanID    int64
	OldPlanID int64
	// metaUpdated is true when the plan metadata update was sent and accepted.
	metaUpdated bool
	// Targets are the target patches, one per input target (for a created
	// plan computed against the created plan, so prefilled values that
	// already match are not sent).
	Targets []TargetResult
	// Err is the plan's failure; Notes say what else happened (an adopted
	// create, a recreate).
	Err   error
	Notes []string
	// Wrote is true when at least one write of this plan was accepted.
	Wrote bool
}

// TargetResult is one input target's patch.
type TargetResult struct {
	Diff diff.TargetDiff
	// Patched is true when the patch was sent and accepted; Diff.Changes
	// were then applied.
	Patched bool
	err     error
	// changed counts Diff.Changes once they were let go after the target
	// was written: by a saved change set's run (the set holds them), or
	// by a run whose report lists no changes (RunOptions.CountsOnly).
	changed int
}

// changeCount is the number of counter changes of the target.
func (t *TargetResult) changeCount() int {
	if t.Diff.Changes != nil {
		return len(t.Diff.Changes)
	}
	return t.changed
}

// RecalcResult is one scorecard's recalculation.
type RecalcResult struct {
	Account     string        `json:"account"`
	ScorecardID string        `json:"scorecard_id"`
	Accepted    bool          `json:"accepted"`
	Attempts    int           `json:"attempts"`
	Waited      time.Duration `json:"waited_ns"`
	Err         error         `json:"-"`
}

// RunReport is the record of a run (apply, or a dry run): every plan's
// result, the recalculations, the requests sent and why it stopped.
type RunReport struct {
	Started  time.Time
	Finished time.Time
	DryRun   bool
	Plans    []*PlanResult
	Recalcs  []*RecalcResult
	Requests RequestCounts
	// Fatal is the error that stopped the run (nil when it ran to the end);
	// Interrupted is true when it was cancelled.
	Fatal       error
	Interrupted bool
	// CountersHeld counts the counters the run recorded in the state
	// store as already held (TargetWrite.Held: not sent, the service held
	// the file's value), as history counts them for the run.
	CountersHeld int
	// Notes say what else happened to the run as a whole, which the exit
	// status does not tell: its end could not be recorded in the state
	// store (finishRecord).
	Notes []string
	// Rejected counts the plans apply --skip-invalid set aside, not sent
	// because they have errors (SplitInvalid).
	Rejected int
	// Signer is the listed signer whose sign-off of the applied change set
	// was verified ("" for workbooks, and when no signers are configured).
	Signer string
}

// RunSummary counts a RunReport.
type RunSummary struct {
	PlansCreated    int           `json:"plans_created"`
	PlansUpdated    int           `json:"plans_updated"`
	PlansRecreated  int           `json:"plans_recreated"`
	PlansUnchanged  int           `json:"plans_unchanged"`
	PlansFailed     int           `json:"plans_failed"`
	PlansNotApplied int           `json:"plans_not_applied"`
	PlansRejected   int           `json:"plans_rejected"`
	TargetsPatched  int           `json:"targets_patched"`
	CountersChanged int           `json:"counters_changed"`
	Requests        int64         `json:"requests"`
	Writes          int64         `json:"writes"`
	RecalcsAccepted int           `json:"recalculations_accepted"`
	RecalcsFailed   int           `json:"recalculations_failed"`
	Elapsed         time.Duration `json:"elapsed_ns"`
}

// Summary counts the report.
func (r *RunReport) Summary() RunSummary {
	s := RunSummary{Requests: r.Requests.Total, Writes: r.Requests.Writes, Elapsed: r.Finished.Sub(r.Started), PlansRejected: r.Rejected}
	for _, p := range r.Plans {
		switch p.Outcome {
		case OutcomeCreated, outcomeWouldCreate:
			s.PlansCreated++
		case OutcomeUpdated, outcomeWouldUpdate:
			s.PlansUpdated++
		case OutcomeRecreated, outcomeWouldRecreate:
			s.PlansRecreated++
		case outcomeUnchanged:
			s.PlansUnchanged++
		case OutcomeFailed:
			s.PlansFailed++
		case OutcomeNotApplied:
			s.PlansNotApplied++
		}
		// A dry run counts what would be patched.
		would := p.Outcome == outcomeWouldCreate || p.Outcome == outcomeWouldUpdate || p.Outcome == outcomeWouldRecreate
		for _, t := range p.Targets {
			if t.Patched || (would && t.changeCount() > 0) {
				s.TargetsPatched++
				s.CountersChanged += t.changeCount()
			}
		}
	}
	for _, rc := range r.Recalcs {
		if rc.Accepted {
			s.RecalcsAccepted++
		} else {
			s.RecalcsFailed++
		}
	}
	return s
}

// OK reports whether every plan was applied (or unchanged) and every
// recalculation accepted, and the run was not stopped.
func (r *RunReport) OK() bool {
	s := r.Summary()
	return r.Fatal == nil && !r.Interrupted && s.PlansFailed == 0 && s.PlansNotApplied == 0 && s.RecalcsFailed == 0
}

// RowResult is one line of the run report: one input row (a flat row, or
// a grid of a grid workbook), with the outcome of its plan and target.
type RowResult struct {
	File          string               `json:"file"`
	Location      string               `json:"location"` // "Targets row 12", "line 12"
	Account       string               `json:"account,omitempty"`
	CompanyID     string               `json:"company_id,omitempty"`
	PlanName      string               `json:"plan_name,omitempty"`
	StartDate     string               `json:"start_date,omitempty"`
	YearNumber    int                  `json:"year_number,omitempty"`
	FinancialYear string               `json:"financial_year,omitempty"`
	TargetType    string               `json:"target_type"`
	Outcome       Outcome              `json:"outcome"`
	PlanID        int64                `json:"plan_id,omitempty"`
	MilestoneID   int64                `json:"milestone_id,omitempty"`
	TargetID      int64                `json:"target_id,omitempty"`
	Changed       int                  `json:"counters_changed"`
	Changes       []diff.CounterChange `json:"changes,omitempty"`
	// Held lists the counters apply left alone: changed on the service
	// since eepipe last wrote them, or changed in both (threeway.go).
	Held []diff.CounterChange `json:"held,omitempty"`
	// HeldFields lists the plan fields apply left alone (changed on the
	// service since eepipe last applied them, or in both), on the plan's
	// first row.
	HeldFields []diff.FieldChange `json:"held_fields,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// HeldText formats the held counters as "name: file N, service M, last
// applied L by run R on DATE — class; ...".
func (r RowResult) HeldText() string {
	parts := make([]string, len(r.Held))
	for i, c := range r.Held {
		s := fmt.Sprintf("%s: file %d, service %d", c.Name, c.New, c.Old)
		if c.Last != nil {
			s += fmt.Sprintf(", last applied %d by %s", c.Last.Value, c.Last)
		}
		parts[i] = s + " — " + c.Class.Words(c.Last)
	}
	for _, f := range r.HeldFields {
		parts = append(parts, fmt.Sprintf("plan field %s: %s — %s", f.Field, f.HeldText(), f.Class.Words(f.Last.Run())))
	}
	return strings.Join(parts, "; ")
}

// ChangesText formats the changes as "name old -> new; ...".
func (r RowResult) ChangesText() string {
	parts := make([]string, len(r.Changes))
	for i, c := range r.Changes {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// Rows returns one RowResult per input row, in input order.
func (r *RunReport) Rows() []RowResult {
	var rows []RowResult
	var origins []pipeline.Origin
	for _, p := range r.Plans {
		d := p.Diff
		in := d.Input
		base := RowResult{Account: d.Account, PlanName: in.Name, StartDate: in.StartDate.String(), PlanID: p.PlanID}
		if base.PlanName == "" && d.Server != nil {
			base.PlanName = d.Server.Name
		}
		if in.StartDate.IsZero() && d.Server != nil && p.Outcome != OutcomeRecreated && p.Outcome != outcomeWouldRecreate {
			// A row that names the plan by plan_id alone: the stored start.
			base.StartDate = d.Server.StartDate.String()
		}
		if d.Company != nil {
			base.CompanyID = d.Company.ID
		}
		planErr := ""
		if p.Err != nil {
			planErr = p.Err.Error()
		}
		byInput := make(map[*pipeline.InputTarget]*TargetResult, len(p.Targets))
		for i := range p.Targets {
			byInput[p.Targets[i].Diff.Input] = &p.Targets[i]
		}
		for _, t := range in.Targets {
			row := base
			row.File = t.Origin.File
			row.Location = t.Origin.Ref()
			row.YearNumber = t.YearNumber
			if t.FinancialYear != 0 {
				row.FinancialYear = t.FinancialYear.String()
			}
			row.TargetType = t.TargetType
			tr := byInput[t]
			if tr != nil {
				row.YearNumber = tr.Diff.YearNumber
				if tr.Diff.FinancialYear != 0 {
					row.FinancialYear = tr.Diff.FinancialYear.String()
				}
				row.MilestoneID, row.TargetID = tr.Diff.MilestoneID, tr.Diff.TargetID
			}
			row.Outcome, row.Error = rowOutcome(p, tr, planErr)
			if tr != nil && (tr.Patched || r.DryRun) {
				row.Changes = tr.Diff.Changes
				row.Changed = tr.changeCount()
			}
			if tr != nil {
				row.Held = tr.Diff.Held
			}
			if t == in.Targets[0] {
				row.HeldFields = d.HeldFields
			}
			rows = append(rows, row)
			origins = append(origins, t.Origin)
		}
	}
	sortByInput(rows, origins)
	return rows
}

// sortByInput orders rows as the input rows they stand for: files and
// sheets in the order they first appear, then by row number.
func sortByInput(rows []RowResult, origins []pipeline.Origin) {
	fileRank, sheetRank := map[string]int{}, map[[2]string]int{}
	for _, o := range origins {
		if _, ok := fileRank[o.File]; !ok {
			fileRank[o.File] = len(fileRank)
		}
		if _, ok := sheetRank[[2]string{o.File, o.Sheet}]; !ok {
			sheetRank[[2]string{o.File, o.Sheet}] = len(sheetRank)
		}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		oa, ob := origins[idx[a]], origins[idx[b]]
		if fa, fb := fileRank[oa.File], fileRank[ob.File]; fa != fb {
			return fa < fb
		}
		if sa, sb := sheetRank[[2]string{oa.File, oa.Sheet}], sheetRank[[2]string{ob.File, ob.Sheet}]; sa != sb {
			return sa < sb
		}
		return oa.Row < ob.Row
	})
	sorted := make([]RowResult, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// maybePatched reports whether a target of p failed although its patch
// may have been applied (ErrMaybeApplied).
func (p *PlanResult) maybePatched() bool {
	return slices.ContainsFunc(p.Targets, func(t TargetResult) bool { return errors.Is(t.err, pipeline.ErrMaybeApplied) })
}

// rowOutcome decides one row's outcome from its plan's and its target's.
func rowOutcome(p *PlanResult, tr *TargetResult, planErr string) (Outcome, string) {
	switch p.Outcome {
	case outcomeWouldCreate, outcomeWouldRecreate:
		return p.Outcome, ""
	case outcomeWouldUpdate:
		if tr != nil && tr.changeCount() > 0 || !p.Diff.Meta.IsZero() {
			return outcomeWouldUpdate, ""
		}
		return outcomeUnchanged, ""
	case OutcomeNotApplied:
		return OutcomeNotApplied, planErr
	case outcomeUnchanged:
		return outcomeUnchanged, ""
	}
	if tr != nil && tr.err != nil {
		if errors.Is(tr.err, pipeline.ErrStopped) && !p.Wrote {
			return OutcomeNotApplied, tr.err.Error()
		}
		return OutcomeFailed, tr.err.Error()
	}
	switch p.Outcome {
	case OutcomeCreated, OutcomeRecreated:
		return p.Outcome, ""
	case OutcomeUpdated:
		if tr != nil && tr.Patched || p.metaUpdated {
			return OutcomeUpdated, ""
		}
		return outcomeUnchanged, ""
	}
	// The plan failed; a row whose target was patched before the failure
	// says so.
	if tr != nil && tr.Patched {
		return OutcomeUpdated, "target patched, but the plan failed: " + planErr
	}
	return OutcomeFailed, planErr
}

// AlreadyHeld counts the counters (and whole targets) that the change set
// counted to change but the service already held when their patch was
// computed: a plan created from a scorecard is pre-filled by the service,
// and its targets are then compared with the created plan (diff cannot
// know the prefill before the plan exists). It is the gap between the
// change set's "counters to change" and the run's "counters changed" that
// no failure explains. A plan with a failed target is left out.
func (r *RunReport) AlreadyHeld() (counters, targets int) {
	type key struct {
		year int
		typ  string
	}
	for _, p := range r.Plans {
		if (p.Outcome != OutcomeCreated && p.Outcome != OutcomeRecreated) || p.Err != nil {
			continue
		}
		computed := map[key]int{}
		failed := false
		for _, t := range p.Targets {
			failed = failed || t.err != nil
			computed[key{t.Diff.YearNumber, t.Diff.TargetType}] += t.changeCount()
		}
		if failed {
			continue
		}
		for _, t := range p.Diff.Targets {
			sent := computed[key{t.YearNumber, t.TargetType}]
			if n := t.ChangeCount(); n > sent {
				counters += n - sent
				if sent == 0 {
					targets++
				}
			}
		}
	}
	return counters, targets
}

// notePlan is note n of the plan titled title, naming the plan once: n
// itself when it begins with the title, else "title: n".
func notePlan(title, n string) string {
	if strings.HasPrefix(n, title) {
		return n
	}
	return title + ": " + n
}

// writeHeld writes the summary's line on the counters already held: as
// many as history counts for the run (CountersHeld, HeldText), and of
// them those the change set counted to change (AlreadyHeld: the created
// plans' prefill, the gap between "counters to change" and "counters
// changed"). Without a state store only the latter is known.
func (r *RunReport) writeHeld(b *strings.Builder) {
	counters, targets := r.AlreadyHeld()
	// The change set ("N counters to change": diff, and Compared on a
	// terminal) counted them; the service held them already.
	prefill := "the scorecard prefill, which the change set cannot know before a plan exists"
	if targets > 0 {
		prefill += fmt.Sprintf("; %s needed no patch at all", pipeline.Plural(targets, "target"))
	}
	if counters > 0 && counters <= r.CountersHeld {
		fmt.Fprintf(b, "  %s; %d of them %s counted to change (the created plans held them once created: %s). Nothing is missing.\n",
			pipeline.HeldText(r.CountersHeld), counters, pipeline.PluralNoun(counters, "was", "were"), prefill)
		return
	}
	if counters > 0 {
		fmt.Fprintf(b, "  %s counted to change %s not sent: the created plans already held the file's values there (%s). Nothing is missing.\n",
			pipeline.Plural(counters, "counter"), pipeline.PluralNoun(counters, "was", "were"), prefill)
	}
	if r.CountersHeld > 0 {
		fmt.Fprintf(b, "  %s.\n", pipeline.HeldText(r.CountersHeld))
	}
}

// WriteSummary writes the run's summary for people: counts, then every
// failed or not applied plan with its reason, then failed
// recalculations, so that a failed run says what was and was not applied.
func (r *RunReport) WriteSummary(w io.Writer) error {
	s := r.Summary()
	var b strings.Builder
	verb := "Applied"
	if r.DryRun {
		verb = "Dry run"
	}
	fmt.Fprintf(&b, "%s: plans %d created, %d updated, %d recreated, %d unchanged, %d failed, %d not applied; "+
		"%s patched, %s changed; %s (%s accepted); recalculations %d accepted, %d failed; %s elapsed\n",
		verb, s.PlansCreated, s.PlansUpdated, s.PlansRecreated, s.PlansUnchanged, s.PlansFailed, s.PlansNotApplied,
		pipeline.Plural(s.TargetsPatched, "target"), pipeline.Plural(s.CountersChanged, "counter"), pipeline.Plural(int(s.Requests), "request"), pipeline.Plural(int(s.Writes), "write"),
		s.RecalcsAccepted, s.RecalcsFailed, s.Elapsed.Round(time.Millisecond))
	if !r.DryRun {
		r.writeHeld(&b)
	}
	const maxNotApplied = 20
	notApplied := 0
	for _, p := range r.Plans {
		switch p.Outcome {
		case OutcomeFailed:
		case OutcomeNotApplied:
			notApplied++
			if notApplied > maxNotApplied {
				continue
			}
		default:
			for _, n := range p.Notes {
				fmt.Fprintf(&b, "  note: %s\n", notePlan(p.Diff.Title(), n))
			}
			continue
		}
		fmt.Fprintf(&b, "  %s %s", p.Outcome, p.Diff.Title())
		if p.Diff.Account != "" {
			fmt.Fprintf(&b, " (account %s)", p.Diff.Account)
		}
		if p.Diff.Input != nil && p.Diff.Input.Origin.File != "" {
			fmt.Fprintf(&b, " from %s", p.Diff.Input.Origin)
		}
		if p.Err != nil {
			fmt.Fprintf(&b, ": %v", p.Err)
		}
		b.WriteByte('\n')
		if !p.Wrote && p.Outcome == OutcomeFailed && !errors.Is(p.Err, pipeline.ErrUnclearOutcome) && !p.maybePatched() {
			b.WriteString("    nothing of this plan was written\n")
		}
		if p.Wrote {
			patched, total := 0, 0
			for _, t := range p.Targets {
				if t.changeCount() > 0 {
					total++
					if t.Patched {
						patched++
					}
				}
			}
			fmt.Fprintf(&b, "    partly applied: plan id %d; %d of %d target patches applied", p.PlanID, patched, total)
			if p.metaUpdated {
				b.WriteString("; metadata updated")
			}
			b.WriteByte('\n')
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "    note: %s\n", n)
		}
	}
	if notApplied > maxNotApplied {
		fmt.Fprintf(&b, "  ... and %s not applied (the --report file lists every row)\n", pipeline.Plural(notApplied-maxNotApplied, "more plan"))
	}
	for _, rc := range r.Recalcs {
		if !rc.Accepted {
			fmt.Fprintf(&b, "  recalculation of %s (account %s) failed: %v\n", rc.ScorecardID, rc.Account, rc.Err)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	switch {
	case r.Interrupted:
		b.WriteString("The run was interrupted: plans listed as not applied were not sent, or refused for the moment by the service and not sent again; " +
			"run apply again to finish (it sends only what still differs).\n")
	case r.Fatal != nil:
		fmt.Fprintf(&b, "The run stopped after a fatal error: %v\nPlans listed as not applied were not sent; fix the cause and run apply again.\n", r.Fatal)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
