package sample

import (
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

func sectorCounters(t testing.TB, set map[string]int64) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, n := range pipeline.DefaultCatalog().Names() {
		m[n] = 0
	}
	for k, v := range set {
		if !pipeline.DefaultCatalog().Has(pipeline.CounterPrefix + k) {
			t.Fatalf("unknown counter %s", k)
		}
		m[pipeline.CounterPrefix+k] = v
	}
	return m
}

// SectorReport is a hand-made report: a Manufacturing plan short in
// its first year and meeting the targets in its final year, a plan with no
// sector, and an Education plan short in its final year with a blank
// counter at one level.
func SectorReport(t testing.TB) *sector.SectorCheckReport {
	t.Helper()
	// Manufacturing: top 24.1/25.0, senior 32.4/33.6, middle 40.4/37.7, junior 49.8/39.6.
	year1 := sectorCounters(t, map[string]int64{
		"african_male_top_managers": 1, "white_male_top_managers": 3, // 25% male designated, 0% female: short
		"african_male_senior_managers": 4, "african_female_senior_managers": 4, "white_male_senior_managers": 2,
		"indian_male_middle_managers": 9, "coloured_female_middle_managers": 8, "foreign_male_middle_managers": 3,
		"african_male_junior_managers": 50, "white_female_junior_managers": 40, "white_male_junior_managers": 10,
		"african_male_semi_skilled_employees": 400, "african_female_unskilled_employees": 300,
	})
	year2 := sectorCounters(t, map[string]int64{
		"african_male_top_managers": 1, "white_female_top_managers": 1, "white_male_top_managers": 2,
		"african_male_senior_managers": 4, "african_female_senior_managers": 4, "white_male_senior_managers": 2,
		"indian_male_middle_managers": 9, "coloured_female_middle_managers": 8, "foreign_male_middle_managers": 3,
		"african_male_junior_managers": 50, "white_female_junior_managers": 40, "white_male_junior_managers": 10,
		"african_male_semi_skilled_employees": 400, "african_female_unskilled_employees": 300,
	})
	dis := sectorCounters(t, map[string]int64{"african_male_semi_skilled_employees": 30})
	manufacturing := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "plans.xlsx"},
		PlanID: 12, Name: "Acme 2025-2027", Sector: "Manufacturing",
		Company:   pipeline.CompanyIDs{VAT: "4012345678"},
		StartDate: Date("2025-09-01"), EndDate: Date("2027-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year1)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
			{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year2)},
			{YearNumber: 2, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
		},
	}
	noSector := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "plans.xlsx"}, Name: "No sector",
		StartDate: Date("2025-09-01"), EndDate: Date("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(year1)}},
	}
	blank := sectorCounters(t, map[string]int64{"african_male_junior_managers": 10, "white_male_junior_managers": 10})
	delete(blank, "number_of_indian_female_top_managers")
	education := &pipeline.InputPlan{
		Origin: pipeline.Origin{File: "more.csv"}, Name: "Blue Crane", Sector: "Education",
		StartDate: Date("2026-09-01"), EndDate: Date("2027-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(blank)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(sectorCounters(t, nil))},
		},
	}
	return sector.CheckSector([]*pipeline.InputPlan{manufacturing, noSector, education}, nil, sector.DefaultSectorTargets())
}
