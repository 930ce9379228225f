package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// skippedYears returns the financial years a plan's rows skip: the years of
// the plan's dates (PlanYears, the end clamped as the service clamps it)
// that no row of the plan gives, between the first and the last year its
// rows give (a file with years 1, 2, 4 and 5 of a five-year plan skips
// year 3). Years before the first or after the last year given are not
// skipped: the file plans fewer years. nil when the plan's dates are not
// both known or nothing is skipped.
//
// A new plan gets a milestone for every year of its dates, so the service
// fills a skipped year itself, from the scorecard's workforce (prefill) or
// with zeros: the assembler warns of it for a plan without plan_id (it may
// be new), and Diff notes it for a plan it creates.
func SkippedYears(p *InputPlan) []FinancialYear {
	years := PlanYears(p.StartDate, ClampEnd(p.EndDate))
	if len(years) < 3 {
		return nil
	}
	first := years[0]
	given := make([]bool, len(years))
	lo, hi := len(years), -1
	for _, t := range p.Targets {
		fy := t.FinancialYear
		if fy == 0 && t.YearNumber > 0 {
			fy = first + FinancialYear(t.YearNumber-1)
		}
		i := int(fy - first)
		if fy == 0 || i < 0 || i >= len(years) {
			continue
		}
		given[i] = true
		lo, hi = min(lo, i), max(hi, i)
	}
	var out []FinancialYear
	for i := lo + 1; i < hi; i++ {
		if !given[i] {
			out = append(out, years[i])
		}
	}
	return out
}

// skippedYearsText describes the years skippedYears found for p, and how
// the service fills them, for a warning or a note: "year 3 (2027/28)",
// "years 3 (2027/28) and 4 (2028/29)".
func SkippedYearsText(p *InputPlan, skipped []FinancialYear) (years, fill string) {
	first := FinancialYearOf(p.StartDate)
	parts := make([]string, len(skipped))
	for i, fy := range skipped {
		parts[i] = fmt.Sprintf("%d (%s)", int(fy-first)+1, fy)
	}
	years = "year " + parts[0]
	if len(parts) > 1 {
		years = "years " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	fill = "with zeros (the plan names no scorecard to prefill from)"
	if p.ScorecardID != "" {
		fill = "from scorecard " + p.ScorecardID + "'s workforce (prefill)"
	}
	return years, fill
}

// givenYearsText lists the year numbers p's rows give: "1, 2, 4 and 5".
func GivenYearsText(p *InputPlan) string {
	first := FinancialYearOf(p.StartDate)
	var nums []int
	for _, t := range p.Targets {
		n := t.YearNumber
		if n == 0 && t.FinancialYear != 0 {
			n = int(t.FinancialYear-first) + 1
		}
		if n > 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
