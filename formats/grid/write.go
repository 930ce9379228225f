package grid

import (
	"fmt"
	"strconv"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// Options shape a grid workbook.
type Options struct {
	// Instructions adds the Instructions sheet (how to fill in the grids)
	// in front of the plan sheets.
	Instructions bool
	// Title is shown in the first row of every plan sheet; "" = the plan's
	// name.
	Title string
}

// Build lays out the grid plan sheets of a workbook: Create adds the
// other sheets (Instructions, those named after the plan sheets, Lists)
// in their final order and tells where the plan sheets go, so that callers
// can still do what walks every worksheet (delete the default sheet, set
// the active sheet, hide a sheet) while the workbook has few; the export
// writes each plan sheet, its part (templates.WritePlanSheetXML) and its
// place in the workbook, itself. excelize's NewSheet lists every sheet to
// find a name, so adding thousands of sheets through it is quadratic.
type Build struct {
	f      *excelize.File
	Plans  []*pipeline.InputPlan
	Cat    *pipeline.Catalog
	Opts   Options
	Styles *templates.Styles
	Names  []string // the plan sheets, one per plan
	// At is the index, in the workbook's sheets as Create leaves them, of
	// the sheet the plan sheets go before (the number of sheets when they
	// go last).
	At int
}

// NewBuild checks the plans against the catalog, registers the
// styles and chooses the sheet names: unique among the sheets of f, the
// names in taken (sheets the caller will add) and the Lists and
// Instructions sheets.
func NewBuild(f *excelize.File, plans []*pipeline.InputPlan, cat *pipeline.Catalog, opts Options, taken []string) (*Build, error) {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	for _, p := range plans {
		if err := templates.CheckCounters(p, cat); err != nil {
			return nil, err
		}
	}
	st, err := templates.NewStyles(f)
	if err != nil {
		return nil, err
	}
	g := &Build{f: f, Plans: plans, Cat: cat, Opts: opts, Styles: st}
	used := templates.NewSheetNames(append(append(f.GetSheetList(), taken...), templates.ListsSheet, templates.InstructionsSheet))
	for i, p := range plans {
		g.Names = append(g.Names, used.Name(p.Name, sheetFallback(p, i)))
	}
	return g, nil
}

// Create adds the Instructions sheet (with opts.Instructions), records
// where the plan sheets go (At), adds the sheets named in after, then the
// hidden Lists sheet last (never between plan sheets), which the plan
// sheets' validations refer to.
func (g *Build) Create(after ...string) error {
	if g.Opts.Instructions {
		if err := templates.AddInstructionsSheet(g.f, g.Cat, g.Styles); err != nil {
			return err
		}
	}
	g.At = len(g.f.GetSheetList())
	for _, name := range after {
		if _, err := g.f.NewSheet(name); err != nil {
			return fmt.Errorf("sheet %s: %w", name, err)
		}
	}
	if len(g.Names) > 0 {
		if _, _, err := templates.EnsureListsSheet(g.f); err != nil {
			return fmt.Errorf("sheet %s: %w", templates.ListsSheet, err)
		}
	}
	return nil
}

// sheetFallback is the i-th plan's sheet name when its name has
// nothing usable: "Plan <id>", else "Plan <i+1>".
func sheetFallback(p *pipeline.InputPlan, i int) string {
	if p.PlanID != 0 {
		return "Plan " + strconv.FormatInt(p.PlanID, 10)
	}
	return "Plan " + strconv.Itoa(i+1)
}

// PlanSheetOf lays a plan out as a grid plan sheet: its metadata and one
// grid per target, ordered by year then target type, with the year number
// and financial year both shown when the plan's start date makes one follow
// from the other.
func PlanSheetOf(p *pipeline.InputPlan) templates.PlanSheet {
	ps := templates.PlanSheet{
		Title: p.Name, PlanID: p.PlanID, Name: p.Name, Company: p.Company,
		StartDate: p.StartDate, EndDate: p.EndDate, Sector: p.Sector, ScorecardID: p.ScorecardID, Account: p.Account,
	}
	for _, t := range pipeline.SortedTargets(p) {
		y, fy := pipeline.TargetYears(p, t)
		ps.Grids = append(ps.Grids, templates.Grid{YearNumber: y, FinancialYear: fy, TargetType: t.TargetType, Counters: t.Counters})
	}
	return ps
}
