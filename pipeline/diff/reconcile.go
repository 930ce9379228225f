package diff

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// ReconcileSchema names the version of the reconciliation report's JSON
// shape. It changes only when a field changes meaning or disappears;
// new fields may be added within a version.
const ReconcileSchema = "eepipe.reconcile/v1"

// Presence says where a plan exists.
type Presence string

// Presences of a reconciled plan.
const (
	// PresencePresent: the workbook's plan is on the service.
	PresencePresent Presence = "present"
	// PresenceMissing: the workbook describes a plan the service does not
	// hold (a new plan, or a plan_id the account no longer has).
	PresenceMissing Presence = "missing_on_server"
	// PresenceOnlyOnServer: a plan of the same company's account that the
	// workbook does not describe.
	PresenceOnlyOnServer Presence = "only_on_server"
	// PresenceNotCompared: the plan could not be compared; Reason says why
	// (company not found or ambiguous, account not configured, read failed).
	PresenceNotCompared Presence = "not_compared"
)

// Location is where a value sits in the workbook, for machines: file and
// sheet and cell for XLSX, file and line and column for CSV.
type Location struct {
	File   string `json:"file,omitempty"`
	Sheet  string `json:"sheet,omitempty"`
	Cell   string `json:"cell,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// LocationOf converts an Origin.
func LocationOf(o pipeline.Origin) Location {
	l := Location{File: o.File, Sheet: o.Sheet, Cell: o.Cell}
	if o.Sheet == "" {
		l.Line, l.Column = o.Row, o.Column
	}
	return l
}

// Reconciliation is the result of comparing workbooks with the service
// without writing: every workbook plan, every plan only on the service for
// the companies the workbook concerns, and every differing value. It is
// also the JSON reconciliation report.
type Reconciliation struct {
	Schema      string    `json:"schema"`
	GeneratedAt time.Time `json:"generated_at"`
	Files       []string  `json:"files"`
	// InSync is true when every plan is present with the same values, no
	// plan is only on the service, and the comparison ran to the end.
	InSync bool `json:"in_sync"`
	// Complete is false when the run stopped early (--max-duration, a
	// signal, a fatal error); Stopped then says why and the plans not
	// reached are not_compared.
	Complete bool             `json:"complete"`
	Stopped  string           `json:"stopped,omitempty"`
	Summary  ReconcileSummary `json:"summary"`
	Plans    []ReconciledPlan `json:"plans"`
}

// ReconcileSummary counts a Reconciliation.
type ReconcileSummary struct {
	Plans                int `json:"plans"`
	PlansInSync          int `json:"plans_in_sync"`
	PlansDiffering       int `json:"plans_differing"`
	PlansMissingOnServer int `json:"plans_missing_on_server"`
	PlansOnlyOnServer    int `json:"plans_only_on_server"`
	PlansNotCompared     int `json:"plans_not_compared"`
	FieldsDiffering      int `json:"fields_differing"`
	TargetsDiffering     int `json:"targets_differing"`
	CountersDiffering    int `json:"counters_differing"`
}

// ReconciledPlan is one plan of a Reconciliation.
type ReconciledPlan struct {
	Presence Presence `json:"presence"`
	// InSync is true for a present plan whose workbook values all equal
	// the service's (blank workbook cells are not compared).
	InSync    bool                `json:"in_sync"`
	Account   string              `json:"account,omitempty"`
	CompanyID string              `json:"company_id,omitempty"`
	Company   string              `json:"company,omitempty"` // trading name, when looked up
	Workbook  pipeline.CompanyIDs `json:"company_identifiers"`
	PlanID    int64               `json:"plan_id,omitempty"`
	PlanName  string              `json:"plan_name"`
	StartDate string              `json:"start_date,omitempty"`
	EndDate   string              `json:"end_date,omitempty"`
	// Location is where the workbook describes the plan; empty for plans
	// only on the service.
	Location *Location `json:"location,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// Fields are the plan metadata values that differ.
	Fields []FieldDifference `json:"fields"`
	// Targets are the targets with at least one differing counter.
	Targets []TargetDifference `json:"targets"`

	Origin pipeline.Origin `json:"-"`
}

// FieldDifference is a plan metadata value that differs.
type FieldDifference struct {
	Field    string    `json:"field"`
	Workbook string    `json:"workbook"`
	Server   string    `json:"server"`
	Location *Location `json:"location,omitempty"`
	// Class is the three-way classification against the value eepipe
	// last applied to the field (empty without a state store);
	// LastApplied is that value and the run that applied it.
	Class       ChangeClass              `json:"class,omitempty"`
	LastApplied *pipeline.LastFieldWrite `json:"last_applied,omitempty"`
}

// LastRun returns the run of the field's last applied value as a
// LastWrite (its Value is not the field's), for ChangeClass.Words; nil
// without history.
func (f FieldDifference) LastRun() *pipeline.LastWrite { return f.LastApplied.Run() }

// TargetDifference is a target with differing counters.
type TargetDifference struct {
	YearNumber    int                 `json:"year_number"`
	FinancialYear string              `json:"financial_year,omitempty"`
	TargetType    string              `json:"target_type"`
	MilestoneID   int64               `json:"milestone_id,omitempty"`
	TargetID      int64               `json:"target_id,omitempty"`
	Counters      []CounterDifference `json:"counters"`
}

// CounterDifference is one counter whose workbook value differs from the
// service's.
type CounterDifference struct {
	Counter  string          `json:"counter"`
	Workbook int64           `json:"workbook"`
	Server   int64           `json:"server"`
	Location Location        `json:"location"`
	Origin   pipeline.Origin `json:"-"`
	// Class is the three-way classification against the value eepipe
	// last applied (empty without a state store); LastApplied is that
	// value and the run that wrote it.
	Class       ChangeClass         `json:"class,omitempty"`
	LastApplied *pipeline.LastWrite `json:"last_applied,omitempty"`
}

// Reconcile turns the ChangeSet of a batch (computed by Runner.Plan, the
// same diff apply --dry-run shows) into a Reconciliation, using the plan
// lists the diff fetched (ChangeSet.listed); accounts are the configured
// accounts. A plan to create is missing on the
// server; a plan to update differs, with the service's value as Server and
// the file's as Workbook; plans in an account's list that no workbook plan
// refers to are only on the server, for the accounts the workbook concerns.
func Reconcile(cs *ChangeSet, accounts []pipeline.Account) *Reconciliation {
	lists := cs.Listed
	rec := &Reconciliation{Schema: ReconcileSchema, Complete: true}
	claimed := map[string]map[int64]bool{}
	claim := func(account string, id int64) {
		if claimed[account] == nil {
			claimed[account] = map[int64]bool{}
		}
		claimed[account][id] = true
	}
	concerned := map[string]bool{}
	for _, d := range cs.Plans {
		rp := reconcilePlan(d, lists, accounts)
		if rp.Account != "" {
			concerned[rp.Account] = true
			if rp.PlanID != 0 && rp.Presence == PresencePresent {
				claim(rp.Account, rp.PlanID)
			}
		}
		if d.Input != nil && d.Input.PlanID != 0 {
			// A plan id the workbook names is never "only on the server",
			// whatever else failed about it.
			for name := range lists {
				claim(name, d.Input.PlanID)
			}
		}
		rec.Plans = append(rec.Plans, rp)
	}
	var extra []ReconciledPlan
	for _, a := range accounts {
		if !concerned[a.Name] {
			continue
		}
		for _, p := range lists[a.Name] {
			if claimed[a.Name][p.ID] {
				continue
			}
			extra = append(extra, ReconciledPlan{
				Presence: PresenceOnlyOnServer, Account: a.Name, CompanyID: a.CompanyID,
				PlanID: p.ID, PlanName: p.Name, StartDate: p.StartDate.String(), EndDate: p.EndDate.String(),
				Reason: "the service holds this plan for the company but the workbook does not describe it",
			})
		}
	}
	slices.SortFunc(extra, func(a, b ReconciledPlan) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.PlanID, b.PlanID))
	})
	rec.Plans = append(rec.Plans, extra...)
	rec.Count()
	return rec
}

// MarkStopped records that the run stopped early for reason: the
// reconciliation is incomplete and not in sync.
func (r *Reconciliation) MarkStopped(reason string) {
	r.Complete = false
	r.Stopped = reason
	r.Count()
}

func (r *Reconciliation) Count() {
	s := ReconcileSummary{Plans: len(r.Plans)}
	for _, p := range r.Plans {
		switch p.Presence {
		case PresencePresent:
			if p.InSync {
				s.PlansInSync++
			} else {
				s.PlansDiffering++
			}
		case PresenceMissing:
			s.PlansMissingOnServer++
		case PresenceOnlyOnServer:
			s.PlansOnlyOnServer++
		case PresenceNotCompared:
			s.PlansNotCompared++
		}
		s.FieldsDiffering += len(p.Fields)
		s.TargetsDiffering += len(p.Targets)
		for _, t := range p.Targets {
			s.CountersDiffering += len(t.Counters)
		}
	}
	r.Summary = s
	r.InSync = r.Complete && s.PlansInSync == s.Plans
}

// candidateAccount returns the account a plan diff belongs to, as far as
// it can be told.
func candidateAccount(d *PlanDiff, accounts []pipeline.Account) *pipeline.Account {
	name := d.Account
	for i := range accounts {
		a := &accounts[i]
		switch {
		case name != "" && pipeline.SameAccount(a.Name, name):
			return a
		case name == "" && d.Company != nil && a.CompanyID == d.Company.ID:
			return a
		}
	}
	if name == "" && len(accounts) == 1 && d.Company == nil {
		return &accounts[0]
	}
	return nil
}

// reconcilePlan is the reconcile report's entry for plan diff d: the
// plan as the file and the service name it (reconcileHead), then what
// differs (reconcileUpdate), the plan the service lacks, or why it was
// not compared (reconcileNotCompared), and a plan_id the file has out of
// date.
func reconcilePlan(d *PlanDiff, lists map[string][]pipeline.Plan, accounts []pipeline.Account) ReconciledPlan {
	rp := reconcileHead(d)
	switch d.Action {
	case ActionUnchanged:
		rp.Presence, rp.InSync = PresencePresent, true
	case ActionUpdate:
		reconcileUpdate(&rp, d)
	case ActionCreate:
		rp.Presence = PresenceMissing
		rp.Reason = "the service holds no plan " + planWords(d)
	default: // actionFailed, or actionRecreate (never asked for by reconcile)
		reconcileNotCompared(&rp, d, lists, accounts)
	}
	if in, sv := d.Input, d.Server; in != nil && sv != nil && in.PlanID != 0 && in.PlanID != sv.ID && rp.Presence == PresencePresent {
		// The workbook's plan_id is gone and the plan was found by its
		// name and start date (recreated under a new id): the workbook is
		// out of date until its plan_id is refreshed.
		rp.Fields = append(rp.Fields, FieldDifference{Field: pipeline.ColPlanID, Workbook: fmt.Sprint(in.PlanID), Server: fmt.Sprint(sv.ID)})
		rp.InSync = false
		if len(d.Notes) > 0 && rp.Reason == "" {
			rp.Reason = d.Notes[0]
		}
	}
	return rp
}

// reconcileHead is the entry of d with the plan's account, company, id,
// name and dates: the file's, the stored plan's where it has them.
func reconcileHead(d *PlanDiff) ReconciledPlan {
	rp := ReconciledPlan{Account: d.Account, Fields: []FieldDifference{}, Targets: []TargetDifference{}}
	if in := d.Input; in != nil {
		rp.Workbook = in.Company
		rp.PlanID = in.PlanID
		rp.PlanName = in.Name
		rp.StartDate = in.StartDate.String()
		rp.EndDate = in.EndDate.String()
		rp.Origin = in.Origin
		if in.Origin.File != "" {
			l := LocationOf(in.Origin)
			rp.Location = &l
		}
	}
	if d.Company != nil {
		rp.CompanyID = d.Company.ID
		rp.Company = d.Company.TradingName
	}
	if s := d.Server; s != nil {
		rp.PlanID = s.ID
		if rp.PlanName == "" {
			rp.PlanName = s.Name
		}
		rp.StartDate, rp.EndDate = s.StartDate.String(), s.EndDate.String()
	}
	return rp
}

// reconcileUpdate gives rp the fields and counters in which the stored
// plan of d differs from the file.
func reconcileUpdate(rp *ReconciledPlan, d *PlanDiff) {
	rp.Presence = PresencePresent
	for _, f := range d.Fields {
		fd := FieldDifference{Field: f.Field, Workbook: f.New, Server: f.Old, Class: f.Class, LastApplied: f.Last}
		o := f.Origin
		if pf, ok := pipeline.PlanFieldNamed(f.Field); ok && d.Input != nil {
			col := pf.Column
			// The field's own cell (the grid's "Sector" value, the
			// flat row's sector column), kept when it was read.
			o = d.Input.FieldOrigin(col)
		}
		if o.File != "" {
			l := LocationOf(o)
			fd.Location = &l
		}
		rp.Fields = append(rp.Fields, fd)
	}
	for i := range d.Targets {
		t := &d.Targets[i]
		if len(t.Changes) == 0 {
			continue
		}
		td := TargetDifference{
			YearNumber: t.YearNumber, TargetType: t.TargetType,
			MilestoneID: t.MilestoneID, TargetID: t.TargetID,
		}
		if t.FinancialYear != 0 {
			td.FinancialYear = t.FinancialYear.String()
		}
		for _, c := range t.Changes {
			td.Counters = append(td.Counters, CounterDifference{
				Counter: c.Name, Workbook: c.New, Server: c.Old, Location: LocationOf(c.Origin), Origin: c.Origin,
				Class: c.Class, LastApplied: c.Last,
			})
		}
		rp.Targets = append(rp.Targets, td)
	}
	rp.InSync = len(rp.Fields) == 0 && len(rp.Targets) == 0
}

// reconcileNotCompared gives rp the reason plan d was not compared and,
// when its account's list (lists) shows the plan, that it is present,
// with its dates beside the file's when they differ.
func reconcileNotCompared(rp *ReconciledPlan, d *PlanDiff, lists map[string][]pipeline.Plan, accounts []pipeline.Account) {
	rp.Presence = PresenceNotCompared
	rp.Reason = d.Reason
	a := candidateAccount(d, accounts)
	if a == nil || d.Input == nil {
		return
	}
	list, listed := lists[a.Name]
	if !listed {
		return
	}
	rp.Account = a.Name
	if rp.CompanyID == "" {
		rp.CompanyID = a.CompanyID
	}
	m, _, err := pipeline.MatchPlan(d.Input, list, a.Name)
	switch {
	case m != nil:
		// Present, but not comparable (dates differ, unknown counter):
		// show the dates side by side when they are the reason.
		rp.Presence = PresencePresent
		rp.PlanID = m.ID
		if s, w := m.StartDate, d.Input.StartDate; !w.IsZero() && s != w {
			rp.Fields = append(rp.Fields, FieldDifference{Field: "start_date", Workbook: w.String(), Server: s.String()})
		}
		if s, w := m.EndDate, d.Input.EndDate; !w.IsZero() && s != w && (m.Era == "pre_2025" || s != pipeline.ClampEnd(w)) {
			rp.Fields = append(rp.Fields, FieldDifference{Field: "end_date", Workbook: w.String(), Server: s.String()})
		}
	case err != nil && d.Input.PlanID != 0:
		rp.Presence = PresenceMissing
	}
}

func planWords(d *PlanDiff) string {
	if d.Input == nil {
		return ""
	}
	return d.Input.Key().String()
}

// Render writes the reconciliation for people: each plan that is not in
// sync with what differs (workbook value, service value, and where the
// value is in the workbook), then a summary line.
//
//	~ plan 17 "Acme 2026" (account acme): 1 field, 2 counters differ
//	    name: workbook "Acme 26", service "Acme 2026"
//	    year 1 (2026/27) all_employees
//	      number_of_african_male_top_managers  workbook 5, service 7  (plans.xlsx Acme 2026!C17)
//	- missing on the service: plan "New" starting 2026-09-01 (plans.csv line 5)
//	+ only on the service: plan 21 "Old" (account acme)
//	! not compared: plan "X" starting ...: company not found
func (r *Reconciliation) Render(w io.Writer) error {
	var b strings.Builder
	for i := range r.Plans {
		p := &r.Plans[i]
		title := p.title()
		where := ""
		if p.Account != "" {
			where = " (account " + p.Account + ")"
		}
		switch {
		case p.Presence == PresencePresent && p.InSync:
			continue
		case p.Presence == PresencePresent:
			var parts []string
			if n := len(p.Fields); n > 0 {
				parts = append(parts, countWords(n, "field"))
			}
			if n := p.counters(); n > 0 {
				parts = append(parts, countWords(n, "counter"))
			}
			verb := "differ"
			if len(p.Fields)+p.counters() == 1 {
				verb = "differs"
			}
			fmt.Fprintf(&b, "~ %s%s: %s %s\n", title, where, strings.Join(parts, ", "), verb)
			if p.Reason != "" {
				fmt.Fprintf(&b, "    %s\n", p.Reason)
			}
		case p.Presence == PresenceMissing:
			fmt.Fprintf(&b, "- missing on the service: %s%s", title, where)
		case p.Presence == PresenceOnlyOnServer:
			fmt.Fprintf(&b, "+ only on the service: %s%s\n", title, where)
			continue
		default:
			fmt.Fprintf(&b, "! not compared: %s%s: %s", title, where, p.Reason)
		}
		if p.Presence != PresencePresent {
			if p.Location != nil {
				fmt.Fprintf(&b, " (%s)", ShortOrigin(p.Origin))
			}
			b.WriteByte('\n')
			continue
		}
		for _, f := range p.Fields {
			fmt.Fprintf(&b, "    %s: workbook %s, service %s", f.Field, FieldValueText(f.Workbook), FieldValueText(f.Server))
			if f.Class != "" && f.Class != ClassNoHistory && f.LastApplied != nil {
				fmt.Fprintf(&b, ", last applied %s: %s", FieldValueText(f.LastApplied.Value), f.Class.Words(f.LastRun()))
			}
			b.WriteByte('\n')
		}
		for _, t := range p.Targets {
			fmt.Fprintf(&b, "    year %d", t.YearNumber)
			if t.FinancialYear != "" {
				fmt.Fprintf(&b, " (%s)", t.FinancialYear)
			}
			fmt.Fprintf(&b, " %s\n", t.TargetType)
			width := 0
			for _, c := range t.Counters {
				width = max(width, len(c.Counter))
			}
			for _, c := range t.Counters {
				fmt.Fprintf(&b, "      %-*s  workbook %d, service %d", width, c.Counter, c.Workbook, c.Server)
				if c.Class != "" && c.Class != ClassNoHistory {
					fmt.Fprintf(&b, ", last applied %d: %s", c.LastApplied.Value, c.Class.Words(c.LastApplied))
				}
				if c.Origin.File != "" {
					fmt.Fprintf(&b, "  (%s)", ShortOrigin(c.Origin))
				}
				b.WriteByte('\n')
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(&b, "Reconcile: %d in sync, %d %s (%s, %s), %d missing on the service, %d only on the service, %d not compared.",
		s.PlansInSync, s.PlansDiffering, pipeline.PluralNoun(s.PlansDiffering, "differs", "differ"), countWords(s.FieldsDiffering, "field"), countWords(s.CountersDiffering, "counter"),
		s.PlansMissingOnServer, s.PlansOnlyOnServer, s.PlansNotCompared)
	if !r.Complete {
		fmt.Fprintf(&b, " INCOMPLETE: %s.", r.Stopped)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *ReconciledPlan) counters() int {
	n := 0
	for _, t := range p.Targets {
		n += len(t.Counters)
	}
	return n
}

func (p *ReconciledPlan) title() string {
	switch {
	case p.PlanID != 0 && p.PlanName != "":
		return fmt.Sprintf("plan %d %q", p.PlanID, p.PlanName)
	case p.PlanID != 0:
		return fmt.Sprintf("plan %d", p.PlanID)
	}
	return fmt.Sprintf("plan %q starting %s", p.PlanName, p.StartDate)
}

func countWords(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shortOrigin formats an origin without the column header: "plans.xlsx
// Acme!C17", "plans.csv line 4, column 9".
func ShortOrigin(o pipeline.Origin) string {
	o.Header = ""
	return o.String()
}
