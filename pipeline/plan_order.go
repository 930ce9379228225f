package pipeline

import "sort"

// TargetYears returns a target's year number and financial year, filling
// the one not given from the other and the plan's start date.
func TargetYears(p *InputPlan, t *InputTarget) (int, FinancialYear) {
	y, fy := t.YearNumber, t.FinancialYear
	if !p.StartDate.IsZero() {
		first := FinancialYearOf(p.StartDate)
		if y == 0 && fy >= first {
			y = int(fy-first) + 1
		}
		if fy == 0 && y > 0 {
			fy = first + FinancialYear(y-1)
		}
	}
	return y, fy
}

// SortedTargets returns the plan's targets in the order every file lists
// them: by year, then target type (in the order of TargetTypes).
func SortedTargets(p *InputPlan) []*InputTarget {
	ts := append([]*InputTarget(nil), p.Targets...)
	typeIndex := func(tt string) int {
		for i, s := range TargetTypes {
			if s == tt {
				return i
			}
		}
		return len(TargetTypes)
	}
	sort.SliceStable(ts, func(i, j int) bool {
		yi, fi := TargetYears(p, ts[i])
		yj, fj := TargetYears(p, ts[j])
		if yi != yj {
			return yi < yj
		}
		if fi != fj {
			return fi < fj
		}
		return typeIndex(ts[i].TargetType) < typeIndex(ts[j].TargetType)
	})
	return ts
}
