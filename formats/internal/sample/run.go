package sample

import (
	"errors"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// RunReport is a run with a created plan (two rows), a failed plan
// and a recalculation that gave up.
func RunReport() *pipeline.RunReport {
	o := func(row int) pipeline.Origin { return pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Row: row} }
	cell := pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Cell: "J2", Row: 2, Column: 10}
	t1 := &pipeline.InputTarget{Origin: o(2), YearNumber: 1, TargetType: pipeline.TargetAll,
		Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3}), Cells: map[string]pipeline.Origin{"number_of_african_male_top_managers": cell}}
	t2 := &pipeline.InputTarget{Origin: o(3), YearNumber: 2, TargetType: pipeline.TargetDisabled}
	good := &pipeline.InputPlan{Origin: o(2), Name: "Good, \"quoted\"", StartDate: Date("2025-09-01"), Targets: []*pipeline.InputTarget{t1, t2}}
	bad := &pipeline.InputPlan{Origin: o(4), Name: "Bad", StartDate: Date("2026-09-01"),
		Targets: []*pipeline.InputTarget{{Origin: o(4), YearNumber: 1, TargetType: pipeline.TargetAll}}}
	change := pipeline.CounterChange{Name: "number_of_african_male_top_managers", Old: 0, OldKnown: true, New: 3, Origin: cell}
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	return &pipeline.RunReport{
		Started: start, Finished: start.Add(1500 * time.Millisecond),
		Plans: []*pipeline.PlanResult{
			{Diff: &pipeline.PlanDiff{Input: good, Account: "acme", Company: &pipeline.Company{ID: "8ovHrj"}, Action: pipeline.ActionCreate},
				Outcome: pipeline.OutcomeCreated, PlanID: 7, Wrote: true,
				Targets: []pipeline.TargetResult{
					{Diff: pipeline.TargetDiff{Input: t1, YearNumber: 1, FinancialYear: 2025, TargetType: pipeline.TargetAll, MilestoneID: 8, TargetID: 9,
						Changes: []pipeline.CounterChange{change}}, Patched: true},
					{Diff: pipeline.TargetDiff{Input: t2, YearNumber: 2, FinancialYear: 2026, TargetType: pipeline.TargetDisabled, MilestoneID: 10, TargetID: 12}},
				}},
			{Diff: pipeline.Failed(bad, "company not found: no company has VAT 1"), Outcome: pipeline.OutcomeFailed,
				Err: errors.New("company not found: no company has VAT 1")},
		},
		Recalcs:  []*pipeline.RecalcResult{{Account: "acme", ScorecardID: "scorecard_acme_2025", Attempts: 3, Waited: 2 * time.Second, Err: errors.New("still running")}},
		Requests: pipeline.RequestCounts{Total: 5, Writes: 3, ByKind: map[string]int64{"create": 1}},
	}
}
