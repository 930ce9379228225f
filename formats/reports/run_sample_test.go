package reports

import (
	"errors"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
)

// sampleRunReport is a run with a created plan (two rows), a failed plan
// and a recalculation that gave up. It is here, not in formats/internal/sample,
// because only cmd and the reports import pipeline/run (docs/architecture.md).
func sampleRunReport() *run.RunReport {
	o := func(row int) pipeline.Origin { return pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Row: row} }
	cell := pipeline.Origin{File: "in.xlsx", Sheet: "Targets", Cell: "J2", Row: 2, Column: 10}
	t1 := &pipeline.InputTarget{Origin: o(2), YearNumber: 1, TargetType: pipeline.TargetAll,
		Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3}), Cells: map[string]pipeline.Origin{"number_of_african_male_top_managers": cell}}
	t2 := &pipeline.InputTarget{Origin: o(3), YearNumber: 2, TargetType: pipeline.TargetDisabled}
	good := &pipeline.InputPlan{Origin: o(2), Name: "Good, \"quoted\"", StartDate: date("2025-09-01"), Targets: []*pipeline.InputTarget{t1, t2}}
	bad := &pipeline.InputPlan{Origin: o(4), Name: "Bad", StartDate: date("2026-09-01"),
		Targets: []*pipeline.InputTarget{{Origin: o(4), YearNumber: 1, TargetType: pipeline.TargetAll}}}
	change := diff.CounterChange{Name: "number_of_african_male_top_managers", Old: 0, OldKnown: true, New: 3, Origin: cell}
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	return &run.RunReport{
		Started: start, Finished: start.Add(1500 * time.Millisecond),
		Plans: []*run.PlanResult{
			{Diff: &diff.PlanDiff{Input: good, Account: "acme", Company: &pipeline.Company{ID: "8ovHrj"}, Action: diff.ActionCreate},
				Outcome: run.OutcomeCreated, PlanID: 7, Wrote: true,
				Targets: []run.TargetResult{
					{Diff: diff.TargetDiff{Input: t1, YearNumber: 1, FinancialYear: 2025, TargetType: pipeline.TargetAll, MilestoneID: 8, TargetID: 9,
						Changes: []diff.CounterChange{change}}, Patched: true},
					{Diff: diff.TargetDiff{Input: t2, YearNumber: 2, FinancialYear: 2026, TargetType: pipeline.TargetDisabled, MilestoneID: 10, TargetID: 12}},
				}},
			{Diff: diff.Failed(bad, "company not found: no company has VAT 1"), Outcome: run.OutcomeFailed,
				Err: errors.New("company not found: no company has VAT 1")},
		},
		Recalcs:  []*run.RecalcResult{{Account: "acme", ScorecardID: "scorecard_acme_2025", Attempts: 3, Waited: 2 * time.Second, Err: errors.New("still running")}},
		Requests: run.RequestCounts{Total: 5, Writes: 3, ByKind: map[string]int64{"create": 1}},
	}
}
