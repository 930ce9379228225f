package pipeline

// FromServer converts a stored plan (with milestones) into the file model,
// with every counter set, so that writers can export it and a re-import
// targets the same plan: the plan id and the company identifiers are kept.
func FromServer(p *Plan, company CompanyIDs) *InputPlan {
	in := &InputPlan{
		PlanID:      p.ID,
		Company:     company,
		Name:        p.Name,
		StartDate:   p.StartDate,
		EndDate:     p.EndDate,
		Sector:      p.Sector,
		ScorecardID: p.ScorecardID,
	}
	for _, m := range p.Milestones {
		fy := FinancialYearOf(m.StartDate)
		if m.StartDate.IsZero() && !p.StartDate.IsZero() {
			fy = FinancialYearOf(p.StartDate) + FinancialYear(m.YearNumber-1)
		}
		for _, t := range m.Targets {
			in.Targets = append(in.Targets, &InputTarget{
				YearNumber:    m.YearNumber,
				FinancialYear: fy,
				TargetType:    t.TargetType,
				Counters:      t.Counters.Clone(),
			})
		}
	}
	return in
}
