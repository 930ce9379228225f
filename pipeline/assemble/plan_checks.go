package assemble

import (
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"sort"
	"strconv"
	"strings"
)

// asmSlot is a target's place in its plan, to find targets given twice.
type asmSlot struct {
	fy   bool // year is a financial year, not a year number
	year int
	tt   string
}

// finishPlan runs the checks of one whole plan: its dates (checkDates),
// each target's year against them (keepTargets), the targets' order, and
// the warnings of a plan that may be new and of its counters.
func (a *Assembler) finishPlan(acc *asmPlan) {
	p := acc.plan // (its fieldPlaces are set as the rows are read)
	datesOK := a.checkDates(acc)
	var years []pipeline.FinancialYear
	if datesOK && !p.StartDate.IsZero() && !p.EndDate.IsZero() {
		years = pipeline.PlanYears(p.StartDate, pipeline.ClampEnd(p.EndDate))
	}
	a.keepTargets(acc, years)
	sort.SliceStable(p.Targets, func(i, j int) bool {
		ti, tj := p.Targets[i], p.Targets[j]
		if yi, yj := asmSortYear(ti), asmSortYear(tj); yi != yj {
			return yi < yj
		}
		return asmTypeIndex(ti.TargetType) < asmTypeIndex(tj.TargetType)
	})
	if p.PlanID == 0 && datesOK {
		a.skippedYearsWarning(p)
	}
	a.domainWarnings(p)
}

// checkDates checks the plan's dates: a new plan's are required, the
// start no earlier and the end no later than the service allows. It
// reports false when the end is before the start.
func (a *Assembler) checkDates(acc *asmPlan) bool {
	p := acc.plan
	if p.PlanID == 0 {
		if p.StartDate.IsZero() {
			a.errorf(p.Origin, "", "%s is a new plan (no plan_id), so it needs start_date (YYYY-MM-DD)", asmPlanLabel(p))
		}
		if p.EndDate.IsZero() && !acc.endBad { // an invalid end_date is reported at its cell, once
			a.errorf(p.Origin, "", "%s is a new plan (no plan_id), so it needs end_date (YYYY-MM-DD)", asmPlanLabel(p))
		}
	}
	if !p.StartDate.IsZero() && p.StartDate.Before(pipeline.EarliestStart) {
		a.errorf(a.fieldOrigin(acc, pipeline.ColStartDate), p.StartDate.String(), "start_date %s is before %s, the earliest start the service accepts", p.StartDate, pipeline.EarliestStart)
	}
	if !p.EndDate.IsZero() && p.EndDate.After(pipeline.LatestEnd) {
		a.warnf(a.fieldOrigin(acc, pipeline.ColEndDate), p.EndDate.String(), "end_date %s is after %s; the service will clamp the plan's end to %s", p.EndDate, pipeline.LatestEnd, pipeline.LatestEnd)
	}
	if !p.StartDate.IsZero() && !p.EndDate.IsZero() && p.EndDate.Before(p.StartDate) {
		a.errorf(a.fieldOrigin(acc, pipeline.ColEndDate), p.EndDate.String(), "end_date %s is before start_date %s", p.EndDate, p.StartDate)
		return false
	}
	return true
}

// keepTargets sets the plan's targets to those of acc.targets whose year
// fits the plan's financial years (years, nil when the dates do not give
// them), each with both its year number and financial year, and each
// plan, year and target type once.
func (a *Assembler) keepTargets(acc *asmPlan, years []pipeline.FinancialYear) {
	p := acc.plan
	first := pipeline.FinancialYear(0)
	if !p.StartDate.IsZero() {
		first = pipeline.FinancialYearOf(p.StartDate)
	}
	if a.slots == nil {
		a.slots = map[asmSlot]*pipeline.InputTarget{}
	}
	clear(a.slots) // one map for every plan: its buckets are reused
	seen := a.slots
	// The plan's targets are the ones kept of acc.targets, filtered in
	// place: the array is the plan's, allocated once.
	p.Targets = acc.targets[:0:len(acc.targets)]
	for _, t := range acc.targets {
		if !a.targetYearFits(p, t, first, years) {
			continue
		}
		if first != 0 {
			if t.YearNumber == 0 {
				t.YearNumber = int(t.FinancialYear-first) + 1
			}
			if t.FinancialYear == 0 {
				t.FinancialYear = first + pipeline.FinancialYear(t.YearNumber-1)
			}
		}
		var s asmSlot
		if t.YearNumber != 0 {
			s = asmSlot{false, t.YearNumber, t.TargetType}
		} else {
			s = asmSlot{true, int(t.FinancialYear), t.TargetType}
		}
		if prev, dup := seen[s]; dup {
			a.errorf(t.Origin, "", "%s, year %s, %s appears twice: at %s and again here; keep one row for each plan, year and target type", asmPlanLabel(p), asmYearLabel(t), t.TargetType, asmRef(prev.Origin, t.Origin))
			continue
		}
		seen[s] = t
		p.Targets = append(p.Targets, t)
	}
	clear(acc.targets[len(p.Targets):]) // the targets not kept are not held
}

// targetYearFits reports whether target t's year agrees with itself and
// lies inside plan p (first is the plan's first financial year, 0 when it
// has no start date; years its financial years), reporting why not.
func (a *Assembler) targetYearFits(p *pipeline.InputPlan, t *pipeline.InputTarget, first pipeline.FinancialYear, years []pipeline.FinancialYear) bool {
	if first != 0 && t.YearNumber != 0 && t.FinancialYear != 0 {
		want := first + pipeline.FinancialYear(t.YearNumber-1)
		if want != t.FinancialYear {
			_, fy := a.yearPlaces(t)
			a.errorf(fy.Origin(t.Origin.Row), fy.Raw, "year_number %d and financial_year %s disagree: for a plan starting %s, year %d is %s", t.YearNumber, t.FinancialYear, p.StartDate, t.YearNumber, want)
			return false
		}
	}
	span := func() string {
		return fmt.Sprintf("the plan from %s to %s has %s (%s to %s)", p.StartDate, pipeline.ClampEnd(p.EndDate), pipeline.Plural(len(years), "financial year"), years[0], years[len(years)-1])
	}
	switch {
	case len(years) > 0 && t.YearNumber > len(years):
		year, _ := a.yearPlaces(t)
		a.errorf(year.Origin(t.Origin.Row), year.Raw, "year_number %d is outside the plan: %s", t.YearNumber, span())
		return false
	case len(years) > 0 && t.FinancialYear != 0 && (t.FinancialYear < years[0] || t.FinancialYear > years[len(years)-1]):
		_, fy := a.yearPlaces(t)
		a.errorf(fy.Origin(t.Origin.Row), fy.Raw, "financial_year %s is outside the plan: %s", t.FinancialYear, span())
		return false
	case len(years) == 0 && first != 0 && t.FinancialYear != 0 && t.FinancialYear < first:
		_, fy := a.yearPlaces(t)
		a.errorf(fy.Origin(t.Origin.Row), fy.Raw, "financial_year %s is before the plan's first financial year %s (the plan starts %s)", t.FinancialYear, first, p.StartDate)
		return false
	}
	return true
}

// skippedYearsWarning warns when a plan without plan_id, which may be new,
// skips a financial year inside its dates (skippedYears): were it created,
// the service would fill the year itself. Only diff and apply know whether
// the plan is on the service; they note it for the plans they create.
func (a *Assembler) skippedYearsWarning(p *pipeline.InputPlan) {
	skipped := pipeline.SkippedYears(p)
	if len(skipped) == 0 {
		return
	}
	years, fill := pipeline.SkippedYearsText(p, skipped)
	all := pipeline.PlanYears(p.StartDate, pipeline.ClampEnd(p.EndDate))
	a.warnf(p.Origin, "", "%s skips %s: its rows give years %s of the plan's %s (%s to %s). "+
		"If the plan is new (no plan on the service has its name and start date), the service fills the skipped %s %s; "+
		"add the rows if that is not meant",
		asmPlanLabel(p), years, pipeline.GivenYearsText(p), pipeline.Plural(len(all), "financial year"), all[0], all[len(all)-1],
		pipeline.PluralNoun(len(skipped), "year", "years"), fill)
	a.Problems[len(a.Problems)-1].Code = pipeline.CodeSkippedYears
}

func asmYearLabel(t *pipeline.InputTarget) string {
	switch {
	case t.YearNumber != 0 && t.FinancialYear != 0:
		return fmt.Sprintf("%d (%s)", t.YearNumber, t.FinancialYear)
	case t.YearNumber != 0:
		return strconv.Itoa(t.YearNumber)
	}
	return t.FinancialYear.String()
}

func asmSortYear(t *pipeline.InputTarget) int {
	if t.YearNumber != 0 {
		return t.YearNumber
	}
	return int(t.FinancialYear)
}

func asmTypeIndex(tt string) int {
	for i, v := range pipeline.TargetTypes {
		if v == tt {
			return i
		}
	}
	return len(pipeline.TargetTypes)
}

// domainWarnings warns about disabled counters above the matching
// all_employees counters, and totals that disagree with their parts.
// p.Targets is sorted by year, so the targets of one year are adjacent.
func (a *Assembler) domainWarnings(p *pipeline.InputPlan) {
	for _, t := range p.Targets {
		a.TotalWarnings(t)
	}
	names := a.cat.Names()
	for i, t := range p.Targets {
		if t.TargetType != pipeline.TargetDisabled {
			continue
		}
		// The year's all_employees target; the last one when there were several.
		var all *pipeline.InputTarget
		y := asmSortYear(t)
		for j := i; j >= 0 && asmSortYear(p.Targets[j]) == y; j-- {
			if u := p.Targets[j]; u.TargetType == pipeline.TargetAll && all == nil {
				all = u
			}
		}
		for j := i + 1; j < len(p.Targets) && asmSortYear(p.Targets[j]) == y; j++ {
			if u := p.Targets[j]; u.TargetType == pipeline.TargetAll {
				all = u
			}
		}
		if all == nil {
			continue
		}
		td, ad := t.Counters.D, all.Counters.D
		fast := td != nil && ad != nil && td.Cat == ad.Cat && td.Small != nil && ad.Small != nil
		for i, name := range names {
			// Where both are laid out by one catalog in 32-bit values,
			// the usual case (not set in both, or not above) is seen
			// without Get.
			if fast && (td.Set[i>>6]&ad.Set[i>>6]&(uint64(1)<<(uint(i)&63)) == 0 || td.Small[i] <= ad.Small[i]) {
				continue
			}
			d, okD := t.Counters.Get(i)
			if !okD {
				continue
			}
			n, okA := all.Counters.Get(i)
			if okA && d > n {
				a.warnKind("disabled above all employees", t.CellOf(name), strconv.FormatInt(d, 10), "%s for disabled_employees (%d) is above the same counter for all_employees (%d, at %s); disabled employees are part of all employees", name, d, n, asmRef(all.CellOf(name), t.CellOf(name)))
			}
		}
	}
}

func (a *Assembler) TotalWarnings(t *pipeline.InputTarget) {
	// Targets read here have the Assembler's catalog; look counters up by
	// their index in it rather than by name.
	c := t.Counters
	if c.Catalog() != a.cat {
		c, _ = pipeline.CountersIn(a.cat, c.Map()) // (not reached: Add makes every target's counters)
	}
	get := func(_ string, i int) (int64, bool) {
		if i < 0 {
			return 0, false
		}
		return c.Get(i)
	}
	for i := range a.totals {
		tn := &a.totals[i]
		total, totalSet := get(tn.total, tn.totalI)
		sum, complete := int64(0), tn.levels != nil
		for j, name := range tn.levels {
			v, set := get(name, tn.levelsI[j])
			if !set {
				complete = false
				break
			}
			sum += v
		}
		if tn.hasTotal && totalSet && complete && sum != total {
			a.warnKind("total permanent employees not the sum of the levels", t.CellOf(tn.total), strconv.FormatInt(total, 10), "%s is %d, but the six occupational levels for %s %s add up to %d", tn.total, total, tn.race, tn.gender, sum)
		}
		grand, grandSet := get(tn.grand, tn.grandI)
		temp, tempSet := get(tn.temp, tn.tempI)
		if tn.hasGrand && tn.hasTemp && tn.hasTotal && grandSet && tempSet && totalSet && grand != total+temp {
			a.warnKind("grand total not permanent plus temporary employees", t.CellOf(tn.grand), strconv.FormatInt(grand, 10), "%s is %d, but total permanent (%d) plus temporary (%d) employees for %s %s is %d", tn.grand, grand, total, temp, tn.race, tn.gender, total+temp)
		}
	}
}

// missingCompany says where a plan without a company identifier should
// name one and what to fill in. On a grid sheet that is the company block
// the reader found (companyCell, "A6:B8": the "Company VAT number",
// "Company registration number" and "Company ID number" labels and the
// value cells beside them); in a table, the company columns of the plan's
// row.
func MissingCompany(p *pipeline.InputPlan) (pipeline.Origin, string) {
	c := p.CompanyCell
	if c.Cell == "" {
		return p.Origin, "fill in company_vat_number, company_registration_number or company_id_number"
	}
	from, to, isRange := strings.Cut(c.Cell, ":")
	lc, lr, ok1 := cellCoordinates(from)
	vc, vr, ok2 := cellCoordinates(to)
	switch {
	case !isRange || !ok1 || !ok2 || vc != lc+1 || vr < lr:
		return c, fmt.Sprintf("fill in the cell beside the label %q, %q or %q on sheet %s",
			"Company VAT number", "Company registration number", "Company ID number", c.Sheet)
	case vr == lr:
		return c, fmt.Sprintf("fill in %s, beside the company label in %s (or the cell beside another of the labels %q, %q and %q)",
			to, from, "Company VAT number", "Company registration number", "Company ID number")
	default:
		return c, fmt.Sprintf("fill in the company's VAT number, registration number or ID number in the value cells %s, beside the labels %q, %q and %q in %s",
			pipeline.CellRef(vc, lr)+":"+pipeline.CellRef(vc, vr), "Company VAT number", "Company registration number", "Company ID number", pipeline.CellRef(lc, lr)+":"+pipeline.CellRef(lc, vr))
	}
}

// asmPlanLabel names a plan in messages: its id, or its name with the
// company and start date when known.
func asmPlanLabel(p *pipeline.InputPlan) string {
	if p.PlanID != 0 {
		return fmt.Sprintf("plan %d", p.PlanID)
	}
	s := fmt.Sprintf("plan %q", pipeline.Excerpt(p.Name))
	if !p.StartDate.IsZero() {
		s += " starting " + p.StartDate.String()
	}
	if !p.Company.IsZero() {
		s += " of company " + p.Company.String()
	}
	return s
}
