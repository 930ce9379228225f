package sample

import (
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// Plan is a two-year plan with every counter set.
func Plan() *pipeline.InputPlan {
	p := &pipeline.InputPlan{
		Company: pipeline.CompanyIDs{VAT: "0412345678", Registration: "2009/012345/07"},
		Name:    "Acme EE plan", StartDate: Date("2026-09-01"), EndDate: Date("2028-08-31"),
		Sector: "Manufacturing", ScorecardID: "scorecard_acme_2026",
	}
	for y := 1; y <= 2; y++ {
		for ti, tt := range pipeline.TargetTypes {
			t := &pipeline.InputTarget{YearNumber: y, FinancialYear: pipeline.FinancialYear(2025 + y), TargetType: tt, Counters: pipeline.CountersOf(map[string]int64{})}
			for i, n := range pipeline.DefaultCatalog().Names() {
				t.Counters.Put(n, int64(1000*y+100*ti+i))
			}
			p.Targets = append(p.Targets, t)
		}
	}
	return p
}

// StoredPlan returns a stored plan with every counter set.
func StoredPlan(id int64, name, start string, years int) *pipeline.Plan {
	p := &pipeline.Plan{ID: id, Name: name, StartDate: Date(start), EndDate: pipeline.LatestEnd,
		Era: pipeline.EraPost2025, Sector: "Manufacturing", UpdatedAt: "2026-11-01T10:00:00Z"}
	fy0 := pipeline.FinancialYearOf(p.StartDate)
	for y := 1; y <= years; y++ {
		fy := fy0 + pipeline.FinancialYear(y-1)
		m := pipeline.Milestone{ID: id*100 + int64(y), YearNumber: y, StartDate: fy.Start(), EndDate: fy.End()}
		for k, tt := range pipeline.TargetTypes {
			c := map[string]int64{}
			for i, n := range pipeline.DefaultCatalog().Names() {
				c[n] = int64((i*7 + y*3 + k + int(id)) % 13)
			}
			m.Targets = append(m.Targets, pipeline.Target{ID: m.ID*10 + int64(k), TargetType: tt, Counters: pipeline.CountersOf(c)})
		}
		p.Milestones = append(p.Milestones, m)
	}
	return p
}

const SetService = "http://127.0.0.1:8080"

var SetKeys = savedset.SetKeys{"acme": savedset.NewSetKey("acme", "8ovHrj", "mpk_acme_key_0001", "acme-secret")}

func SetInputPlan() *pipeline.InputPlan {
	return &pipeline.InputPlan{Name: "Acme", StartDate: Date("2025-09-01"), EndDate: Date("2030-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: "all_employees",
			Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 1})}}}
}

func SetStoredPlan() *pipeline.Plan {
	return &pipeline.Plan{ID: 17, Name: "Acme", StartDate: Date("2025-09-01"), EndDate: Date("2030-08-31"),
		Milestones: []pipeline.Milestone{{ID: 170, YearNumber: 1, StartDate: Date("2025-09-01"), Targets: []pipeline.Target{
			{ID: 1700, TargetType: "all_employees", Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 9})}}}}}
}

// Plans returns n five-year plans with every counter set: 10 rows of
// the flat table each.
func Plans(n int) []*pipeline.InputPlan {
	plans := make([]*pipeline.InputPlan, n)
	for i := range plans {
		p := Plan()
		p.Name = fmt.Sprintf("Plan %d", i)
		p.EndDate = Date("2030-08-31")
		base := p.Targets
		for y := 3; y <= 5; y++ {
			for _, t := range base[:2] {
				c := *t
				c.YearNumber, c.FinancialYear = y, pipeline.FinancialYear(2025+y)
				p.Targets = append(p.Targets, &c)
			}
		}
		plans[i] = p
	}
	return plans
}

// Date is a shorthand for a date literal; it panics on a bad one.
func Date(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
