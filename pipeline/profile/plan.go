package profile

import (
	"github.com/eepipe/eepipe/pipeline"
)

// DefaultName is the plan name a profile workbook carries when none is
// given. It is not form EEA13's "Workforce profile": the readers read a
// grid headed by those words as a plan's baseline, and the profile is
// read as a plan of one year, which check and propose take as the current
// workforce.
const DefaultName = "Current workforce"

// Plan returns the profile as a plan of one financial year (fy), which the
// plan readers, eepipe check and eepipe propose read: its name, the
// sector when known ("" leaves it blank: check then has no targets to
// measure it against), the year's dates, and the two targets with every
// counter set. It is the current workforce, not a plan to apply.
func (p *Profile) Plan(name, sector string, fy pipeline.FinancialYear) *pipeline.InputPlan {
	if name == "" {
		name = DefaultName
	}
	plan := &pipeline.InputPlan{Name: name, Sector: sector, StartDate: fy.Start(), EndDate: fy.End()}
	for _, tt := range []string{pipeline.TargetAll, pipeline.TargetDisabled} {
		plan.Targets = append(plan.Targets, &pipeline.InputTarget{
			YearNumber: 1, FinancialYear: fy, TargetType: tt, Counters: p.Targets[tt],
		})
	}
	return plan
}
