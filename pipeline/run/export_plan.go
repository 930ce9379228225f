package run

import "github.com/eepipe/eepipe/pipeline"

// exportedPlan is a stored plan as an export writes it: FromServer, with
// the configured account's name (the account column and grid label; ""
// leaves it out) and the totals that disagree with their parts left blank.
//
// How totals travel: a total is written only when it agrees with its
// parts as the service holds them: total_permanent_employees with the sum
// of the six occupational levels, grand_total_employees with that sum plus
// temporary_employees (for each race and gender). A total the service
// holds otherwise (typically 0 beside non-zero levels, when nothing
// computed it) is written blank, and a blank cell means "leave the
// service's value as it is". So re-importing an unchanged export sends
// nothing and warns of nothing, while a workbook whose written totals
// disagree with its levels is still warned about.
func exportedPlan(p *pipeline.Plan, company pipeline.CompanyIDs, account string) *pipeline.InputPlan {
	in := pipeline.FromServer(p, company)
	in.Account = account
	for _, t := range in.Targets {
		blankDisagreeingTotals(&t.Counters)
	}
	return in
}

// blankDisagreeingTotals deletes from counters the totals that disagree
// with their parts (see exportedPlan) and returns their names.
func blankDisagreeingTotals(counters *pipeline.Counters) []string {
	del := func(name string) {
		if i := counters.Catalog().IndexOf(name); i >= 0 {
			counters.Clear(i)
		}
	}
	var out []string
	for _, race := range pipeline.Races {
		for _, gender := range pipeline.Genders {
			sum, complete := int64(0), true
			for _, level := range pipeline.OccupationalLevels {
				v, ok := counters.ByName(pipeline.CounterName(race, gender, level))
				if !ok {
					complete = false
					break
				}
				sum += v
			}
			totalName := pipeline.CounterName(race, gender, "total_permanent_employees")
			total, hasTotal := counters.ByName(totalName)
			if hasTotal && complete && total != sum {
				del(totalName)
				out = append(out, totalName)
			}
			grandName := pipeline.CounterName(race, gender, "grand_total_employees")
			grand, hasGrand := counters.ByName(grandName)
			temp, hasTemp := counters.ByName(pipeline.CounterName(race, gender, "temporary_employees"))
			if !hasGrand || !hasTemp {
				continue
			}
			switch {
			case complete && grand != sum+temp:
				del(grandName)
				out = append(out, grandName)
			case !complete && hasTotal && grand != total+temp:
				del(grandName)
				out = append(out, grandName)
			}
		}
	}
	return out
}
