package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"strconv"
	"strings"
)

// Assembler validates records (rows of flat tables, blocks of grid
// workbooks) fed one at a time and groups them into plans: every value
// rule, the grouping by plan key, duplicate and conflicting rows, the
// plan's dates and years and the domain warnings. Finish reports every
// problem in one pass; plans are returned in the order they first appear
// even when there are errors. A reader can so stream a large file without
// holding its rows: only the domain model and the little it needs to cite
// earlier rows are kept.
type Assembler struct {
	cat      *pipeline.Catalog
	sectors  func(string) (string, bool) // a mapping file's sector spellings (TeachSectors); nil: none
	totals   []asmTotals                 // the catalog's names for the totals check, per race and gender
	plans    []*asmPlan
	byKey    map[string]*asmPlan // by planIndexKey
	keyBuf   []byte
	Problems pipeline.Problems
	unknown  map[string]bool                      // problems reported once per file and sheet (unknown counters, lost zeros)
	columns  map[string]pipeline.CounterColumns   // per file and sheet: the flat table's counter columns
	texts    map[string]string                    // year cell texts kept until Finish, shared between rows
	dates    map[pipeline.Date]string             // Date.String of the dates read, which repeat from row to row
	places   map[pipeline.Origin]*pipeline.Origin // year cells' columns (an Origin without a row), shared by their rows
	// placeCache holds place's last columns, looked up before places.
	placeCache [4]asmPlaceCacheEntry
	placeNext  int
	// lastDates holds, for start_date and end_date, the last text cell
	// read as a date: the plan's rows repeat it.
	lastDates [2]asmDateMemo
	slots     map[asmSlot]*pipeline.InputTarget // Finish's targets of one plan, by slot

	yearCells map[[2]string]*asmYearCells          // by file and sheet
	odd       map[*pipeline.InputTarget]*asmTarget // targets whose year cells are not their table's usual ones
	fyTexts   map[pipeline.FinancialYear]string    // FinancialYear.String of the years read

	// The table of the previous record, so that consecutive rows of one
	// table find its CounterColumns without building the map key.
	lastFile, lastSheet string
	lastColumns         pipeline.CounterColumns
	lastKnown           bool

	// Per place of Record.Counters, for the table memoFile and memoSheet.
	memo                []asmCounterMemo
	memoFile, memoSheet string

	bound    *pipeline.ProblemBound // nil: every problem kept
	admitted int                    // problems[:admitted] have passed the bound

	// unplaced holds the grid sheets (file, sheet) and table rows (file,
	// sheet, row) whose plan key has an error, so that no plan holds them
	// (Unplaced).
	unplaced map[[3]string]bool
}

// Bound passes the assembler's problems through b as they accumulate, so
// that a file with hundreds of thousands of warnings is not held whole.
func (a *Assembler) Bound(b *pipeline.ProblemBound) { a.bound = b }

// TeachSectors gives the assembler a client's own spellings of sectors (a
// mapping file's sectors, docs/formats.md): spelling returns the service's
// value a sector cell names, consulted when the cell is neither a
// service's value nor the gazette's spelling of one (SectorValue).
func (a *Assembler) TeachSectors(spelling func(string) (string, bool)) { a.sectors = spelling }

// compact passes the problems found since the last call through the bound.
func (a *Assembler) compact() {
	if !a.bound.Enabled() {
		return
	}
	a.Problems = append(a.Problems[:a.admitted], a.bound.Admit(a.Problems[a.admitted:])...)
	a.admitted = len(a.Problems)
}

// asmTotals are the counter names of one race and gender that the totals
// check compares, looked up in the catalog once rather than per target.
type asmTotals struct {
	race, gender      string
	total, grand      string
	temp              string
	hasTotal          bool
	hasGrand, hasTemp bool
	levels            []string // the occupational levels' counters; nil when the catalog lacks one

	// The catalog indices of total, grand, temp (-1 when absent) and levels.
	totalI, grandI, tempI int
	levelsI               []int
}

// NewAssembler returns an Assembler checking counter names against cat (nil
// means the default catalog).
func NewAssembler(cat *pipeline.Catalog) *Assembler {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	a := &Assembler{cat: cat, byKey: map[string]*asmPlan{}, unknown: map[string]bool{}, columns: map[string]pipeline.CounterColumns{}, texts: map[string]string{}, dates: map[pipeline.Date]string{}, places: map[pipeline.Origin]*pipeline.Origin{}, yearCells: map[[2]string]*asmYearCells{}}
	for _, race := range cat.Races() {
		for _, gender := range cat.Genders() {
			t := asmTotals{race: race, gender: gender}
			t.total, t.hasTotal = cat.Counter(race, gender, "total_permanent_employees")
			t.grand, t.hasGrand = cat.Counter(race, gender, "grand_total_employees")
			t.temp, t.hasTemp = cat.Counter(race, gender, "temporary_employees")
			for _, level := range pipeline.OccupationalLevels {
				name, has := cat.Counter(race, gender, level)
				if !has {
					t.levels = nil
					break
				}
				t.levels = append(t.levels, name)
			}
			t.totalI, t.grandI, t.tempI = cat.IndexOf(t.total), cat.IndexOf(t.grand), cat.IndexOf(t.temp)
			for _, name := range t.levels {
				t.levelsI = append(t.levelsI, cat.IndexOf(name))
			}
			a.totals = append(a.totals, t)
		}
	}
	return a
}

// Add validates one record and files it under its plan. It keeps nothing
// of rec.Cells nor rec.Fixed (they may be reused for the next record), only the values
// and origins it reads from it. Its steps: the plan columns' values
// (readPlanID, readPlanTexts, readDates, readSector, readScorecard), the
// year and target type (readYear, readTargetType, requireYearAndType), the
// counters, the plan key (planKey, planFor), the plan's fields
// (mergePlanFields), and the row's target with the places of its year
// cells (keepYears).
func (a *Assembler) Add(rec pipeline.Record) {
	if a.bound != nil && len(a.Problems)-a.admitted > 4096 {
		a.compact()
	}
	var v asmRowValues
	a.readPlanID(&rec, &v)
	a.readPlanTexts(&rec, &v)
	a.readDates(&rec, &v)
	a.readSector(&rec, &v)
	a.readScorecard(&rec, &v)
	yearPlace, fyPlace := a.readYear(&rec, &v)
	a.readTargetType(&rec, &v)
	sec, _ := rec.Cell(pipeline.ColSection)
	baseline := sec.Text == pipeline.SectionBaseline
	if !baseline {
		a.requireYearAndType(&rec, &v)
	}

	counters, cells, places, columns := a.counters(rec)

	key, ok := a.planKey(&rec, &v)
	if !ok {
		a.unplace(rec.Origin)
		return
	}
	acc := a.planFor(key, &rec)
	acc.plan.AddRow(rec.Origin)
	a.mergePlanFields(acc, &rec, &v)
	if baseline {
		if v.targetType != "" {
			acc.plan.Baseline = append(acc.plan.Baseline, &pipeline.InputTarget{Origin: asmKeep(rec.Origin), FinancialYear: v.fy,
				TargetType: v.targetType, Counters: counters, Cells: cells, Places: places, Columns: columns})
		}
		return
	}
	if v.targetType == "" || (v.yearNumber == 0 && v.fy == 0) {
		return
	}
	t := &pipeline.InputTarget{
		Origin:        asmKeep(rec.Origin),
		YearNumber:    v.yearNumber,
		FinancialYear: v.fy,
		TargetType:    v.targetType,
		Counters:      counters,
		Cells:         cells,
		Places:        places,
		Columns:       columns,
	}
	if acc.targets == nil {
		// A plan's usual rows: five years of two target types.
		acc.targets = make([]*pipeline.InputTarget, 0, 2*5)
	}
	acc.targets = append(acc.targets, t)
	a.keepYears(t, yearPlace, fyPlace)
}

// errorf and warnf record a problem with its own copies of the origin's
// cell reference and the value (see asmKeep).
func (a *Assembler) errorf(o pipeline.Origin, value, format string, args ...any) {
	a.Problems.Errorf(asmKeep(o), strings.Clone(pipeline.Excerpt(value)), format, args...)
}

func (a *Assembler) warnf(o pipeline.Origin, value, format string, args ...any) {
	a.Problems.Warnf(asmKeep(o), strings.Clone(pipeline.Excerpt(value)), format, args...)
}

// warnKind is warnf for a warning that can repeat on every row: kind names
// it in the count of those not listed (see ProblemBound).
func (a *Assembler) warnKind(kind string, o pipeline.Origin, value, format string, args ...any) {
	a.warnf(o, value, format, args...)
	a.Problems[len(a.Problems)-1].Kind = kind
}

// unplace records that the record at o is in no plan: its plan key has an
// error. A grid record (its origin a cell: the grid's label) stands for its
// sheet, a table record for its row.
func (a *Assembler) unplace(o pipeline.Origin) {
	if a.unplaced == nil {
		a.unplaced = map[[3]string]bool{}
	}
	k := [3]string{o.File, o.Sheet, ""}
	if o.Cell == "" {
		k[2] = strconv.Itoa(o.Row)
	}
	a.unplaced[k] = true
}

// Unplaced returns how many grid sheets and table rows are in no plan
// because their plan key (plan_id, plan_name, start_date) has an error: the
// summary counts them beside the plans, which do not include them.
func (a *Assembler) Unplaced() (sheets, rows int) {
	for k := range a.unplaced {
		if k[2] == "" {
			sheets++
		} else {
			rows++
		}
	}
	return sheets, rows
}

// Finish runs the plan-level checks and returns the plans and every problem.
func (a *Assembler) Finish() ([]*pipeline.InputPlan, pipeline.Problems) {
	plans := make([]*pipeline.InputPlan, 0, len(a.plans))
	for _, acc := range a.plans {
		a.finishPlan(acc)
		plans = append(plans, acc.plan)
		if a.bound != nil && len(a.Problems)-a.admitted > 4096 {
			a.compact()
		}
	}
	a.splitPlans()
	a.compact()
	ps := a.Problems
	ps.Sort()
	return plans, ps.Dedupe()
}
