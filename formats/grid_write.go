package formats

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// GridOptions shape a grid workbook.
type GridOptions struct {
	// Instructions adds the Instructions sheet (how to fill in the grids)
	// in front of the plan sheets.
	Instructions bool
	// Title is shown in the first row of every plan sheet; "" = the plan's
	// name.
	Title string
}

// WriteGridXLSX writes plans as a grid workbook (one sheet per plan, see
// AddGridSheets) to path, atomically.
func WriteGridXLSX(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog, opts GridOptions) error {
	f := excelize.NewFile()
	defer f.Close()
	first := f.GetSheetName(0)
	if err := AddGridSheets(f, plans, cat, opts); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if len(plans) > 0 || opts.Instructions {
		if err := f.DeleteSheet(first); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	f.SetActiveSheet(0)
	templates.ActivateFirstVisible(f)
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

// AddGridSheets adds one grid plan sheet per plan to f, in order, named
// after the plan (its name, else "Plan <id>"), unique and valid. Every
// target of a plan becomes one grid, ordered by year and target type; a
// counter the target does not set is a blank cell. It also adds the hidden
// Lists sheet that the sector drop-down uses (templates.ListsSheet), and
// with opts.Instructions the Instructions sheet. Callers may add their own
// sheets before or after.
func AddGridSheets(f *excelize.File, plans []*pipeline.InputPlan, cat *pipeline.Catalog, opts GridOptions) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	st, err := templates.NewStyles(f)
	if err != nil {
		return err
	}
	if opts.Instructions {
		if err := templates.AddInstructionsSheet(f, cat, st); err != nil {
			return err
		}
	}
	for i, p := range plans {
		if err := checkCounters(p, cat); err != nil {
			return err
		}
		name := GridSheetName(p, i, append(f.GetSheetList(), templates.ListsSheet, templates.InstructionsSheet))
		ps := PlanSheetOf(p)
		if opts.Title != "" {
			ps.Title = opts.Title
		}
		if err := templates.AddPlanSheet(f, name, ps, cat, st); err != nil {
			return fmt.Errorf("sheet %s: %w", name, err)
		}
	}
	return nil
}

// GridSheetName returns the sheet name for the i-th plan (0-based): its
// name, else "Plan <id>", else "Plan <i+1>", valid and not among taken.
func GridSheetName(p *pipeline.InputPlan, i int, taken []string) string {
	fallback := "Plan " + strconv.Itoa(i+1)
	if p.PlanID != 0 {
		fallback = "Plan " + strconv.FormatInt(p.PlanID, 10)
	}
	return templates.SheetName(p.Name, fallback, taken)
}

// checkCounters refuses a plan with counters the catalog does not know:
// writing it would silently drop them.
func checkCounters(p *pipeline.InputPlan, cat *pipeline.Catalog) error {
	for _, t := range p.Targets {
		for name := range t.Counters {
			if !cat.Has(name) {
				return fmt.Errorf("%s: counter %s is not in the counter catalog; use a catalog that has it (--catalog)", p.Key(), name)
			}
		}
	}
	return nil
}

// PlanSheetOf lays a plan out as a grid plan sheet: its metadata and one
// grid per target, ordered by year then target type, with the year number
// and financial year both shown when the plan's start date makes one follow
// from the other.
func PlanSheetOf(p *pipeline.InputPlan) templates.PlanSheet {
	ps := templates.PlanSheet{
		Title: p.Name, PlanID: p.PlanID, Name: p.Name, Company: p.Company,
		StartDate: p.StartDate, EndDate: p.EndDate, Sector: p.Sector, ScorecardID: p.ScorecardID,
	}
	for _, t := range sortedTargets(p) {
		y, fy := targetYears(p, t)
		ps.Grids = append(ps.Grids, templates.Grid{YearNumber: y, FinancialYear: fy, TargetType: t.TargetType, Counters: t.Counters})
	}
	return ps
}

// targetYears returns a target's year number and financial year, filling
// the one not given from the other and the plan's start date.
func targetYears(p *pipeline.InputPlan, t *pipeline.InputTarget) (int, pipeline.FinancialYear) {
	y, fy := t.YearNumber, t.FinancialYear
	if !p.StartDate.IsZero() {
		first := pipeline.FinancialYearOf(p.StartDate)
		if y == 0 && fy >= first {
			y = int(fy-first) + 1
		}
		if fy == 0 && y > 0 {
			fy = first + pipeline.FinancialYear(y-1)
		}
	}
	return y, fy
}

// sortedTargets returns the plan's targets by year, then target type.
func sortedTargets(p *pipeline.InputPlan) []*pipeline.InputTarget {
	ts := append([]*pipeline.InputTarget(nil), p.Targets...)
	typeIndex := func(tt string) int {
		for i, s := range pipeline.TargetTypes {
			if s == tt {
				return i
			}
		}
		return len(pipeline.TargetTypes)
	}
	sort.SliceStable(ts, func(i, j int) bool {
		yi, fi := targetYears(p, ts[i])
		yj, fj := targetYears(p, ts[j])
		if yi != yj {
			return yi < yj
		}
		if fi != fj {
			return fi < fj
		}
		return typeIndex(ts[i].TargetType) < typeIndex(ts[j].TargetType)
	})
	return ts
}
