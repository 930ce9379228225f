package grid

import (
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// The sections of form EEA13 (docs/formats.md, EEA13 sections): a
// "Numerical targets" grid is its year's targets; a "Numerical goals" grid
// is the targets of the plan's final year (the financial year holding its
// end date), and agrees with that year's targets grid when the sheet has
// one; a "Workforce profile" grid is the current workforce (the baseline),
// never a target.

// targetGrids counts the grids of blocks that hold targets (goals and
// numerical targets, not a workforce profile).
func targetGrids(blocks []*block) int {
	n := 0
	for _, b := range blocks {
		if b.label.section != sectionProfile {
			n++
		}
	}
	return n
}

// baseline reports a workforce profile grid: read as the baseline (its
// record marked pipeline.SectionBaseline, its counters checked as
// counters are), never written.
func (g *sheetReader) baseline(b *block) {
	g.warnf(b.label.row, b.label.col, g.text.at(b.label.row, b.label.col),
		"this grid is form EEA13's workforce profile: it is read as the baseline (the current workforce), never written as a target; eepipe check reports it as the current workforce")
}

// placeGoals gives each grid of numerical goals its financial year, the
// plan's final one (the year holding its end date, as the service clamps
// it), and compares it with the numerical targets grid of that year and
// target type when the sheet has one: each differing cell is an error
// naming both cells, and the goals grid is not read again (the targets
// grid carries the year). A goals grid alone is read as the final year's
// targets.
func (g *sheetReader) placeGoals(blocks []*block, meta map[string]pipeline.Cell) {
	start, _ := metaDate(meta, pipeline.ColStartDate)
	end, hasEnd := metaDate(meta, pipeline.ColEndDate)
	for _, b := range blocks {
		l := &b.label
		if l.section != sectionGoals || l.unclear {
			continue
		}
		text := g.text.at(l.row, l.col)
		named, hasNamed := labelYear(*l, start)
		var final pipeline.FinancialYear
		switch {
		case hasEnd:
			final = pipeline.FinancialYearOf(pipeline.ClampEnd(end))
			if hasNamed && named != final {
				l.unclear = true
				g.errorf(l.row, l.col, text, nil, "the numerical goals %q name the financial year %s, but the plan's end date %s is in %s: the goals are the targets of the plan's final year; correct the title or the end date", text, named, pipeline.ClampEnd(end), final)
				continue
			}
		case hasNamed:
			final = named
		default:
			l.unclear = true
			g.errorf(l.row, l.col, text, nil, "the numerical goals %q are the targets of the plan's final year, the financial year holding its end date, and this sheet gives no end date: fill in End date", text)
			continue
		}
		l.fy, l.yearNumber = final.String(), 0
		for _, o := range blocks {
			if o == b || o.label.section != sectionTargets || o.label.unclear || o.label.targetType != l.targetType {
				continue
			}
			if fy, ok := labelYear(o.label, start); ok && fy == final {
				g.compareGoals(b, o, final)
				b.skip = true
				break
			}
		}
	}
}

// labelYear returns the financial year a label names: its financial year,
// or its year number counted from the plan's start date.
func labelYear(l gridLabel, start pipeline.Date) (pipeline.FinancialYear, bool) {
	if l.fy != "" {
		fy, err := pipeline.ParseFinancialYear(l.fy)
		return fy, err == nil
	}
	if l.yearNumber > 0 && !start.IsZero() {
		return pipeline.FinancialYearOf(start) + pipeline.FinancialYear(l.yearNumber-1), true
	}
	return 0, false
}

// metaDate returns the date of a plan-detail cell, when it holds one.
func metaDate(meta map[string]pipeline.Cell, key string) (pipeline.Date, bool) {
	c, ok := meta[key]
	if !ok {
		return pipeline.Date{}, false
	}
	d, ok, err := pipeline.DateValue(c)
	return d, ok && err == nil
}

// goalCell is one counter cell of a grid, by level, race and gender.
type goalCell struct {
	r, c int
}

// compareGoals reports each counter where the goals grid and the final
// year's targets grid differ (a value against another, or against a blank),
// at the goal's cell (or the goals grid's label, when it has no cell for
// the counter), naming the target's cell.
func (g *sheetReader) compareGoals(goals, targets *block, final pipeline.FinancialYear) {
	cells := func(b *block) map[[3]string]goalCell {
		out := map[[3]string]goalCell{}
		for r, level := range b.rows {
			for _, col := range b.columns {
				out[[3]string{level, col.race, col.gender}] = goalCell{r, col.col}
			}
		}
		return out
	}
	gc, tc := cells(goals), cells(targets)
	value := func(at goalCell, ok bool) (string, int64, bool) {
		if !ok {
			return "blank", 0, false
		}
		cell := g.cellAt(at.r, at.c)
		n, set, err := pipeline.CounterValue(cell)
		switch {
		case err != nil:
			return strconv.Quote(cell.Text), -1, true
		case !set:
			return "blank", 0, false
		}
		return strconv.FormatInt(n, 10), n, true
	}
	targetRef, _ := excelize.CoordinatesToCellName(targets.label.col, targets.label.row)
	keys := make(map[[3]string]bool, len(gc)+len(tc))
	for k := range gc {
		keys[k] = true
	}
	for k := range tc {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys, g.cat) {
		ga, gok := gc[k]
		ta, tok := tc[k]
		if gok {
			// A goal cell that holds no counter value is refused for its own
			// cause (a percentage, text, a negative number), as the same cell
			// of a targets grid is: the goals grid is not read as records.
			if _, _, err := pipeline.CounterValue(g.cellAt(ga.r, ga.c)); err != nil {
				g.errorf(ga.r, ga.c, g.cellAt(ga.r, ga.c).Text, nil, "the numerical goal for %s, %s %s: %v",
					templates.LevelLabel(k[0]), templates.RaceLabel(k[1]), templates.GenderLabel(k[2]), err)
				continue
			}
		}
		gs, gn, gset := value(ga, gok)
		ts, tn, tset := value(ta, tok)
		if gset == tset && gn == tn && gn >= 0 {
			continue
		}
		r, c := ga.r, ga.c
		if !gok {
			r, c = goals.label.row, goals.label.col
		}
		where := targetRef
		if tok {
			where, _ = excelize.CoordinatesToCellName(ta.c, ta.r)
		}
		g.errorf(r, c, gs, nil, "the numerical goal for %s, %s %s is %s, but the numerical target of the final year %s at %s is %s: the goals are the targets of the plan's final year, so the two tables must agree",
			templates.LevelLabel(k[0]), templates.RaceLabel(k[1]), templates.GenderLabel(k[2]), gs, final, where, ts)
	}
}

// sortedKeys returns the counters' keys in the catalog's order.
func sortedKeys(keys map[[3]string]bool, cat *pipeline.Catalog) [][3]string {
	var out [][3]string
	for _, l := range cat.Levels() {
		for _, r := range cat.Races() {
			for _, gd := range cat.Genders() {
				if k := [3]string{l, r, gd}; keys[k] {
					out = append(out, k)
				}
			}
		}
	}
	if len(out) < len(keys) { // keys a taught word gives outside the catalog
		var rest [][3]string
		for k := range keys {
			if !slices.Contains(out, k) {
				rest = append(rest, k)
			}
		}
		slices.SortFunc(rest, func(a, b [3]string) int { return strings.Compare(a[0]+a[1]+a[2], b[0]+b[1]+b[2]) })
		out = append(out, rest...)
	}
	return out
}
