package sector

import (
	"encoding/json"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"math/big"
	"sort"
	"strings"
)

// The sector check: each plan measured against its sector's targets
// (targets.go), and the report of the checks.

// designatedMaleRaces and designatedFemaleRaces are the races whose counters
// count towards the designated-group figures. Foreign nationals are never
// designated; white women are, white men are not.
var (
	designatedMaleRaces   = []string{"african", "coloured", "indian"}
	designatedFemaleRaces = []string{"african", "coloured", "indian", "white"}
)

// SectorStatus is the outcome of one check.
type SectorStatus string

// Outcomes of a check.
const (
	SectorMet           SectorStatus = "met"
	SectorShort         SectorStatus = "short"
	SectorNotAssessable SectorStatus = "not_assessable"
	// SectorPartlyMet is a plan's final year in which every figure that
	// could be assessed is met but some could not be: not a pass.
	SectorPartlyMet SectorStatus = "met_where_assessable"
)

// ShareResult is one share measured against its target: the count of the
// group, the share of the headcount it is, and how far it is from the target.
type ShareResult struct {
	Count       int64   `json:"count"`
	Of          int64   `json:"of"`
	ActualPct   float64 `json:"actual_pct"`
	TargetPct   Pct     `json:"target_pct"`
	Met         bool    `json:"met"`
	ShortPoints float64 `json:"short_points"` // target minus actual, in percentage points, when short (0 when met)
	ShortPeople int64   `json:"short_people"` // additional people of the group needed at this headcount, when short (0 when met)
	Needed      int64   `json:"needed"`       // smallest count of the group that meets the target at this headcount
}

// measureShare compares count out of of against target exactly: met when
// count/of >= target; short by the people needed to reach
// ceil(target*of) at the same headcount.
func measureShare(count, of int64, target Pct) ShareResult {
	r := ShareResult{Count: count, Of: of, TargetPct: target}
	if of <= 0 {
		return r
	}
	r.ActualPct = float64(count) * 100 / float64(of)
	r.Needed = neededFor(target, of)
	r.Met = count >= r.Needed
	if !r.Met {
		r.ShortPeople = r.Needed - count
		// (target*of - count*10000) / (100*of), exact integer numerator.
		num := new(big.Int).Mul(big.NewInt(int64(target)), big.NewInt(of))
		num.Sub(num, new(big.Int).Mul(big.NewInt(count), big.NewInt(10000)))
		nf, _ := new(big.Float).SetInt(num).Float64()
		r.ShortPoints = nf / (100 * float64(of))
	}
	return r
}

// neededFor returns ceil(target% * of), computed exactly.
func neededFor(target Pct, of int64) int64 {
	num := new(big.Int).Mul(big.NewInt(int64(target)), big.NewInt(of))
	den := big.NewInt(10000)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// SectorLevelCheck is one level of one year measured against the sector's
// two figures.
type SectorLevelCheck struct {
	Level  string       `json:"level"`
	Status SectorStatus `json:"status"`
	Reason string       `json:"reason,omitempty"` // why the level is not assessable
	// Blank lists the counters left blank (unknown) when they make the
	// level not assessable.
	Blank     []string `json:"blank_counters,omitempty"`
	Headcount *int64   `json:"headcount,omitempty"`
	// TargetMale and TargetFemale are the sector's figures; HasTarget is
	// false when the targets give none for the level.
	HasTarget    bool         `json:"has_target"`
	TargetMale   Pct          `json:"target_male_pct"`
	TargetFemale Pct          `json:"target_female_pct"`
	Male         *ShareResult `json:"designated_male,omitempty"`
	Female       *ShareResult `json:"designated_female,omitempty"`
	Note         string       `json:"note,omitempty"`
}

// DisabilityCheck is the whole workforce's share of people with
// disabilities in one year against disabilityTarget.
type DisabilityCheck struct {
	Status    SectorStatus `json:"status"`
	Reason    string       `json:"reason,omitempty"`
	Blank     []string     `json:"blank_counters,omitempty"` // counters left blank (unknown) that make it not assessable
	TargetPct Pct          `json:"target_pct"`
	Share     *ShareResult `json:"share,omitempty"` // Count disabled of Of employees over the six occupational levels
}

// SectorYearCheck is one milestone (financial year) of a plan.
type SectorYearCheck struct {
	YearNumber    int                    `json:"year_number"`
	FinancialYear pipeline.FinancialYear `json:"-"`
	Final         bool                   `json:"final"`
	// Baseline: the current workforce (the plan's baseline, form EEA13's
	// workforce profile), measured as a year is, before the milestones.
	Baseline   bool               `json:"baseline,omitempty"`
	Levels     []SectorLevelCheck `json:"levels"`
	Disability DisabilityCheck    `json:"disability"`
}

// MarshalJSON adds the financial year as "2026/27".
func (y SectorYearCheck) MarshalJSON() ([]byte, error) {
	type plain SectorYearCheck
	fy := ""
	if y.FinancialYear != 0 {
		fy = y.FinancialYear.String()
	}
	return json.Marshal(struct {
		FinancialYear string `json:"financial_year"`
		plain
	}{fy, plain(y)})
}

// Label returns the year for people: "2026/27", or "year 2" when the
// financial year is unknown.
func (y SectorYearCheck) Label() string {
	if y.Baseline {
		return "current workforce"
	}
	if y.FinancialYear != 0 {
		return y.FinancialYear.String()
	}
	return fmt.Sprintf("year %d", y.YearNumber)
}

// SectorPlanCheck is one plan measured against its sector's targets.
type SectorPlanCheck struct {
	Source    string              `json:"source"`            // file, or "server"
	Account   string              `json:"account,omitempty"` // configured account, for plans from the service
	PlanID    int64               `json:"plan_id,omitempty"`
	Name      string              `json:"plan_name"`
	Company   pipeline.CompanyIDs `json:"company"`
	StartDate pipeline.Date       `json:"start_date"`
	EndDate   pipeline.Date       `json:"end_date"`
	Sector    string              `json:"sector"`
	Status    SectorStatus        `json:"status"`           // the final year's overall outcome
	Reason    string              `json:"reason,omitempty"` // why the plan as a whole is not assessable
	Notes     []string            `json:"notes,omitempty"`
	Years     []SectorYearCheck   `json:"years"`

	// Assessed and NotAssessed count the final year's figures (levels with
	// a sector target and employees, and the disability share) that could
	// and could not be measured.
	Assessed    int `json:"final_year_assessed"`
	NotAssessed int `json:"final_year_not_assessable"`
}

// Title names the plan for people: `plan 12 "Name"` or `"Name" starting 2025-09-01`.
func (p SectorPlanCheck) Title() string {
	name := p.Name
	if name == "" {
		name = "(no name)"
	}
	switch {
	case p.PlanID != 0:
		return fmt.Sprintf("plan %d %q", p.PlanID, name)
	case !p.StartDate.IsZero():
		return fmt.Sprintf("%q starting %s", name, p.StartDate)
	}
	return fmt.Sprintf("%q", name)
}

// FinalYear returns the final year's check, or nil when the plan has none.
func (p SectorPlanCheck) FinalYear() *SectorYearCheck {
	for i := range p.Years {
		if p.Years[i].Final {
			return &p.Years[i]
		}
	}
	return nil
}

// SectorCheckReport is the result of checking plans against the sector
// targets: what every presentation (table, JSON, CSV, XLSX) renders.
type SectorCheckReport struct {
	Notice        string            `json:"notice"`
	TargetsSource string            `json:"targets_source"`
	Caveat        string            `json:"caveat"`
	Plans         []SectorPlanCheck `json:"plans"`
}

// NewSectorCheckReport returns a report of plans checked against t.
func NewSectorCheckReport(t *SectorTargets, plans []SectorPlanCheck) *SectorCheckReport {
	if plans == nil {
		plans = []SectorPlanCheck{}
	}
	return &SectorCheckReport{Notice: SectorNotice, TargetsSource: t.sourceName(), Caveat: SectorCaveat, Plans: plans}
}

// SectorSummary counts the plans by the outcome of their final year.
type SectorSummary struct {
	Plans, Met, Short, PartlyMet, NotAssessable int
}

// Summary counts the plans by outcome.
func (r *SectorCheckReport) Summary() SectorSummary {
	s := SectorSummary{Plans: len(r.Plans)}
	for _, p := range r.Plans {
		switch p.Status {
		case SectorMet:
			s.Met++
		case SectorShort:
			s.Short++
		case SectorPartlyMet:
			s.PartlyMet++
		default:
			s.NotAssessable++
		}
	}
	return s
}

// SectorOutcome is the outcome of a whole check, which the command's exit
// status reports: only sectorAllMet is a pass.
type SectorOutcome int

// Outcomes of a whole check.
const (
	// sectorAllMet: there are plans, and every final-year figure of every
	// plan was measured and is met.
	sectorAllMet SectorOutcome = iota
	// SectorSomeShort: some final-year figure falls short.
	SectorSomeShort
	// SectorIncomplete: none falls short, but some final-year figures
	// could not be assessed, so the targets are not shown to be met.
	SectorIncomplete
	// SectorNothingAssessed: not one final-year figure of any plan could
	// be assessed.
	SectorNothingAssessed
)

// Outcome returns the outcome of the whole check.
func (r *SectorCheckReport) Outcome() SectorOutcome {
	s := r.Summary()
	switch {
	case s.Short > 0:
		return SectorSomeShort
	case s.Met == 0 && s.PartlyMet == 0:
		return SectorNothingAssessed
	case s.PartlyMet > 0 || s.NotAssessable > 0:
		return SectorIncomplete
	}
	return sectorAllMet
}

// sectorYearInput is one milestone's counters for a check. all and disabled
// hold the counters known (a blank counter is unknown); nil means the year
// has no such target.
type sectorYearInput struct {
	yearNumber    int
	financialYear pipeline.FinancialYear
	all, disabled *pipeline.Counters
}

// CheckPlanSector measures one plan (as a file describes it, or as
// FromServer converts it) against the targets. cat is the counter catalog
// the plan's targets carry: a counter the catalog lacks makes its level not
// assessable; a catalog counter the plan leaves blank (absent from the
// target's Counters) is unknown and does too. The years checked are the
// plan's financial years when its start and end dates are known (the end
// clamped as the service does), else the years its targets give; the last
// one is the final year.
func CheckPlanSector(p *pipeline.InputPlan, cat *pipeline.Catalog, t *SectorTargets) SectorPlanCheck {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	out := SectorPlanCheck{
		PlanID: p.PlanID, Name: p.Name, Company: p.Company,
		StartDate: p.StartDate, EndDate: p.EndDate, Sector: p.Sector,
	}
	if p.Origin.File != "" {
		out.Source = p.Origin.File
	}
	years, notes := planYearInputs(p)
	out.Notes = append(out.Notes, notes...)
	switch {
	case p.Sector == "":
		out.Reason = "the plan has no sector, so no sector targets apply"
	case !t.hasSector(p.Sector):
		out.Reason = fmt.Sprintf("the sector %q has no targets in %s", p.Sector, t.sourceName())
	case len(years) == 0:
		out.Reason = "the plan has no milestones to check"
	}
	if out.Reason != "" {
		out.Status = SectorNotAssessable
		return out
	}
	for _, y := range years {
		yc := SectorYearCheck{YearNumber: y.yearNumber, FinancialYear: y.financialYear}
		for _, level := range SectorLevels {
			yc.Levels = append(yc.Levels, checkLevel(y, level, cat, t, p.Sector))
		}
		yc.Disability = checkDisability(y, cat)
		out.Years = append(out.Years, yc)
	}
	out.Years[len(out.Years)-1].Final = true
	out.Status, out.Assessed, out.NotAssessed = finalStatus(out.Years[len(out.Years)-1])
	if b, ok := baselineInput(p); ok {
		yc := SectorYearCheck{Baseline: true}
		for _, level := range SectorLevels {
			yc.Levels = append(yc.Levels, checkLevel(b, level, cat, t, p.Sector))
		}
		yc.Disability = checkDisability(b, cat)
		out.Years = append([]SectorYearCheck{yc}, out.Years...)
	}
	return out
}

// baselineInput is the plan's current workforce (InputPlan.Baseline) as
// check measures a year, when the files give one.
func baselineInput(p *pipeline.InputPlan) (sectorYearInput, bool) {
	var y sectorYearInput
	for _, t := range p.Baseline {
		if t.Counters.Catalog() == nil {
			continue
		}
		switch t.TargetType {
		case pipeline.TargetAll:
			y.all = &t.Counters
		case pipeline.TargetDisabled:
			y.disabled = &t.Counters
		}
	}
	return y, y.all != nil || y.disabled != nil
}

// finalStatus is short when any assessable figure of the year is short;
// met when none is and every figure is assessable; met where assessable
// when some are not; not assessable when none is. A level the targets give
// no figure for, or with no employees, has nothing to meet and is not
// counted.
func finalStatus(y SectorYearCheck) (status SectorStatus, assessed, notAssessed int) {
	short := false
	count := func(s SectorStatus) {
		switch s {
		case SectorMet:
			assessed++
		case SectorShort:
			assessed++
			short = true
		default:
			notAssessed++
		}
	}
	for _, l := range y.Levels {
		if l.Status == SectorNotAssessable && (!l.HasTarget || (l.Headcount != nil && *l.Headcount == 0)) {
			continue // no figure to meet, or no one at the level to meet it
		}
		count(l.Status)
	}
	count(y.Disability.Status)
	switch {
	case short:
		return SectorShort, assessed, notAssessed
	case assessed == 0:
		return SectorNotAssessable, assessed, notAssessed
	case notAssessed > 0:
		return SectorPartlyMet, assessed, notAssessed
	}
	return SectorMet, assessed, notAssessed
}

// planYearInputs gathers the plan's targets by year.
func planYearInputs(p *pipeline.InputPlan) ([]sectorYearInput, []string) {
	var notes []string
	byYear := map[int]*sectorYearInput{}
	var order []int
	get := func(n int, fy pipeline.FinancialYear) *sectorYearInput {
		y := byYear[n]
		if y == nil {
			y = &sectorYearInput{yearNumber: n, financialYear: fy}
			byYear[n] = y
			order = append(order, n)
		}
		if y.financialYear == 0 {
			y.financialYear = fy
		}
		return y
	}
	startFY := pipeline.FinancialYear(0)
	if !p.StartDate.IsZero() {
		startFY = pipeline.FinancialYearOf(p.StartDate)
	}
	// The plan's own years, when its dates are known.
	if years := pipeline.PlanYears(p.StartDate, pipeline.ClampEnd(p.EndDate)); len(years) > 0 {
		for i, fy := range years {
			get(i+1, fy)
		}
	}
	for _, t := range p.Targets {
		var n int
		var fy pipeline.FinancialYear
		switch {
		case startFY != 0:
			var ok bool
			if n, ok = t.Year(p.StartDate); !ok {
				notes = append(notes, fmt.Sprintf("%s: the %s target's year does not fit the plan's start date; left out", t.Origin, t.TargetType))
				continue
			}
			fy = startFY + pipeline.FinancialYear(n-1)
		case t.FinancialYear != 0:
			// No start date: order by financial year; year numbers are relative.
			fy = t.FinancialYear
			n = int(fy) // renumbered below
		default:
			n = t.YearNumber
		}
		y := get(n, fy)
		if t.Counters.Catalog() == nil {
			continue // no counters at all (the zero Counters): as if absent
		}
		switch t.TargetType {
		case pipeline.TargetAll:
			y.all = &t.Counters
		case pipeline.TargetDisabled:
			y.disabled = &t.Counters
		}
	}
	sort.Ints(order)
	out := make([]sectorYearInput, 0, len(order))
	for _, n := range order {
		out = append(out, *byYear[n])
	}
	if startFY == 0 && len(out) > 0 {
		// Without a start date the year numbers are unknown when only
		// financial years are given: number them in order.
		anyFY := false
		for i := range out {
			if out[i].financialYear != 0 {
				anyFY = true
			}
		}
		if anyFY {
			for i := range out {
				out[i].yearNumber = i + 1
			}
		}
	}
	if len(out) > 0 && (p.StartDate.IsZero() || p.EndDate.IsZero()) {
		notes = append(notes, fmt.Sprintf("the plan's dates are not given, so its last year with figures (%s) is taken as the final year", yearLabel(out[len(out)-1])))
	}
	return out, notes
}

func yearLabel(y sectorYearInput) string {
	if y.financialYear != 0 {
		return y.financialYear.String()
	}
	return fmt.Sprintf("year %d", y.yearNumber)
}

// levelSum sums the counters of a level over every race of the catalog and
// both genders. It reports the standard counters the catalog lacks and the
// catalog counters left blank.
func levelSum(cat *pipeline.Catalog, counters *pipeline.Counters, level string, races []string, genders []string) (sum int64, lacking, blank []string) {
	for _, r := range races {
		for _, g := range genders {
			name, ok := cat.Counter(r, g, level)
			if !ok {
				lacking = append(lacking, name)
				continue
			}
			v, set := counters.ByName(name)
			if !set {
				blank = append(blank, name)
				continue
			}
			sum += v
		}
	}
	return sum, lacking, blank
}

// levelHeadcount sums a level over the five standard races and any further
// race the catalog carries, both genders.
func levelHeadcount(cat *pipeline.Catalog, counters *pipeline.Counters, level string) (sum int64, lacking, blank []string) {
	sum, lacking, blank = levelSum(cat, counters, level, pipeline.Races, pipeline.Genders)
	for _, name := range cat.Names() {
		r, g, l, ok := pipeline.ParseCounterName(name)
		if !ok || l != level || pipeline.Contains(pipeline.Races, r) || !pipeline.Contains(pipeline.Genders, g) {
			continue
		}
		if v, set := counters.ByName(name); set {
			sum += v
		} else {
			blank = append(blank, name)
		}
	}
	return sum, lacking, blank
}

func lackingReason(lacking []string) string {
	return fmt.Sprintf("the counter catalog has no %s", listCounters(lacking))
}

func blankReason(what string, blank []string) string {
	return fmt.Sprintf("%s left blank (unknown): %s", what, listCounters(blank))
}

func listCounters(names []string) string {
	const show = 3
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}

func checkLevel(y sectorYearInput, level string, cat *pipeline.Catalog, t *SectorTargets, sector string) SectorLevelCheck {
	lc := SectorLevelCheck{Level: level, Status: SectorNotAssessable}
	target, ok := t.lookup(sector, level)
	if !ok {
		lc.Reason = fmt.Sprintf("%s gives no target for %s at this level", t.sourceName(), sector)
		return lc
	}
	lc.HasTarget, lc.TargetMale, lc.TargetFemale = true, target.Male, target.Female
	if y.all == nil {
		lc.Reason = "no all_employees figures for this year"
		return lc
	}
	head, lacking, blank := levelHeadcount(cat, y.all, level)
	if len(lacking) > 0 {
		lc.Reason = lackingReason(lacking)
		return lc
	}
	if len(blank) > 0 {
		lc.Reason, lc.Blank = blankReason("counters", blank), blank
		return lc
	}
	lc.Headcount = &head
	if head == 0 {
		lc.Reason = "no employees at this level"
		return lc
	}
	male, _, _ := levelSum(cat, y.all, level, designatedMaleRaces, []string{"male"})
	female, _, _ := levelSum(cat, y.all, level, designatedFemaleRaces, []string{"female"})
	m, f := measureShare(male, head, target.Male), measureShare(female, head, target.Female)
	lc.Male, lc.Female = &m, &f
	lc.Status = SectorMet
	if !m.Met || !f.Met {
		lc.Status = SectorShort
	}
	if m.Needed+f.Needed > head {
		lc.Note = fmt.Sprintf("at a headcount of %d both figures cannot be met together (they need %d designated men and %d designated women)", head, m.Needed, f.Needed)
	}
	return lc
}

func checkDisability(y sectorYearInput, cat *pipeline.Catalog) DisabilityCheck {
	dc := DisabilityCheck{Status: SectorNotAssessable, TargetPct: disabilityTarget}
	if y.all == nil || y.disabled == nil {
		missing := pipeline.TargetAll
		if y.all != nil {
			missing = pipeline.TargetDisabled
		}
		dc.Reason = fmt.Sprintf("no %s figures for this year", missing)
		return dc
	}
	var all, disabled int64
	var lacking, blankAll, blankDis []string
	for _, level := range pipeline.OccupationalLevels {
		a, la, ba := levelHeadcount(cat, y.all, level)
		d, _, bd := levelHeadcount(cat, y.disabled, level)
		all += a
		disabled += d
		lacking = append(lacking, la...)
		blankAll = append(blankAll, ba...)
		blankDis = append(blankDis, bd...)
	}
	switch {
	case len(lacking) > 0:
		dc.Reason = lackingReason(lacking)
		return dc
	case len(blankAll) > 0:
		dc.Reason, dc.Blank = blankReason("all_employees counters", blankAll), blankAll
		return dc
	case len(blankDis) > 0:
		dc.Reason, dc.Blank = blankReason("disabled_employees counters", blankDis), blankDis
		return dc
	case all == 0:
		dc.Reason = "no employees"
		return dc
	}
	s := measureShare(disabled, all, disabilityTarget)
	dc.Share = &s
	dc.Status = SectorMet
	if !s.Met {
		dc.Status = SectorShort
	}
	return dc
}

// CheckSector checks every plan against t with the counter catalog cat (nil
// means the default catalog) and returns the report. Each plan's Source is
// its file; callers set Source and Account for plans from the service.
func CheckSector(plans []*pipeline.InputPlan, cat *pipeline.Catalog, t *SectorTargets) *SectorCheckReport {
	checks := make([]SectorPlanCheck, 0, len(plans))
	for _, p := range plans {
		checks = append(checks, CheckPlanSector(p, cat, t))
	}
	return NewSectorCheckReport(t, checks)
}

// SectorNeed returns the smallest count of a group that meets target at a
// headcount of of, by the check's own arithmetic (measureShare): what
// eepipe propose plans each level to (docs/profile-and-propose.md).
func SectorNeed(target Pct, of int64) int64 { return neededFor(target, of) }

// DisabilityTarget is the share of people with disabilities that every
// sector's workforce should hold (over the six occupational levels).
const DisabilityTarget = disabilityTarget

// DesignatedRaces returns the races whose counters of gender count towards
// the designated-group figures: African, Coloured and Indian men; African,
// Coloured, Indian and white women.
func DesignatedRaces(gender string) []string {
	if gender == "female" {
		return designatedFemaleRaces
	}
	return designatedMaleRaces
}

// LevelTarget returns the sector's designated male and designated female
// figures at a level; ok is false when the targets give none.
func (t *SectorTargets) LevelTarget(sector, level string) (male, female Pct, ok bool) {
	row, ok := t.lookup(sector, level)
	return row.Male, row.Female, ok
}

// HasSector reports whether the targets give any figure for sector.
func (t *SectorTargets) HasSector(sector string) bool { return t.hasSector(sector) }
