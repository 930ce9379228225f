package sample

import (
	"fmt"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// Reconciliation is a reconciliation of the CSV source below: one plan
// differing in two counters and a field, one missing on the server, one
// only on the server.
func Reconciliation(src string) *diff.Reconciliation {
	o := func(line, col int) pipeline.Origin { return pipeline.Origin{File: src, Row: line, Column: col} }
	rec := &diff.Reconciliation{
		Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{src}, Complete: true,
		Plans: []diff.ReconciledPlan{
			{Presence: diff.PresencePresent, Account: "acme", CompanyID: "8ovHrj", PlanID: 17, PlanName: "Acme 2026",
				StartDate: "2026-09-01", EndDate: "2030-08-31", Origin: o(2, 0),
				Fields: []diff.FieldDifference{{Field: "sector", Workbook: "Manufacturing", Server: "Construction"}},
				Targets: []diff.TargetDifference{{YearNumber: 1, FinancialYear: "2026/27", TargetType: "all_employees", MilestoneID: 171, TargetID: 1711,
					Counters: []diff.CounterDifference{
						{Counter: "number_of_african_male_top_managers", Workbook: 5, Server: 7, Location: diff.LocationOf(o(2, 5)), Origin: o(2, 5)},
						{Counter: "number_of_african_female_top_managers", Workbook: 0, Server: 1, Location: diff.LocationOf(o(2, 6)), Origin: o(2, 6)},
					}}}},
			{Presence: diff.PresencePresent, InSync: true, Account: "acme", PlanID: 18, PlanName: "Acme 2027", Origin: o(3, 0),
				Fields: []diff.FieldDifference{}, Targets: []diff.TargetDifference{}},
			{Presence: diff.PresenceMissing, Account: "acme", PlanName: "New", StartDate: "2027-09-01", Origin: o(5, 0),
				Reason: "the service holds no plan \"New\" starting 2027-09-01", Fields: []diff.FieldDifference{}, Targets: []diff.TargetDifference{}},
			{Presence: diff.PresenceOnlyOnServer, Account: "acme", CompanyID: "8ovHrj", PlanID: 21, PlanName: "Old", StartDate: "2025-09-01",
				Reason: "the service holds this plan for the company but the workbook does not describe it"},
		},
	}
	for i := range rec.Plans {
		if o := rec.Plans[i].Origin; o.File != "" {
			l := diff.LocationOf(o)
			rec.Plans[i].Location = &l
		}
	}
	rec.MarkStopped("")
	rec.Complete = true
	rec.Stopped = ""
	return rec
}

const ReconcileCSV = "plan_id;plan_name;start_date;target_type;number_of_african_male_top_managers;number_of_african_female_top_managers;company_vat_number\n" +
	"17;Acme 2026;2026-09-01;all_employees;5;0;0412345678\n" +
	"18;Acme 2027;2027-09-01;all_employees;3;3;0412345678\n" +
	"\n" +
	";New;2027-09-01;all_employees;1;;0412345678\n"

func MarksReconciliation(src string, cells [][2]string) *diff.Reconciliation {
	p := diff.ReconciledPlan{Presence: diff.PresencePresent, Account: "acme", PlanID: 17, PlanName: "Acme 2026",
		Origin: pipeline.Origin{File: src, Sheet: cells[0][0], Row: 1, Column: 1}}
	t := diff.TargetDifference{YearNumber: 1, TargetType: pipeline.TargetAll}
	for i, c := range cells {
		col, row, err := excelize.CellNameToCoordinates(c[1])
		if err != nil {
			panic(err)
		}
		o := pipeline.Origin{File: src, Sheet: c[0], Cell: c[1], Row: row, Column: col}
		t.Counters = append(t.Counters, diff.CounterDifference{Counter: fmt.Sprintf("number_of_counter_%d", i),
			Workbook: int64(i), Server: int64(1000 + i), Origin: o, Location: diff.LocationOf(o)})
	}
	p.Targets = []diff.TargetDifference{t}
	return &diff.Reconciliation{Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{src}, Complete: true, Plans: []diff.ReconciledPlan{p}}
}
