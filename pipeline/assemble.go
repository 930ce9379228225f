package pipeline

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Assemble validates records (rows of flat tables, blocks of grid
// workbooks) and groups them into plans: every value rule, the grouping by
// plan key, duplicate and conflicting rows, the plan's dates and years and
// the domain warnings. It reports every problem in one pass; plans are
// returned in the order they first appear even when there are errors.
func Assemble(records []Record, cat *Catalog) ([]*InputPlan, Problems) {
	a := NewAssembler(cat)
	for _, r := range records {
		a.Add(r)
	}
	return a.Finish()
}

// Assembler is Assemble fed one record at a time, so that a reader can
// stream a large file without holding its rows: only the domain model and
// the little it needs to cite earlier rows are kept.
type Assembler struct {
	cat      *Catalog
	totals   []asmTotals // the catalog's names for the totals check, per race and gender
	plans    []*asmPlan
	byKey    map[string]*asmPlan // by planIndexKey
	keyBuf   []byte
	problems Problems
	unknown  map[string]bool           // problems reported once per file and sheet (unknown counters, lost zeros)
	columns  map[string]CounterColumns // per file and sheet: the flat table's counter columns
	texts    map[string]string         // year cell texts kept until Finish, shared between rows
	dates    map[Date]string           // Date.String of the dates read, which repeat from row to row
	places   map[Origin]*Origin        // year cells' columns (an Origin without a row), shared by their rows
	// placeCache holds place's last columns, looked up before places.
	placeCache [4]asmPlaceCacheEntry
	placeNext  int
	// lastDates holds, for start_date and end_date, the last text cell
	// read as a date: the plan's rows repeat it.
	lastDates [2]asmDateMemo
	slots     map[asmSlot]*InputTarget // Finish's targets of one plan, by slot

	yearCells map[[2]string]*asmYearCells // by file and sheet
	odd       map[*InputTarget]*asmTarget // targets whose year cells are not their table's usual ones
	fyTexts   map[FinancialYear]string    // FinancialYear.String of the years read

	// The table of the previous record, so that consecutive rows of one
	// table find its CounterColumns without building the map key.
	lastFile, lastSheet string
	lastColumns         CounterColumns
	lastKnown           bool

	// Per place of Record.Counters, for the table memoFile and memoSheet.
	memo                []asmCounterMemo
	memoFile, memoSheet string

	bound    *ProblemBound // nil: every problem kept
	admitted int           // problems[:admitted] have passed the bound

	// unplaced holds the grid sheets (file, sheet) and table rows (file,
	// sheet, row) whose plan key has an error, so that no plan holds them
	// (Unplaced).
	unplaced map[[3]string]bool
}

// Bound passes the assembler's problems through b as they accumulate, so
// that a file with hundreds of thousands of warnings is not held whole.
func (a *Assembler) Bound(b *ProblemBound) { a.bound = b }

// compact passes the problems found since the last call through the bound.
func (a *Assembler) compact() {
	if !a.bound.Enabled() {
		return
	}
	a.problems = append(a.problems[:a.admitted], a.bound.Admit(a.problems[a.admitted:])...)
	a.admitted = len(a.problems)
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
func NewAssembler(cat *Catalog) *Assembler {
	if cat == nil {
		cat = DefaultCatalog()
	}
	a := &Assembler{cat: cat, byKey: map[string]*asmPlan{}, unknown: map[string]bool{}, columns: map[string]CounterColumns{}, texts: map[string]string{}, dates: map[Date]string{}, places: map[Origin]*Origin{}, yearCells: map[[2]string]*asmYearCells{}}
	for _, race := range cat.Races() {
		for _, gender := range cat.Genders() {
			t := asmTotals{race: race, gender: gender}
			t.total, t.hasTotal = cat.Counter(race, gender, "total_permanent_employees")
			t.grand, t.hasGrand = cat.Counter(race, gender, "grand_total_employees")
			t.temp, t.hasTemp = cat.Counter(race, gender, "temporary_employees")
			for _, level := range OccupationalLevels {
				name, has := cat.Counter(race, gender, level)
				if !has {
					t.levels = nil
					break
				}
				t.levels = append(t.levels, name)
			}
			t.totalI, t.grandI, t.tempI = cat.Index(t.total), cat.Index(t.grand), cat.Index(t.temp)
			for _, name := range t.levels {
				t.levelsI = append(t.levelsI, cat.Index(name))
			}
			a.totals = append(a.totals, t)
		}
	}
	return a
}

// asmSlot is a target's place in its plan, to find targets given twice.
type asmSlot struct {
	fy   bool // year is a financial year, not a year number
	year int
	tt   string
}

// asmPlan collects one plan's rows.
// Its fields are by asmPlanColumns index: the first value given (set
// tells which are), as the plan holds it (the texts of plan_id and the
// dates, which it holds parsed, in raw), and where, in the plan's own
// fieldPlaces, so that the state held for each plan while the rows are
// read is small (a table of 10,000 plans holds 10,000 of them).
type asmPlan struct {
	plan    *InputPlan
	raw     [3]string // the texts of plan_id, start_date and end_date
	set     uint16    // bit i: the plan column of index i (and plan.fieldPlaces[i]) given
	endBad  bool      // an end_date was written but is invalid (reported at its cell)
	targets []*InputTarget
}

// field returns the first value given for the plan column of index i and
// where, and whether one was.
func (acc *asmPlan) field(i int) (string, fieldPlace, bool) {
	if acc.set&(1<<i) == 0 {
		return "", fieldPlace{}, false
	}
	return *acc.value(i), acc.plan.fieldPlaces[i], true
}

// value returns where the first value of the plan column of index i is
// held: the plan's own field, or raw.
func (acc *asmPlan) value(i int) *string {
	p := acc.plan
	switch asmPlanColumns[i] {
	case ColAccount:
		return &p.Account
	case ColCompanyVAT:
		return &p.Company.VAT
	case ColCompanyRegistration:
		return &p.Company.Registration
	case ColCompanyIDNumber:
		return &p.Company.IDNumber
	case ColPlanName:
		return &p.Name
	case ColSector:
		return &p.Sector
	case ColScorecardID:
		return &p.ScorecardID
	case ColPlanID:
		return &acc.raw[0]
	case ColStartDate:
		return &acc.raw[1]
	default: // ColEndDate
		return &acc.raw[2]
	}
}

type asmTarget struct {
	year asmPlace // the year_number cell, when given
	fy   asmPlace // the financial_year cell, when given
}

// asmYearCells are the columns of a table's year cells, the first seen. A
// target whose year cells are in them, on its own row, written as the
// value reads (the usual case), keeps no places until Finish: they follow
// from its row.
type asmYearCells struct{ year, fy *Origin }

// keepYears keeps the places of t's year cells until Finish, unless they
// are the usual ones (see asmYearCells).
func (a *Assembler) keepYears(t *InputTarget, year, fy asmPlace) {
	k := [2]string{t.Origin.File, t.Origin.Sheet}
	yc := a.yearCells[k]
	if yc == nil {
		yc = &asmYearCells{}
		if len(a.yearCells) < 4096 {
			a.yearCells[[2]string{strings.Clone(k[0]), strings.Clone(k[1])}] = yc
		}
	}
	usual := func(p asmPlace, col **Origin, text string, given bool) bool {
		if !given {
			return p.at == nil
		}
		if !p.onRow || p.raw != text {
			return false
		}
		if *col == nil {
			*col = p.at
		}
		return *col == p.at
	}
	if usual(year, &yc.year, asmYearText(t.YearNumber), t.YearNumber != 0) && usual(fy, &yc.fy, a.fyText(t.FinancialYear), t.FinancialYear != 0) {
		return
	}
	if a.odd == nil {
		a.odd = map[*InputTarget]*asmTarget{}
	}
	a.odd[t] = &asmTarget{year: year, fy: fy}
}

// yearPlaces returns the places of t's year cells as read (call it before
// Finish fills in the year the row leaves out).
func (a *Assembler) yearPlaces(t *InputTarget) (year, fy asmPlace) {
	if ta := a.odd[t]; ta != nil {
		return ta.year, ta.fy
	}
	yc := a.yearCells[[2]string{t.Origin.File, t.Origin.Sheet}]
	if yc == nil {
		return asmPlace{}, asmPlace{}
	}
	if t.YearNumber != 0 && yc.year != nil {
		year = asmPlace{at: yc.year, onRow: true, raw: asmYearText(t.YearNumber)}
	}
	if t.FinancialYear != 0 && yc.fy != nil {
		fy = asmPlace{at: yc.fy, onRow: true, raw: a.fyText(t.FinancialYear)}
	}
	return year, fy
}

func asmYearText(n int) string { return strconv.Itoa(n) }

// fyText returns fy.String(), formatted once per year.
func (a *Assembler) fyText(fy FinancialYear) string {
	if fy == 0 {
		return ""
	}
	if s, ok := a.fyTexts[fy]; ok {
		return s
	}
	s := fy.String()
	if a.fyTexts == nil {
		a.fyTexts = map[FinancialYear]string{}
	}
	if len(a.fyTexts) < 4096 {
		a.fyTexts[fy] = s
	}
	return s
}

// asmPlace is where a year cell of a target was read, kept until Finish
// without an Origin per row: a cell on the target's own row (a flat
// table's) points at its column's Origin, shared by the rows of the table.
type asmPlace struct {
	at    *Origin // the column (onRow) or the cell; nil when not given
	onRow bool
	raw   string // the cell's text
}

// origin returns the place's Origin for a target read at row.
func (p asmPlace) origin(row int) Origin {
	if p.at == nil {
		return Origin{}
	}
	o := *p.at
	if p.onRow {
		o.Row = row
		if o.Cell != "" {
			o.Cell += strconv.Itoa(row)
		}
		o = o.WithCell()
	}
	return o
}

// place returns the asmPlace of a cell read at o with text raw.
func (a *Assembler) place(o Origin, row int, raw string) asmPlace {
	raw = a.keepText(raw)
	if col, ok := columnOf(o, row); ok {
		// The last few columns looked up, compared field by field (their
		// strings are usually the reader's same ones), before the map,
		// whose key hashes every string of the Origin.
		for i := range a.placeCache {
			if pc := &a.placeCache[i]; pc.at != nil && asmSameOrigin(&pc.col, &col) {
				return asmPlace{at: pc.at, onRow: true, raw: raw}
			}
		}
		at, seen := a.places[col]
		if !seen {
			kept := col // a copy: taking col's address would move it to the heap on every call
			kept.Cell = strings.Clone(col.Cell)
			at = &kept
			if len(a.places) < 4096 {
				a.places[kept] = at
			}
		}
		a.placeCache[a.placeNext] = asmPlaceCacheEntry{col: *at, at: at}
		a.placeNext = (a.placeNext + 1) % len(a.placeCache)
		return asmPlace{at: at, onRow: true, raw: raw}
	}
	k := asmKeep(o)
	return asmPlace{at: &k, raw: raw}
}

// asmPlaceCacheEntry is one of place's last columns: the column (an
// Origin without a row) and the shared Origin place gives for it.
type asmPlaceCacheEntry struct {
	col Origin
	at  *Origin
}

// asmSameOrigin reports whether *a == *b, at once for the strings that
// are the same string.
func asmSameOrigin(a, b *Origin) bool {
	return a.Row == b.Row && a.Column == b.Column && asmSame(a.File, b.File) && asmSame(a.Sheet, b.Sheet) &&
		asmSame(a.Cell, b.Cell) && asmSame(a.Header, b.Header)
}

// asmDateMemo is the last text a date column read as a date: its value
// and Date.String.
type asmDateMemo struct {
	text string
	d    Date
	s    string
}

// asmPlanColumns are the columns that describe the plan rather than a row.
var asmPlanColumns = [asmNumPlanColumns]string{ColAccount, ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber, ColPlanID, ColPlanName, ColStartDate, ColEndDate, ColSector, ColScorecardID}

const asmNumPlanColumns = 10

// asmPlanColumnIndex returns the index of a plan column in asmPlanColumns.
func asmPlanColumnIndex(col string) int {
	for i, c := range asmPlanColumns {
		if c == col {
			return i
		}
	}
	panic("pipeline: " + col + " is not a plan column")
}

// asmRowValues are the parsed plan and year fields of one record.
type asmRowValues struct {
	planID     int64
	planIDBad  bool
	nameBad    bool // plan_name written but unreadable (its error is given)
	account    string
	company    CompanyIDs
	name       string
	start, end Date
	startBad   bool
	endBad     bool
	sector     string
	scorecard  string
	yearNumber int
	fy         FinancialYear
	yearGiven  bool // year_number or financial_year written (valid or not)
	targetType string
	typeGiven  bool
	given      [asmNumPlanColumns]string // by asmPlanColumns index: canonical value, for valid non-blank values
	givenSet   [asmNumPlanColumns]bool
	companyAt  Origin // a blank company identifier cell the record shows (a grid's labelled cell)
}

func (v *asmRowValues) give(col, value string) {
	i := asmPlanColumnIndex(col)
	v.given[i], v.givenSet[i] = value, true
}

// Add validates one record and files it under its plan. It keeps nothing
// of rec.Cells nor rec.Fixed (they may be reused for the next record), only the values
// and origins it reads from it. Its steps: the plan columns' values
// (readPlanID, readPlanTexts, readDates, readSector, readScorecard), the
// year and target type (readYear, readTargetType, requireYearAndType), the
// counters, the plan key (planKey), the plan's fields (mergePlanFields)
// and the target (addTarget).
func (a *Assembler) Add(rec Record) {
	if a.bound != nil && len(a.problems)-a.admitted > 4096 {
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
	a.requireYearAndType(&rec, &v)

	counters, cells, columns := a.counters(rec)

	key, ok := a.planKey(&rec, &v)
	if !ok {
		a.unplace(rec.Origin)
		return
	}
	acc := a.planFor(key, &rec)
	a.mergePlanFields(acc, &rec, &v)
	if v.targetType == "" || (v.yearNumber == 0 && v.fy == 0) {
		return
	}
	t := &InputTarget{
		Origin:        asmKeep(rec.Origin),
		YearNumber:    v.yearNumber,
		FinancialYear: v.fy,
		TargetType:    v.targetType,
		Counters:      counters,
		Cells:         cells,
		Columns:       columns,
	}
	if acc.targets == nil {
		// A plan's usual rows: five years of two target types.
		acc.targets = make([]*InputTarget, 0, 2*5)
	}
	acc.targets = append(acc.targets, t)
	a.keepYears(t, yearPlace, fyPlace)
}

// cellError reports an error at cell c of column col of rec: at the
// record's place when the cell has none, under the column's name when the
// cell has no header.
func (a *Assembler) cellError(rec *Record, c Cell, col, format string, args ...any) {
	o := c.Origin
	if o.File == "" {
		o = rec.Origin
	}
	if o.Header == "" {
		o.Header = col
	}
	a.errorf(o, asmCellText(c), format, args...)
}

// readPlanID reads the record's plan_id.
func (a *Assembler) readPlanID(rec *Record, v *asmRowValues) {
	c, ok := rec.Cell(ColPlanID)
	if !ok {
		return
	}
	n, set, err := IntegerValue(c)
	switch {
	case err != nil:
		a.cellError(rec, c, ColPlanID, "plan_id must be the whole-number id of an existing plan: %v", err)
		v.planIDBad = true
	case set && n <= 0:
		a.cellError(rec, c, ColPlanID, "plan_id must be a positive whole number")
		v.planIDBad = true
	case set:
		v.planID = n
		v.give(ColPlanID, strconv.FormatInt(n, 10))
	}
}

// readPlanTexts reads the record's account, company identifiers and plan
// name.
func (a *Assembler) readPlanTexts(rec *Record, v *asmRowValues) {
	for _, col := range []string{ColAccount, ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber, ColPlanName} {
		c, ok := rec.Cell(col)
		if !ok {
			continue
		}
		s, set, err := TextValue(c)
		if err != nil {
			a.cellError(rec, c, col, "%s: %v", col, err)
			if col == ColPlanName {
				v.nameBad = true
			}
			continue
		}
		if !set {
			if col != ColPlanName && v.companyAt.Cell == "" && c.Origin.Cell != "" {
				v.companyAt = c.Origin
			}
			continue
		}
		if col != ColAccount && col != ColPlanName && IdentifierKey(s) == "" {
			// "-" or "/" in a company column: no identifier (SameIdentifier).
			a.noIdentifierWarning(c, col, s)
			if v.companyAt.Cell == "" && c.Origin.Cell != "" {
				v.companyAt = c.Origin
			}
			continue
		}
		if max := MaxTextLen(col); utf8.RuneCountInString(s) > max {
			// The value is still read, so that the row's other checks
			// speak of it; the error keeps it from being sent.
			a.cellError(rec, c, col, "%s is %d characters long; at most %d are allowed", col, utf8.RuneCountInString(s), max)
		}
		v.give(col, s)
		if c.Kind == CellNumber {
			a.lostZeroWarning(c, col, s)
		}
		switch col {
		case ColAccount:
			v.account = s
		case ColCompanyVAT:
			v.company.VAT = s
		case ColCompanyRegistration:
			v.company.Registration = s
		case ColCompanyIDNumber:
			v.company.IDNumber = s
		case ColPlanName:
			v.name = s
		}
	}
}

// readDates reads the record's start_date and end_date.
func (a *Assembler) readDates(rec *Record, v *asmRowValues) {
	for k, col := range []string{ColStartDate, ColEndDate} {
		c, ok := rec.Cell(col)
		if !ok {
			continue
		}
		memo := &a.lastDates[k]
		if c.Kind == CellText && memo.s != "" && c.Text == memo.text {
			// DateValue of a text cell depends on its text alone.
			v.give(col, memo.s)
			if col == ColStartDate {
				v.start = memo.d
			} else {
				v.end = memo.d
			}
			continue
		}
		d, set, err := DateValue(c)
		if err != nil {
			a.cellError(rec, c, col, "%s: %v", col, err)
			if col == ColStartDate {
				v.startBad = true
			} else {
				v.endBad = true
			}
			continue
		}
		if !set {
			continue
		}
		ds := a.dateText(d)
		if c.Kind == CellText {
			*memo = asmDateMemo{text: c.Text, d: d, s: ds}
		}
		v.give(col, ds)
		if col == ColStartDate {
			v.start = d
		} else {
			v.end = d
		}
	}
}

// readSector reads the record's sector, one of the 18 sector values.
func (a *Assembler) readSector(rec *Record, v *asmRowValues) {
	c, ok := rec.Cell(ColSector)
	if !ok {
		return
	}
	s, set, err := TextValue(c)
	switch {
	case err != nil:
		a.cellError(rec, c, ColSector, "sector: %v", err)
	case set:
		if exact, sugg, found := NormalizeSector(s); found {
			v.sector = exact
			v.give(ColSector, exact)
		} else {
			a.cellError(rec, c, ColSector, "%q is not one of the 18 sector values; leave it blank or use one of the listed sectors exactly", Excerpt(s))
			a.problems[len(a.problems)-1].Suggestions = sugg
		}
	}
}

// readScorecard reads the record's scorecard_id.
func (a *Assembler) readScorecard(rec *Record, v *asmRowValues) {
	c, ok := rec.Cell(ColScorecardID)
	if !ok {
		return
	}
	s, set, err := TextValue(c)
	switch {
	case err != nil:
		a.cellError(rec, c, ColScorecardID, "scorecard_id: %v", err)
	case set && !strings.HasPrefix(s, "scorecard_"):
		a.cellError(rec, c, ColScorecardID, "%q is not a scorecard id; scorecard ids start with scorecard_", Excerpt(s))
	case set && utf8.RuneCountInString(s) > MaxTextLen(ColScorecardID):
		a.cellError(rec, c, ColScorecardID, "scorecard_id is %d characters long; at most %d are allowed", utf8.RuneCountInString(s), MaxTextLen(ColScorecardID))
	case set:
		v.scorecard = s
		v.give(ColScorecardID, s)
	}
}

// readYear reads the record's year_number and financial_year and returns
// the places of their cells.
func (a *Assembler) readYear(rec *Record, v *asmRowValues) (yearPlace, fyPlace asmPlace) {
	if c, ok := rec.Cell(ColYearNumber); ok && !asmIsBlank(c) {
		v.yearGiven = true
		yearPlace = a.place(asmOriginOf(c, *rec, ColYearNumber), rec.Origin.Row, asmCellText(c))
		n, _, err := IntegerValue(c)
		switch {
		case err != nil:
			a.cellError(rec, c, ColYearNumber, "year_number: %v; write 1 for the plan's first financial year, 2 for the second, and so on", err)
		case n < 1 || n > 100:
			a.cellError(rec, c, ColYearNumber, "year_number must be 1 or more (1 is the plan's first financial year)")
		default:
			v.yearNumber = int(n)
		}
	}
	if c, ok := rec.Cell(ColFinancialYear); ok && !asmIsBlank(c) {
		v.yearGiven = true
		fyPlace = a.place(asmOriginOf(c, *rec, ColFinancialYear), rec.Origin.Row, asmCellText(c))
		fy, _, err := FinancialYearValue(c)
		if err != nil {
			a.cellError(rec, c, ColFinancialYear, "financial_year: %v", err)
		} else {
			v.fy = fy
		}
	}
	return yearPlace, fyPlace
}

// readTargetType reads the record's target_type.
func (a *Assembler) readTargetType(rec *Record, v *asmRowValues) {
	c, ok := rec.Cell(ColTargetType)
	if !ok || asmIsBlank(c) {
		return
	}
	v.typeGiven = true
	s, _, err := TextValue(c)
	if err != nil {
		a.cellError(rec, c, ColTargetType, "target_type: %v", err)
	} else if exact, sugg, found := NormalizeTargetType(s); found {
		v.targetType = exact
	} else {
		a.cellError(rec, c, ColTargetType, "%q is not a target type; write all_employees or disabled_employees", Excerpt(s))
		a.problems[len(a.problems)-1].Suggestions = sugg
	}
}

// requireYearAndType reports a record without a target type or a year.
func (a *Assembler) requireYearAndType(rec *Record, v *asmRowValues) {
	if !v.typeGiven {
		o := rec.Origin
		if c, ok := rec.Cell(ColTargetType); ok {
			o = asmOriginOf(c, *rec, ColTargetType)
		}
		a.errorf(o, "", "target_type is missing; every row needs all_employees or disabled_employees")
	}
	if !v.yearGiven {
		o := rec.Origin
		if c, ok := rec.Cell(ColYearNumber); ok {
			o = asmOriginOf(c, *rec, ColYearNumber)
		} else if c, ok := rec.Cell(ColFinancialYear); ok {
			o = asmOriginOf(c, *rec, ColFinancialYear)
		}
		a.errorf(o, "", "the row has neither year_number nor financial_year; give one of them (for example 1, or 2026/27)")
	}
}

// planKey returns the key of the record's plan: its plan_id, else its
// account, company, name and start date. It reports false when the key
// has an error (the record then belongs to no plan).
func (a *Assembler) planKey(rec *Record, v *asmRowValues) (PlanKey, bool) {
	switch {
	case v.planIDBad:
		return PlanKey{}, false
	case v.planID != 0:
		return PlanKey{PlanID: v.planID}, true
	case v.nameBad:
		return PlanKey{}, false
	case v.name == "":
		o := rec.Origin
		if c, ok := rec.Cell(ColPlanName); ok {
			o = asmOriginOf(c, *rec, ColPlanName)
		}
		a.errorf(o, "", "the row has neither plan_id nor plan_name: give the id of an existing plan, or the name (with start_date and end_date) of a new one")
		return PlanKey{}, false
	case v.startBad:
		return PlanKey{}, false
	default:
		return PlanKey{Account: v.account, Company: v.company, Name: v.name, StartDate: v.start}, true
	}
}

// planFor returns the plan filed under key, starting it at rec when it is
// the first of its rows.
func (a *Assembler) planFor(key PlanKey, rec *Record) *asmPlan {
	kb := a.planIndexKey(key)
	acc := a.byKey[string(kb)]
	if acc == nil {
		acc = &asmPlan{plan: &InputPlan{Origin: asmKeep(rec.Origin)}}
		a.byKey[string(kb)] = acc
		a.plans = append(a.plans, acc)
	}
	return acc
}

// mergePlanFields gives the plan the plan columns the record states,
// reporting a value that disagrees with an earlier row of the plan.
func (a *Assembler) mergePlanFields(acc *asmPlan, rec *Record, v *asmRowValues) {
	acc.endBad = acc.endBad || v.endBad
	if acc.plan.CompanyCell.Cell == "" && v.companyAt.Cell != "" {
		acc.plan.CompanyCell = asmKeep(v.companyAt)
	}
	for i, col := range asmPlanColumns {
		if !v.givenSet[i] {
			continue
		}
		val := v.given[i]
		if value, place, set := acc.field(i); set {
			if !asmSameField(col, value, val) {
				c, _ := rec.Cell(col)
				o := asmOriginOf(c, *rec, col)
				a.errorf(o, val, "%s disagrees with an earlier row of the same plan: %q at %s, %q here; every row of a plan must give the same %s", col, Excerpt(value), asmRef(place.origin(), o), Excerpt(val), col)
			}
			continue
		}
		// The plan keeps its own copy of the text, not the reader's
		// buffer (a CSV line) it may be part of.
		a.setPlanField(acc, rec, v, i, strings.Clone(val))
	}
}

// setPlanField sets the plan's field i of asmPlanColumns to val, the
// record's value, and keeps the place of its cell.
func (a *Assembler) setPlanField(acc *asmPlan, rec *Record, v *asmRowValues, i int, val string) {
	col := asmPlanColumns[i]
	c, _ := rec.Cell(col)
	pl := a.place(asmOriginOf(c, *rec, col), rec.Origin.Row, "")
	p := acc.plan
	if p.fieldPlaces == nil {
		p.fieldPlaces = new([asmNumPlanColumns]fieldPlace)
	}
	*acc.value(i), acc.set = val, acc.set|1<<i
	p.fieldPlaces[i] = fieldPlace{at: pl.at, row: int32(rec.Origin.Row), onRow: pl.onRow}
	switch col {
	case ColPlanID:
		p.PlanID = v.planID
	case ColAccount:
		p.Account = val
		p.AccountOrigin = p.fieldPlaces[i].origin()
	case ColCompanyVAT:
		p.Company.VAT = val
	case ColCompanyRegistration:
		p.Company.Registration = val
	case ColCompanyIDNumber:
		p.Company.IDNumber = val
	case ColPlanName:
		p.Name = val
	case ColStartDate:
		p.StartDate = v.start
	case ColEndDate:
		p.EndDate = v.end
	case ColSector:
		p.Sector = val
	case ColScorecardID:
		p.ScorecardID = val
	}
}

// identifierDigits are the lengths of South African VAT and ID numbers.
var identifierDigits = map[string]int{ColCompanyVAT: 10, ColCompanyIDNumber: 13}

// lostZeroWarning warns when an identifier typed as a number is shorter
// than such numbers are: the spreadsheet has probably dropped a leading
// zero (ID numbers of people born in the 2000s start with 0).
func (a *Assembler) lostZeroWarning(c Cell, col, s string) {
	want, ok := identifierDigits[col]
	if !ok || len(s) >= want || strings.Trim(s, "0123456789") != "" {
		return
	}
	o := c.Origin
	if o.Header == "" {
		o.Header = col
	}
	k := "zero|" + o.File + "|" + o.Sheet + "|" + col + "|" + s
	if a.unknown[k] {
		return // once per number and file is enough
	}
	a.unknown[k] = true
	a.warnf(o, s, "%s %s has %d digits, but these numbers have %d: the cell is a number, so a leading zero may have been dropped; format the column as text and type the number again", col, s, len(s), want)
}

// noIdentifierWarning says, once per text, column and file, that a
// company identifier cell holding no letter or digit ("-", "/") is read as
// blank: such a text identifies no company (SameIdentifier), so it is
// neither part of the plan's key nor sent to the company lookup.
func (a *Assembler) noIdentifierWarning(c Cell, col, s string) {
	o := c.Origin
	if o.Header == "" {
		o.Header = col
	}
	k := "noid|" + o.File + "|" + o.Sheet + "|" + col + "|" + s
	if a.unknown[k] {
		return
	}
	a.unknown[k] = true
	a.warnf(o, s, "%s %q has no letter or digit, so it identifies no company: it is read as blank (the company is found by the plan's other identifiers); leave the cell empty when there is no such number", col, Excerpt(s))
}

// counters validates the counter cells of a record. Cells on the record's
// own row are described by the table's shared CounterColumns; only the
// others (grid cells) get an Origin each.
func (a *Assembler) counters(rec Record) (Counters, map[string]Origin, CounterColumns) {
	cs := asmCounterState{counters: NewCounters(a.cat), row: rec.Origin.Row}
	cs.columns, cs.known = a.tableColumns(rec.Origin)
	if len(rec.Counters) == 0 {
		// (A reader that gives Counters puts no counter in Cells.)
		for name, c := range rec.Cells {
			if !strings.HasPrefix(name, CounterPrefix) {
				continue
			}
			a.counter(&cs, &rec, name, &c, nil)
		}
	}
	if len(rec.Counters) > 0 {
		if rec.Origin.File != a.memoFile || rec.Origin.Sheet != a.memoSheet || len(a.memo) != len(rec.Counters) {
			a.memoFile, a.memoSheet = rec.Origin.File, rec.Origin.Sheet
			a.memo = make([]asmCounterMemo, len(rec.Counters))
		}
		row := cs.row
		for i := range rec.Counters {
			cc, memo := &rec.Counters[i], &a.memo[i]
			if memo.seen && asmSame(memo.name, cc.Name) {
				// counter's usual case, inline: a cell of a known
				// column, blank or plain digits, on the record's row
				// (asmInPlainColumn, written out).
				c := &cc.Cell
				if c.Kind == CellBlank {
					continue
				}
				if o, col := &c.Origin, memo.col; c.Kind == CellText && o.File != "" && o.Header != "" &&
					o.Row == row && row > 0 && o.Column == col.Column && col.Row == 0 && o.Cell == "" && col.Cell == "" &&
					asmSame(o.File, col.File) && asmSame(o.Sheet, col.Sheet) && asmSame(o.Header, col.Header) {
					if n, ok := valPlainDigits(c.Text); ok {
						cs.counters.Set(memo.index, n)
						continue
					}
				}
			} else if !strings.HasPrefix(cc.Name, CounterPrefix) {
				continue // (a name the memo holds has the prefix)
			}
			a.counter(&cs, &rec, cc.Name, &cc.Cell, memo)
		}
	}
	if !cs.known {
		cs.columns = nil
	}
	return cs.counters, cs.cells, cs.columns
}

// asmCounterState is counters' state while it reads one record.
type asmCounterState struct {
	counters Counters
	cells    map[string]Origin
	columns  CounterColumns
	known    bool
	row      int
	digits   [20]byte
	ndigits  int // len of cs.row in decimal in digits; 0 until rowSuffix
}

// rowSuffix returns the record's row in decimal.
func (cs *asmCounterState) rowSuffix() []byte {
	if cs.ndigits == 0 {
		cs.ndigits = len(strconv.AppendInt(cs.digits[:0], int64(cs.row), 10))
	}
	return cs.digits[:cs.ndigits]
}

// asmCounterMemo remembers, for one place of Record.Counters, the catalog
// index of the name last read there and its column in the table's
// CounterColumns, so that the next row with the same name in that place
// (the reader's same string) looks up neither.
type asmCounterMemo struct {
	name  string
	col   *Origin // a copy of the name's entry in the table's CounterColumns; nil when it has none
	index int
	seen  bool // col is set
}

// counter validates one counter cell of a record (see counters); memo,
// when not nil, is its place's asmCounterMemo.
func (a *Assembler) counter(cs *asmCounterState, rec *Record, name string, c *Cell, memo *asmCounterMemo) {
	var (
		prev  *Origin
		seen  bool
		index int
	)
	switch {
	case memo != nil && memo.name == name && memo.seen:
		// A table's CounterColumns entry, once made, does not change.
		prev, seen, index = memo.col, true, memo.index
	default:
		var col Origin
		col, seen = cs.columns[name] // a name in columns is in the catalog
		prev = &col
		index = a.cat.Index(name)
		if memo != nil {
			*memo = asmCounterMemo{name: name, index: index, seen: seen}
			if seen {
				memo.col = prev
			}
		}
	}
	if !seen && index < 0 {
		o := asmOriginOf(*c, *rec, name)
		k := o.File + "|" + o.Sheet + "|" + name
		if !a.unknown[k] {
			a.unknown[k] = true
			a.problems = append(a.problems, Problem{Severity: Error, Origin: asmKeep(o), Value: name,
				Message:     fmt.Sprintf("%s is not a counter of the catalog; check the spelling", name),
				Suggestions: a.cat.Suggest(name, 3), Code: CodeUnknownCounter})
		}
		return
	}
	var (
		n   int64
		set bool
		err error
	)
	if c.Kind == CellText {
		// CounterValue's first case, without copying the cell (digits
		// alone need no trimming).
		if n, set = valPlainDigits(c.Text); !set {
			n, set = valPlainDigits(strings.TrimSpace(c.Text))
		}
	}
	if !set {
		n, set, err = CounterValue(*c)
	}
	if err != nil {
		a.errorf(asmOriginOf(*c, *rec, name), asmCellText(*c), "%s: %v", name, err)
		return
	}
	if !set {
		return
	}
	cs.counters.Set(index, n)
	o := &c.Origin // asmOriginOf's, without copying the usual cell's
	if o.File == "" || o.Header == "" {
		oc := asmOriginOf(*c, *rec, name)
		o = &oc
	}
	if seen {
		if asmInColumn(o, prev, cs.row, cs.rowSuffix()) {
			return
		}
	} else if col, ok := columnOf(*o, cs.row); ok {
		if !cs.known {
			cs.columns, cs.known = CounterColumns{}, true
			a.setTableColumns(rec.Origin, cs.columns)
		}
		cs.columns[name] = col
		if memo != nil && memo.name == name {
			memo.col, memo.seen = &col, true
		}
		return
	}
	if cs.cells == nil {
		cs.cells = make(map[string]Origin)
	}
	cs.cells[name] = asmKeep(*o)
}

// tableColumns returns the CounterColumns of the table (file and sheet)
// of a record, and whether the table has them yet.
func (a *Assembler) tableColumns(o Origin) (CounterColumns, bool) {
	if a.lastColumns == nil || o.File != a.lastFile || o.Sheet != a.lastSheet {
		columns, ok := a.columns[o.File+"|"+o.Sheet]
		if !ok {
			return nil, false
		}
		a.lastFile, a.lastSheet, a.lastColumns = o.File, o.Sheet, columns
	}
	return a.lastColumns, true
}

func (a *Assembler) setTableColumns(o Origin, columns CounterColumns) {
	a.columns[o.File+"|"+o.Sheet] = columns
	a.lastFile, a.lastSheet, a.lastColumns = o.File, o.Sheet, columns
}

// asmInColumn reports whether columnOf(o, row) gives col, without building
// the column's Origin: rowSuffix is row in decimal.
func asmInColumn(o, col *Origin, row int, rowSuffix []byte) bool {
	if row <= 0 || o.Row != row || o.Column != col.Column || col.Row != 0 || !asmSame(o.File, col.File) || !asmSame(o.Sheet, col.Sheet) || !asmSame(o.Header, col.Header) {
		return false
	}
	if o.Cell == "" {
		// A cell given by its sheet, row and column (see Origin), in
		// the column col describes (Column compared above).
		return col.Cell == "" || o.Sheet != ""
	}
	if col.Cell == "" {
		return false
	}
	// col.Cell holds letters only (columnOf made it): o.Cell must be
	// those letters and the row.
	return len(o.Cell) == len(col.Cell)+len(rowSuffix) && o.Cell[:len(col.Cell)] == col.Cell && o.Cell[len(col.Cell):] == string(rowSuffix)
}

// asmInPlainColumn is asmInColumn for a cell without a cell reference (a
// CSV cell) and a column without one: false may still be in the column.
func asmInPlainColumn(o, col *Origin, row int) bool {
	return o.Row == row && row > 0 && o.Column == col.Column && col.Row == 0 && o.Cell == "" && col.Cell == "" &&
		asmSame(o.File, col.File) && asmSame(o.Sheet, col.Sheet) && asmSame(o.Header, col.Header)
}

// asmSame reports whether a == b, at once when they are the same string
// (a reader's header names and file name, shared by the cells of a table).
func asmSame(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b
}

// columnOf returns o without its row when o is a cell on the given row
// (a flat table's cell), for CounterColumns.
func columnOf(o Origin, row int) (Origin, bool) {
	if row <= 0 || o.Row != row {
		return Origin{}, false
	}
	if o.Cell != "" {
		var digits [20]byte
		suffix := strconv.AppendInt(digits[:0], int64(row), 10)
		n := len(o.Cell) - len(suffix)
		if n <= 0 || o.Cell[n:] != string(suffix) || strings.ContainsAny(o.Cell[:n], "0123456789") {
			return Origin{}, false
		}
		o.Cell = o.Cell[:n]
	}
	o.Row = 0
	return o, true
}

func asmIsBlank(c Cell) bool {
	return c.Kind == CellBlank || (c.Kind == CellText && strings.TrimSpace(c.Text) == "")
}

func asmCellText(c Cell) string {
	if c.Kind == CellBlank {
		return ""
	}
	return c.Text
}

// asmKeep returns o with its own copy of the cell reference, for an Origin
// the Assembler keeps: a reader may cut the references of a row from one
// string, which a kept reference would hold in memory whole.
func asmKeep(o Origin) Origin {
	if o.Cell != "" {
		o.Cell = strings.Clone(o.Cell)
		return o
	}
	return o.WithCell()
}

// keepText returns s for keeping until Finish: a copy, shared by the
// rows that give the same text (year numbers and financial years repeat).
func (a *Assembler) keepText(s string) string {
	if k, ok := a.texts[s]; ok {
		return k
	}
	k := strings.Clone(s)
	if len(a.texts) < 4096 {
		a.texts[k] = k
	}
	return k
}

// dateText returns d.String(), formatted once per date.
func (a *Assembler) dateText(d Date) string {
	if s, ok := a.dates[d]; ok {
		return s
	}
	s := d.String()
	if len(a.dates) < 4096 {
		a.dates[d] = s
	}
	return s
}

// errorf and warnf record a problem with its own copies of the origin's
// cell reference and the value (see asmKeep).
func (a *Assembler) errorf(o Origin, value, format string, args ...any) {
	a.problems.Errorf(asmKeep(o), strings.Clone(Excerpt(value)), format, args...)
}

func (a *Assembler) warnf(o Origin, value, format string, args ...any) {
	a.problems.Warnf(asmKeep(o), strings.Clone(Excerpt(value)), format, args...)
}

// warnKind is warnf for a warning that can repeat on every row: kind names
// it in the count of those not listed (see ProblemBound).
func (a *Assembler) warnKind(kind string, o Origin, value, format string, args ...any) {
	a.warnf(o, value, format, args...)
	a.problems[len(a.problems)-1].Kind = kind
}

func asmOriginOf(c Cell, rec Record, col string) Origin {
	o := c.Origin
	if o.File == "" {
		o = rec.Origin
	}
	if o.Header == "" {
		o.Header = col
	}
	return o
}

// unplace records that the record at o is in no plan: its plan key has an
// error. A grid record (its origin a cell: the grid's label) stands for its
// sheet, a table record for its row.
func (a *Assembler) unplace(o Origin) {
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
func (a *Assembler) Finish() ([]*InputPlan, Problems) {
	plans := make([]*InputPlan, 0, len(a.plans))
	for _, acc := range a.plans {
		a.finishPlan(acc)
		plans = append(plans, acc.plan)
		if a.bound != nil && len(a.problems)-a.admitted > 4096 {
			a.compact()
		}
	}
	a.splitPlans()
	a.compact()
	ps := a.problems
	ps.Sort()
	return plans, ps.dedupe()
}

// planIndexKey encodes k as byKey's key. Rows are one plan by the rules
// matching uses: the company identifiers as SameIdentifier compares them
// (IdentifierKey: "2011/004512/07" is "2011-004512-07"), the account and
// plan names as SameName does (NameKey). Each string ends in 0xff, a byte
// no key holds (the keys are UTF-8), so that no two keys encode alike. The
// bytes are the assembler's buffer, valid until the next call. (A PlanKey
// is 112 bytes; the usual key is a third of that, and a table of 10,000
// plans holds 10,000 of them until the read ends.)
func (a *Assembler) planIndexKey(k PlanKey) []byte {
	b := binary.AppendVarint(a.keyBuf[:0], k.PlanID)
	b = append(appendNameKey(b, k.Account), 0xff)
	for _, s := range [...]string{k.Company.VAT, k.Company.Registration, k.Company.IDNumber} {
		b = append(appendIdentifierKey(b, s), 0xff)
	}
	b = append(appendNameKey(b, k.Name), 0xff)
	b = binary.AppendVarint(b, int64(k.StartDate.Year))
	b = binary.AppendVarint(b, int64(k.StartDate.Month))
	b = binary.AppendVarint(b, int64(k.StartDate.Day))
	a.keyBuf = b
	return b
}

// splitPlans reports rows that describe one plan but fall under two plan
// keys: the same name and start date with company identifiers that do not
// contradict each other, where one set of rows gives more identifiers, or
// a plan_id, than the other. Applied as they are, they would create a
// second plan instead of updating the first.
//
// The plans are grouped by name and start date by a stable sort (a slice
// of pointers, rather than a map of every plan), so that each plan meets
// the earlier plans of its group in the order they were read.
func (a *Assembler) splitPlans() {
	// Each plan with its name as SameName compares it (NameKey).
	type named struct {
		key string
		p   *InputPlan
	}
	plans := make([]named, 0, len(a.plans))
	for _, acc := range a.plans {
		if p := acc.plan; p.Name != "" && !p.StartDate.IsZero() {
			plans = append(plans, named{NameKey(p.Name), p})
		}
	}
	same := func(p, q named) int {
		if c := strings.Compare(p.key, q.key); c != 0 {
			return c
		}
		return p.p.StartDate.Compare(q.p.StartDate)
	}
	slices.SortStableFunc(plans, same)
	for i := 0; i < len(plans); {
		j := i + 1
		for j < len(plans) && same(plans[i], plans[j]) == 0 {
			j++
		}
		group := plans[i:j]
		for k, pk := range group {
			p := pk.p
			for _, qk := range group[:k] {
				q := qk.p
				if !asmCompatible(q.Company, p.Company) || (q.PlanID != 0 && p.PlanID != 0) {
					continue
				}
				a.errorf(p.Origin, "", "this row and the row at %s describe the same plan %q starting %s, but give different identifiers (%s there, %s here): every row of a plan must give the same plan_id and company identifiers, or the plan would be created twice",
					asmRef(q.Origin, p.Origin), p.Name, p.StartDate, asmIdentifiers(q), asmIdentifiers(p))
				break
			}
		}
		i = j
	}
}

// asmCompatible reports whether two sets of company identifiers can name
// the same company: no identifier given in both differs (SameIdentifier).
func asmCompatible(a, b CompanyIDs) bool {
	same := func(x, y string) bool { return x == "" || y == "" || SameIdentifier(x, y) }
	return same(a.VAT, b.VAT) && same(a.Registration, b.Registration) && same(a.IDNumber, b.IDNumber)
}

// asmSameField reports whether two rows of one plan give the same value
// for the plan column col: company identifiers as SameIdentifier compares
// them and the account as SameName does (the rules the plan's key and
// apply's routing use, so two spellings of one identifier are one plan,
// not a disagreement); any other column exactly, since its text is what
// is sent (two spellings of a plan name would leave it to chance which
// one the service keeps).
func asmSameField(col, x, y string) bool {
	return PlanColumnKey(col, x) == PlanColumnKey(col, y)
}

// PlanColumnKey is the text by which the value of plan column col groups
// rows into plans: a company identifier's IdentifierKey (when it has a
// letter or digit), the account's NameKey, any other column's text trimmed
// (it is sent as it is). A reader that gathers lines into records (the
// long layout) keys them by it, as the assembler keys plans.
func PlanColumnKey(col, value string) string {
	switch col {
	case ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber:
		if k := IdentifierKey(value); k != "" {
			return k
		}
	case ColAccount:
		return NameKey(value)
	}
	return strings.TrimSpace(value)
}

func asmIdentifiers(p *InputPlan) string {
	var parts []string
	if p.PlanID != 0 {
		parts = append(parts, fmt.Sprintf("plan_id %d", p.PlanID))
	}
	if !p.Company.IsZero() {
		parts = append(parts, p.Company.String())
	}
	if len(parts) == 0 {
		return "no plan_id or company"
	}
	return strings.Join(parts, ", ")
}

func (a *Assembler) fieldOrigin(acc *asmPlan, col string) Origin {
	if _, place, set := acc.field(asmPlanColumnIndex(col)); set {
		return place.origin()
	}
	return acc.plan.Origin
}

// finishPlan runs the checks of one whole plan: its dates (checkDates),
// each target's year against them (keepTargets), the targets' order, and
// the warnings of a plan that may be new and of its counters.
func (a *Assembler) finishPlan(acc *asmPlan) {
	p := acc.plan // (its fieldPlaces are set as the rows are read)
	datesOK := a.checkDates(acc)
	var years []FinancialYear
	if datesOK && !p.StartDate.IsZero() && !p.EndDate.IsZero() {
		years = PlanYears(p.StartDate, ClampEnd(p.EndDate))
	}
	a.keepTargets(acc, years)
	sort.SliceStable(p.Targets, func(i, j int) bool {
		ti, tj := p.Targets[i], p.Targets[j]
		if yi, yj := asmSortYear(ti), asmSortYear(tj); yi != yj {
			return yi < yj
		}
		return asmTypeIndex(ti.TargetType) < asmTypeIndex(tj.TargetType)
	})
	if p.PlanID == 0 && datesOK {
		a.skippedYearsWarning(p)
	}
	a.domainWarnings(p)
}

// checkDates checks the plan's dates: a new plan's are required, the
// start no earlier and the end no later than the service allows. It
// reports false when the end is before the start.
func (a *Assembler) checkDates(acc *asmPlan) bool {
	p := acc.plan
	if p.PlanID == 0 {
		if p.StartDate.IsZero() {
			a.errorf(p.Origin, "", "%s is a new plan (no plan_id), so it needs start_date (YYYY-MM-DD)", asmPlanLabel(p))
		}
		if p.EndDate.IsZero() && !acc.endBad { // an invalid end_date is reported at its cell, once
			a.errorf(p.Origin, "", "%s is a new plan (no plan_id), so it needs end_date (YYYY-MM-DD)", asmPlanLabel(p))
		}
	}
	if !p.StartDate.IsZero() && p.StartDate.Before(EarliestStart) {
		a.errorf(a.fieldOrigin(acc, ColStartDate), p.StartDate.String(), "start_date %s is before %s, the earliest start the service accepts", p.StartDate, EarliestStart)
	}
	if !p.EndDate.IsZero() && p.EndDate.After(LatestEnd) {
		a.warnf(a.fieldOrigin(acc, ColEndDate), p.EndDate.String(), "end_date %s is after %s; the service will clamp the plan's end to %s", p.EndDate, LatestEnd, LatestEnd)
	}
	if !p.StartDate.IsZero() && !p.EndDate.IsZero() && p.EndDate.Before(p.StartDate) {
		a.errorf(a.fieldOrigin(acc, ColEndDate), p.EndDate.String(), "end_date %s is before start_date %s", p.EndDate, p.StartDate)
		return false
	}
	return true
}

// keepTargets sets the plan's targets to those of acc.targets whose year
// fits the plan's financial years (years, nil when the dates do not give
// them), each with both its year number and financial year, and each
// plan, year and target type once.
func (a *Assembler) keepTargets(acc *asmPlan, years []FinancialYear) {
	p := acc.plan
	first := FinancialYear(0)
	if !p.StartDate.IsZero() {
		first = FinancialYearOf(p.StartDate)
	}
	if a.slots == nil {
		a.slots = map[asmSlot]*InputTarget{}
	}
	clear(a.slots) // one map for every plan: its buckets are reused
	seen := a.slots
	// The plan's targets are the ones kept of acc.targets, filtered in
	// place: the array is the plan's, allocated once.
	p.Targets = acc.targets[:0:len(acc.targets)]
	for _, t := range acc.targets {
		if !a.targetYearFits(p, t, first, years) {
			continue
		}
		if first != 0 {
			if t.YearNumber == 0 {
				t.YearNumber = int(t.FinancialYear-first) + 1
			}
			if t.FinancialYear == 0 {
				t.FinancialYear = first + FinancialYear(t.YearNumber-1)
			}
		}
		var s asmSlot
		if t.YearNumber != 0 {
			s = asmSlot{false, t.YearNumber, t.TargetType}
		} else {
			s = asmSlot{true, int(t.FinancialYear), t.TargetType}
		}
		if prev, dup := seen[s]; dup {
			a.errorf(t.Origin, "", "%s, year %s, %s appears twice: at %s and again here; keep one row for each plan, year and target type", asmPlanLabel(p), asmYearLabel(t), t.TargetType, asmRef(prev.Origin, t.Origin))
			continue
		}
		seen[s] = t
		p.Targets = append(p.Targets, t)
	}
	clear(acc.targets[len(p.Targets):]) // the targets not kept are not held
}

// targetYearFits reports whether target t's year agrees with itself and
// lies inside plan p (first is the plan's first financial year, 0 when it
// has no start date; years its financial years), reporting why not.
func (a *Assembler) targetYearFits(p *InputPlan, t *InputTarget, first FinancialYear, years []FinancialYear) bool {
	if first != 0 && t.YearNumber != 0 && t.FinancialYear != 0 {
		want := first + FinancialYear(t.YearNumber-1)
		if want != t.FinancialYear {
			_, fy := a.yearPlaces(t)
			a.errorf(fy.origin(t.Origin.Row), fy.raw, "year_number %d and financial_year %s disagree: for a plan starting %s, year %d is %s", t.YearNumber, t.FinancialYear, p.StartDate, t.YearNumber, want)
			return false
		}
	}
	span := func() string {
		return fmt.Sprintf("the plan from %s to %s has %s (%s to %s)", p.StartDate, ClampEnd(p.EndDate), Plural(len(years), "financial year"), years[0], years[len(years)-1])
	}
	switch {
	case len(years) > 0 && t.YearNumber > len(years):
		year, _ := a.yearPlaces(t)
		a.errorf(year.origin(t.Origin.Row), year.raw, "year_number %d is outside the plan: %s", t.YearNumber, span())
		return false
	case len(years) > 0 && t.FinancialYear != 0 && (t.FinancialYear < years[0] || t.FinancialYear > years[len(years)-1]):
		_, fy := a.yearPlaces(t)
		a.errorf(fy.origin(t.Origin.Row), fy.raw, "financial_year %s is outside the plan: %s", t.FinancialYear, span())
		return false
	case len(years) == 0 && first != 0 && t.FinancialYear != 0 && t.FinancialYear < first:
		_, fy := a.yearPlaces(t)
		a.errorf(fy.origin(t.Origin.Row), fy.raw, "financial_year %s is before the plan's first financial year %s (the plan starts %s)", t.FinancialYear, first, p.StartDate)
		return false
	}
	return true
}

// skippedYearsWarning warns when a plan without plan_id, which may be new,
// skips a financial year inside its dates (SkippedYears): were it created,
// the service would fill the year itself. Only diff and apply know whether
// the plan is on the service; they note it for the plans they create.
func (a *Assembler) skippedYearsWarning(p *InputPlan) {
	skipped := SkippedYears(p)
	if len(skipped) == 0 {
		return
	}
	years, fill := skippedYearsText(p, skipped)
	all := PlanYears(p.StartDate, ClampEnd(p.EndDate))
	a.warnf(p.Origin, "", "%s skips %s: its rows give years %s of the plan's %s (%s to %s). "+
		"If the plan is new (no plan on the service has its name and start date), the service fills the skipped %s %s; "+
		"add the rows if that is not meant",
		asmPlanLabel(p), years, givenYearsText(p), Plural(len(all), "financial year"), all[0], all[len(all)-1],
		plural(len(skipped), "year", "years"), fill)
}

func asmYearLabel(t *InputTarget) string {
	switch {
	case t.YearNumber != 0 && t.FinancialYear != 0:
		return fmt.Sprintf("%d (%s)", t.YearNumber, t.FinancialYear)
	case t.YearNumber != 0:
		return strconv.Itoa(t.YearNumber)
	}
	return t.FinancialYear.String()
}

func asmSortYear(t *InputTarget) int {
	if t.YearNumber != 0 {
		return t.YearNumber
	}
	return int(t.FinancialYear)
}

func asmTypeIndex(tt string) int {
	for i, v := range TargetTypes {
		if v == tt {
			return i
		}
	}
	return len(TargetTypes)
}

// domainWarnings warns about disabled counters above the matching
// all_employees counters, and totals that disagree with their parts.
// p.Targets is sorted by year, so the targets of one year are adjacent.
func (a *Assembler) domainWarnings(p *InputPlan) {
	for _, t := range p.Targets {
		a.totalWarnings(t)
	}
	names := a.cat.Names()
	for i, t := range p.Targets {
		if t.TargetType != TargetDisabled {
			continue
		}
		// The year's all_employees target; the last one when there were several.
		var all *InputTarget
		y := asmSortYear(t)
		for j := i; j >= 0 && asmSortYear(p.Targets[j]) == y; j-- {
			if u := p.Targets[j]; u.TargetType == TargetAll && all == nil {
				all = u
			}
		}
		for j := i + 1; j < len(p.Targets) && asmSortYear(p.Targets[j]) == y; j++ {
			if u := p.Targets[j]; u.TargetType == TargetAll {
				all = u
			}
		}
		if all == nil {
			continue
		}
		td, ad := t.Counters.d, all.Counters.d
		fast := td != nil && ad != nil && td.cat == ad.cat && td.small != nil && ad.small != nil
		for i, name := range names {
			// Where both are laid out by one catalog in 32-bit values,
			// the usual case (not set in both, or not above) is seen
			// without Get.
			if fast && (td.set[i>>6]&ad.set[i>>6]&(uint64(1)<<(uint(i)&63)) == 0 || td.small[i] <= ad.small[i]) {
				continue
			}
			d, okD := t.Counters.Get(i)
			if !okD {
				continue
			}
			n, okA := all.Counters.Get(i)
			if okA && d > n {
				a.warnKind("disabled above all employees", t.CellOf(name), strconv.FormatInt(d, 10), "%s for disabled_employees (%d) is above the same counter for all_employees (%d, at %s); disabled employees are part of all employees", name, d, n, asmRef(all.CellOf(name), t.CellOf(name)))
			}
		}
	}
}

func (a *Assembler) totalWarnings(t *InputTarget) {
	// Targets read here have the Assembler's catalog; look counters up by
	// their index in it rather than by name.
	c := t.Counters
	if c.Catalog() != a.cat {
		c, _ = CountersIn(a.cat, c.Map()) // (not reached: Add makes every target's counters)
	}
	get := func(_ string, i int) (int64, bool) {
		if i < 0 {
			return 0, false
		}
		return c.Get(i)
	}
	for i := range a.totals {
		tn := &a.totals[i]
		total, totalSet := get(tn.total, tn.totalI)
		sum, complete := int64(0), tn.levels != nil
		for j, name := range tn.levels {
			v, set := get(name, tn.levelsI[j])
			if !set {
				complete = false
				break
			}
			sum += v
		}
		if tn.hasTotal && totalSet && complete && sum != total {
			a.warnKind("total permanent employees not the sum of the levels", t.CellOf(tn.total), strconv.FormatInt(total, 10), "%s is %d, but the six occupational levels for %s %s add up to %d", tn.total, total, tn.race, tn.gender, sum)
		}
		grand, grandSet := get(tn.grand, tn.grandI)
		temp, tempSet := get(tn.temp, tn.tempI)
		if tn.hasGrand && tn.hasTemp && tn.hasTotal && grandSet && tempSet && totalSet && grand != total+temp {
			a.warnKind("grand total not permanent plus temporary employees", t.CellOf(tn.grand), strconv.FormatInt(grand, 10), "%s is %d, but total permanent (%d) plus temporary (%d) employees for %s %s is %d", tn.grand, grand, total, temp, tn.race, tn.gender, total+temp)
		}
	}
}

// MissingCompany says where a plan without a company identifier should
// name one and what to fill in. On a grid sheet that is the company block
// the reader found (CompanyCell, "A6:B8": the "Company VAT number",
// "Company registration number" and "Company ID number" labels and the
// value cells beside them); in a table, the company columns of the plan's
// row.
func MissingCompany(p *InputPlan) (Origin, string) {
	c := p.CompanyCell
	if c.Cell == "" {
		return p.Origin, "fill in company_vat_number, company_registration_number or company_id_number"
	}
	from, to, isRange := strings.Cut(c.Cell, ":")
	lc, lr, ok1 := cellCoordinates(from)
	vc, vr, ok2 := cellCoordinates(to)
	switch {
	case !isRange || !ok1 || !ok2 || vc != lc+1 || vr < lr:
		return c, fmt.Sprintf("fill in the cell beside the label %q, %q or %q on sheet %s",
			"Company VAT number", "Company registration number", "Company ID number", c.Sheet)
	case vr == lr:
		return c, fmt.Sprintf("fill in %s, beside the company label in %s (or the cell beside another of the labels %q, %q and %q)",
			to, from, "Company VAT number", "Company registration number", "Company ID number")
	default:
		return c, fmt.Sprintf("fill in the company's VAT number, registration number or ID number in the value cells %s, beside the labels %q, %q and %q in %s",
			CellRef(vc, lr)+":"+CellRef(vc, vr), "Company VAT number", "Company registration number", "Company ID number", CellRef(lc, lr)+":"+CellRef(lc, vr))
	}
}

// cellCoordinates parses an A1-style reference ("F12") into its 1-based
// column and row; ok is false for anything else.
func cellCoordinates(ref string) (col, row int, ok bool) {
	i := 0
	for i < len(ref) && i < 3 && ref[i] >= 'A' && ref[i] <= 'Z' {
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	row, err := strconv.Atoi(ref[i:])
	if i == 0 || err != nil || row < 1 || ref[i] == '+' {
		return 0, 0, false
	}
	return col, row, true
}

// asmRef cites an earlier place: its short reference ("Targets!F12",
// "line 4") when it is in the same file as here, else with the file name.
func asmRef(earlier, here Origin) string {
	e := earlier
	e.Header = ""
	if earlier.File == here.File {
		e.File = ""
		return strings.TrimPrefix(strings.TrimPrefix(e.String(), "."), " ")
	}
	return e.String()
}

// asmPlanLabel names a plan in messages: its id, or its name with the
// company and start date when known.
func asmPlanLabel(p *InputPlan) string {
	if p.PlanID != 0 {
		return fmt.Sprintf("plan %d", p.PlanID)
	}
	s := fmt.Sprintf("plan %q", Excerpt(p.Name))
	if !p.StartDate.IsZero() {
		s += " starting " + p.StartDate.String()
	}
	if !p.Company.IsZero() {
		s += " of company " + p.Company.String()
	}
	return s
}
