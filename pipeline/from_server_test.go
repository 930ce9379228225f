package pipeline

import "testing"

func TestFromServer(t *testing.T) {
	p := &Plan{
		ID: 7, Name: "P", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2027-08-31"), Sector: "Construction",
		Milestones: []Milestone{
			{ID: 1, YearNumber: 1, StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"), Targets: []Target{
				{ID: 11, TargetType: TargetAll, Counters: CountersOf(map[string]int64{"number_of_african_male_top_managers": 3})},
				{ID: 12, TargetType: TargetDisabled, Counters: CountersOf(map[string]int64{"number_of_african_male_top_managers": 0})},
			}},
			{ID: 2, YearNumber: 2, StartDate: mustDate("2026-09-01"), EndDate: mustDate("2027-08-31"), Targets: []Target{
				{ID: 21, TargetType: TargetAll, Counters: CountersOf(map[string]int64{"number_of_african_male_top_managers": 4})},
			}},
		},
	}
	in := FromServer(p, CompanyIDs{VAT: "0123"})
	if in.PlanID != 7 || in.Company.VAT != "0123" || in.Sector != "Construction" || len(in.Targets) != 3 {
		t.Fatalf("unexpected %+v", in)
	}
	last := in.Targets[2]
	if last.YearNumber != 2 || last.FinancialYear != 2026 || last.Counters.Map()["number_of_african_male_top_managers"] != 4 {
		t.Fatalf("unexpected target %+v", last)
	}
	p.Milestones[1].Targets[0].Counters.Put("number_of_african_male_top_managers", 9)
	if last.Counters.Map()["number_of_african_male_top_managers"] != 4 {
		t.Fatal("counters are shared with the server plan")
	}
	if n, ok := last.Year(in.StartDate); !ok || n != 2 {
		t.Fatalf("Year = %d %v", n, ok)
	}
}
