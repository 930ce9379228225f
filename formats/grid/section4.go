package grid

import (
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// The EEA13 section 4 layout of a plan (docs/profile-and-propose.md): form
// EEA13's three kinds of numerical table, each for all employees
// (including people with disabilities) and for people with disabilities,
// in the form's wording:
//   - 4.1 Workforce profile, the current workforce (not a target), titled
//     without a year, which the reader takes as the plan's baseline;
//   - 4.2 Numerical goals, the final year's targets, and 4.3 Numerical
//     targets, each earlier year's, each grid titled with its year,
// all on the plan sheet below the plan's details, so the plan reads back
// exactly as its years' targets with the profile as its baseline.

// Section4Sheet is the layout's plan sheet.
const Section4Sheet = "Plan"

// The form's titles of its tables.
const (
	section4All      = "All employees, including people with disabilities"
	section4Disabled = "People with disabilities"
)

// Section4Label returns a grid's title in the layout: "4.3 Numerical
// targets — Year 1 — 2026/27 — All employees, including people with
// disabilities", or "4.2 Numerical goals — ..." for the final year.
func Section4Label(final bool, year int, fy pipeline.FinancialYear, targetType string) string {
	kind := "4.3 Numerical targets"
	if final {
		kind = "4.2 Numerical goals"
	}
	who := section4All
	if targetType == pipeline.TargetDisabled {
		who = section4Disabled
	}
	return fmt.Sprintf("%s — Year %d — %s — %s", kind, year, fy, who)
}

// WriteSection4 writes a plan (its targets, every year) and the workforce
// profile it starts from (the two targets' counters) to path, atomically,
// in the EEA13 section 4 layout; the sheet prints on A4.
func WriteSection4(path string, p *pipeline.InputPlan, profileAll, profileDisabled pipeline.Counters) error {
	ps := PlanSheetOf(p)
	ps.Title = "Employment Equity plan: numerical goals and targets (form EEA13, section 4)"
	last := 0
	for _, g := range ps.Grids {
		last = max(last, g.YearNumber)
	}
	for i := range ps.Grids {
		g := &ps.Grids[i]
		g.Label = Section4Label(g.YearNumber == last, g.YearNumber, g.FinancialYear, g.TargetType)
	}
	// 4.1 first, above the goals and targets on the plan sheet, so that the
	// plan reads back with it as its baseline (never a target).
	ps.Grids = append([]templates.Grid{
		{TargetType: pipeline.TargetAll, Counters: profileAll, Label: "4.1 Workforce profile — " + section4All},
		{TargetType: pipeline.TargetDisabled, Counters: profileDisabled, Label: "4.1 Workforce profile — " + section4Disabled},
	}, ps.Grids...)
	return writeSheetFile(path, Section4Sheet, p, ps)
}
