package grid

import (
	"fmt"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// The EEA13 section 4 layout of a plan (docs/profile-and-propose.md): form
// EEA13's three kinds of numerical table, each for all employees
// (including people with disabilities) and for people with disabilities,
// in the form's wording:
//   - 4.1 Workforce profile, the current workforce (not a target), on a
//     sheet of its own that is no plan sheet;
//   - 4.2 Numerical goals, the final year's targets, and 4.3 Numerical
//     targets, each earlier year's, on the plan sheet (the plan's details
//     above them), each grid titled with its year, so the plan reads back
//     exactly as its years' targets.

// Section4Sheet and Section4ProfileSheet are the layout's sheets.
const (
	Section4Sheet        = "Plan"
	Section4ProfileSheet = "4.1 Workforce profile"
)

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
// in the EEA13 section 4 layout; both sheets print on A4.
func WriteSection4(path string, p *pipeline.InputPlan, profileAll, profileDisabled pipeline.Counters) error {
	cat := pipeline.DefaultCatalog()
	if err := table.CheckCounters(p, cat); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := templates.NewStyles(f)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
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
	first := f.GetSheetName(0)
	if err := templates.AddPlanSheet(f, Section4Sheet, ps, cat, st); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := writeProfileSheet(f, st, p.Name, profileAll, profileDisabled); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.DeleteSheet(first); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	templates.ActivateFirstVisible(f)
	return xlsx.WriteWorkbook(path, f)
}

// writeProfileSheet writes section 4.1: the workforce profile's two
// tables, titled without a year (it is no year's target), levels down the
// side and race by gender across, with the total rows.
func writeProfileSheet(f *excelize.File, st *templates.Styles, name string, all, disabled pipeline.Counters) error {
	sh := Section4ProfileSheet
	if _, err := f.NewSheet(sh); err != nil {
		return err
	}
	set := func(col, row int, v any, style int) error {
		ref, _ := excelize.CoordinatesToCellName(col, row)
		if err := f.SetCellValue(sh, ref, v); err != nil {
			return err
		}
		return f.SetCellStyle(sh, ref, ref, style)
	}
	rows := []struct {
		v     any
		style int
	}{{"4.1 Workforce profile: " + name, st.Title}, {"The current workforce, from which the numerical goals and targets are set; it is not a target.", st.Subtitle}}
	for i, r := range rows {
		if err := set(1, i+1, r.v, r.style); err != nil {
			return err
		}
	}
	row := 4
	for _, tbl := range []struct {
		title    string
		counters pipeline.Counters
	}{{"Workforce profile — " + section4All, all}, {"Workforce profile — " + section4Disabled, disabled}} {
		next, err := profileTable(set, st, row, tbl.title, tbl.counters)
		if err != nil {
			return err
		}
		row = next + 2
	}
	if err := f.SetColWidth(sh, "A", "A", 44); err != nil {
		return err
	}
	if err := f.SetColWidth(sh, "B", "K", 10); err != nil {
		return err
	}
	return templates.SetPrintLayout(f, sh, templates.PrintSetup{TitleFirst: 1, TitleLast: 1})
}

// profileTable writes one table at row and returns its last row.
func profileTable(set func(col, row int, v any, style int) error, st *templates.Styles, row int, title string, c pipeline.Counters) (int, error) {
	if err := set(1, row, title, st.GridLabel); err != nil {
		return 0, err
	}
	if err := set(1, row+1, "Occupational level", st.Header); err != nil {
		return 0, err
	}
	col := 2
	for _, race := range pipeline.Races {
		for _, gender := range pipeline.Genders {
			if err := set(col, row+1, templates.RaceLabel(race)+" "+templates.GenderLabel(gender), st.Header); err != nil {
				return 0, err
			}
			col++
		}
	}
	r := row + 2
	for _, level := range pipeline.Levels {
		label, counter := st.LevelLabel, st.Counter
		if !pipeline.Contains(pipeline.OccupationalLevels, level) {
			label, counter = st.TotalLabel, st.TotalCounter
		}
		if err := set(1, r, templates.LevelLabel(level), label); err != nil {
			return 0, err
		}
		col := 2
		for _, race := range pipeline.Races {
			for _, gender := range pipeline.Genders {
				v, _ := c.ByName(pipeline.CounterName(race, gender, level))
				if err := set(col, r, v, counter); err != nil {
					return 0, err
				}
				col++
			}
		}
		r++
	}
	return r - 1, nil
}
