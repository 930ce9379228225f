package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"strconv"
	"strings"
	"unicode/utf8"
)

// asmDateMemo is the last text a date column read as a date: its value
// and Date.String.
type asmDateMemo struct {
	text string
	d    pipeline.Date
	s    string
}

// asmPlanColumnIndex returns the index of a plan column in asmPlanColumns.
func asmPlanColumnIndex(col string) int {
	for i, c := range pipeline.PlanColumns {
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
	company    pipeline.CompanyIDs
	name       string
	start, end pipeline.Date
	startBad   bool
	endBad     bool
	sector     string
	scorecard  string
	yearNumber int
	fy         pipeline.FinancialYear
	yearGiven  bool // year_number or financial_year written (valid or not)
	targetType string
	typeGiven  bool
	given      [pipeline.NumPlanColumns]string // by asmPlanColumns index: canonical value, for valid non-blank values
	givenSet   [pipeline.NumPlanColumns]bool
	companyAt  pipeline.Origin // a blank company identifier cell the record shows (a grid's labelled cell)
}

func (v *asmRowValues) give(col, value string) {
	i := asmPlanColumnIndex(col)
	v.given[i], v.givenSet[i] = value, true
}

// cellError reports an error at cell c of column col of rec: at the
// record's place when the cell has none, under the column's name when the
// cell has no header.
func (a *Assembler) cellError(rec *pipeline.Record, c pipeline.Cell, col, format string, args ...any) {
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
func (a *Assembler) readPlanID(rec *pipeline.Record, v *asmRowValues) {
	c, ok := rec.Cell(pipeline.ColPlanID)
	if !ok {
		return
	}
	n, set, err := pipeline.IntegerValue(c)
	switch {
	case err != nil:
		a.cellError(rec, c, pipeline.ColPlanID, "plan_id must be the whole-number id of an existing plan: %v", err)
		v.planIDBad = true
	case set && n <= 0:
		a.cellError(rec, c, pipeline.ColPlanID, "plan_id must be a positive whole number")
		v.planIDBad = true
	case set:
		v.planID = n
		v.give(pipeline.ColPlanID, strconv.FormatInt(n, 10))
	}
}

// readPlanTexts reads the record's account, company identifiers and plan
// name.
func (a *Assembler) readPlanTexts(rec *pipeline.Record, v *asmRowValues) {
	for _, col := range []string{pipeline.ColAccount, pipeline.ColCompanyVAT, pipeline.ColCompanyRegistration, pipeline.ColCompanyIDNumber, pipeline.ColPlanName} {
		c, ok := rec.Cell(col)
		if !ok {
			continue
		}
		s, set, err := pipeline.TextValue(c)
		if err != nil {
			a.cellError(rec, c, col, "%s: %v", col, err)
			if col == pipeline.ColPlanName {
				v.nameBad = true
			}
			continue
		}
		if !set {
			if col != pipeline.ColPlanName && v.companyAt.Cell == "" && c.Origin.Cell != "" {
				v.companyAt = c.Origin
			}
			continue
		}
		if col == pipeline.ColPlanName {
			if err := pipeline.CheckNameText(s); err != nil {
				a.cellError(rec, c, col, "%s: %v", col, err)
				v.nameBad = true
				continue
			}
		}
		if col != pipeline.ColAccount && col != pipeline.ColPlanName && pipeline.IdentifierKey(s) == "" {
			// "-" or "/" in a company column: no identifier (sameIdentifier).
			a.noIdentifierWarning(c, col, s)
			if v.companyAt.Cell == "" && c.Origin.Cell != "" {
				v.companyAt = c.Origin
			}
			continue
		}
		if max := pipeline.MaxTextLen(col); utf8.RuneCountInString(s) > max {
			// The value is still read, so that the row's other checks
			// speak of it; the error keeps it from being sent.
			a.cellError(rec, c, col, "%s is %d characters long; at most %d are allowed", col, utf8.RuneCountInString(s), max)
		}
		v.give(col, s)
		if c.Kind == pipeline.CellNumber {
			a.lostZeroWarning(c, col, s)
		}
		switch col {
		case pipeline.ColAccount:
			v.account = s
		case pipeline.ColCompanyVAT:
			v.company.VAT = s
		case pipeline.ColCompanyRegistration:
			v.company.Registration = s
		case pipeline.ColCompanyIDNumber:
			v.company.IDNumber = s
		case pipeline.ColPlanName:
			v.name = s
		}
	}
}

// readDates reads the record's start_date and end_date.
func (a *Assembler) readDates(rec *pipeline.Record, v *asmRowValues) {
	for k, col := range []string{pipeline.ColStartDate, pipeline.ColEndDate} {
		c, ok := rec.Cell(col)
		if !ok {
			continue
		}
		memo := &a.lastDates[k]
		if c.Kind == pipeline.CellText && memo.s != "" && c.Text == memo.text {
			// DateValue of a text cell depends on its text alone.
			v.give(col, memo.s)
			if col == pipeline.ColStartDate {
				v.start = memo.d
			} else {
				v.end = memo.d
			}
			continue
		}
		d, set, err := pipeline.DateValue(c)
		if err != nil {
			a.cellError(rec, c, col, "%s: %v", col, err)
			if col == pipeline.ColStartDate {
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
		if c.Kind == pipeline.CellText {
			*memo = asmDateMemo{text: c.Text, d: d, s: ds}
		}
		v.give(col, ds)
		if col == pipeline.ColStartDate {
			v.start = d
		} else {
			v.end = d
		}
	}
}

// readSector reads the record's sector, one of the 18 sector values.
func (a *Assembler) readSector(rec *pipeline.Record, v *asmRowValues) {
	c, ok := rec.Cell(pipeline.ColSector)
	if !ok {
		return
	}
	s, set, err := pipeline.TextValue(c)
	switch {
	case err != nil:
		a.cellError(rec, c, pipeline.ColSector, "sector: %v", err)
	case set:
		exact, gazette, sugg, found := pipeline.SectorValue(s)
		taught := false
		if !found && a.sectors != nil {
			exact, found = a.sectors(s)
			taught = found
		}
		if found {
			v.sector = exact
			v.give(pipeline.ColSector, exact)
			if gazette && !taught {
				a.sectorSpellingWarning(c, s, exact)
			}
		} else {
			a.cellError(rec, c, pipeline.ColSector, "%q is not one of the 18 sector values; leave it blank or use one of the listed sectors exactly", pipeline.Excerpt(s))
			a.Problems[len(a.Problems)-1].Suggestions = sugg
		}
	}
}

// sectorSpellingWarning says, once per spelling and file, that a sector
// cell in the gazette's (or EEA17's) words was read as the service's value.
func (a *Assembler) sectorSpellingWarning(c pipeline.Cell, s, value string) {
	k := "sector|" + c.Origin.File + "|" + s
	if a.unknown[k] {
		return
	}
	a.unknown[k] = true
	o := c.Origin
	if o.Header == "" {
		o.Header = pipeline.ColSector
	}
	a.warnf(o, s, "the sector %q is the gazette's (or form EEA17's) spelling: read as the service's %q; write %q to silence this", pipeline.Excerpt(s), value, value)
}

// readScorecard reads the record's scorecard_id.
func (a *Assembler) readScorecard(rec *pipeline.Record, v *asmRowValues) {
	c, ok := rec.Cell(pipeline.ColScorecardID)
	if !ok {
		return
	}
	s, set, err := pipeline.TextValue(c)
	if err == nil && set {
		err = pipeline.CheckNameText(s)
	}
	switch {
	case err != nil:
		a.cellError(rec, c, pipeline.ColScorecardID, "scorecard_id: %v", err)
	case set && !strings.HasPrefix(s, "scorecard_"):
		a.cellError(rec, c, pipeline.ColScorecardID, "%q is not a scorecard id; scorecard ids start with scorecard_ (%s)", pipeline.Excerpt(s), pipeline.ScorecardsHint)
	case set && utf8.RuneCountInString(s) > pipeline.MaxTextLen(pipeline.ColScorecardID):
		a.cellError(rec, c, pipeline.ColScorecardID, "scorecard_id is %d characters long; at most %d are allowed", utf8.RuneCountInString(s), pipeline.MaxTextLen(pipeline.ColScorecardID))
	case set:
		v.scorecard = s
		v.give(pipeline.ColScorecardID, s)
	}
}

// readYear reads the record's year_number and financial_year and returns
// the places of their cells.
func (a *Assembler) readYear(rec *pipeline.Record, v *asmRowValues) (yearPlace, fyPlace pipeline.ReadPlace) {
	if c, ok := rec.Cell(pipeline.ColYearNumber); ok && !asmIsBlank(c) {
		v.yearGiven = true
		yearPlace = a.place(asmOriginOf(c, *rec, pipeline.ColYearNumber), rec.Origin.Row, asmCellText(c))
		n, _, err := pipeline.IntegerValue(c)
		switch {
		case err != nil:
			a.cellError(rec, c, pipeline.ColYearNumber, "year_number: %v; write 1 for the plan's first financial year, 2 for the second, and so on", err)
		case n < 1 || n > 100:
			a.cellError(rec, c, pipeline.ColYearNumber, "year_number must be 1 or more (1 is the plan's first financial year)")
		default:
			v.yearNumber = int(n)
		}
	}
	if c, ok := rec.Cell(pipeline.ColFinancialYear); ok && !asmIsBlank(c) {
		v.yearGiven = true
		fyPlace = a.place(asmOriginOf(c, *rec, pipeline.ColFinancialYear), rec.Origin.Row, asmCellText(c))
		fy, _, err := pipeline.FinancialYearValue(c)
		if err != nil {
			a.cellError(rec, c, pipeline.ColFinancialYear, "financial_year: %v", err)
		} else {
			v.fy = fy
		}
	}
	return yearPlace, fyPlace
}

// readTargetType reads the record's target_type.
func (a *Assembler) readTargetType(rec *pipeline.Record, v *asmRowValues) {
	c, ok := rec.Cell(pipeline.ColTargetType)
	if !ok || asmIsBlank(c) {
		return
	}
	v.typeGiven = true
	s, _, err := pipeline.TextValue(c)
	if err != nil {
		a.cellError(rec, c, pipeline.ColTargetType, "target_type: %v", err)
	} else if exact, sugg, found := pipeline.NormalizeTargetType(s); found {
		v.targetType = exact
	} else {
		a.cellError(rec, c, pipeline.ColTargetType, "%q is not a target type; write all_employees or disabled_employees", pipeline.Excerpt(s))
		a.Problems[len(a.Problems)-1].Suggestions = sugg
	}
}

// requireYearAndType reports a record without a target type or a year.
func (a *Assembler) requireYearAndType(rec *pipeline.Record, v *asmRowValues) {
	if !v.typeGiven {
		o := rec.Origin
		if c, ok := rec.Cell(pipeline.ColTargetType); ok {
			o = asmOriginOf(c, *rec, pipeline.ColTargetType)
		}
		a.errorf(o, "", "target_type is missing; every row needs all_employees or disabled_employees")
	}
	if !v.yearGiven {
		o := rec.Origin
		if c, ok := rec.Cell(pipeline.ColYearNumber); ok {
			o = asmOriginOf(c, *rec, pipeline.ColYearNumber)
		} else if c, ok := rec.Cell(pipeline.ColFinancialYear); ok {
			o = asmOriginOf(c, *rec, pipeline.ColFinancialYear)
		}
		a.errorf(o, "", "the row has neither year_number nor financial_year; give one of them (for example 1, or 2026/27)")
	}
}

// identifierDigits are the lengths of South African VAT and ID numbers.
var identifierDigits = map[string]int{pipeline.ColCompanyVAT: 10, pipeline.ColCompanyIDNumber: 13}

// LostLeadingZero reports whether the identifier s of column col (the
// company VAT or ID number) is digits only and fewer than such numbers
// have, as when a spreadsheet or a shell drops a leading zero, and how
// many digits it should have.
func LostLeadingZero(col, s string) (want int, lost bool) {
	want, ok := identifierDigits[col]
	if !ok || s == "" || len(s) >= want || strings.Trim(s, "0123456789") != "" {
		return want, false
	}
	return want, true
}

// lostZeroWarning warns when an identifier typed as a number is shorter
// than such numbers are: the spreadsheet has probably dropped a leading
// zero (ID numbers of people born in the 2000s start with 0).
func (a *Assembler) lostZeroWarning(c pipeline.Cell, col, s string) {
	want, ok := LostLeadingZero(col, s)
	if !ok {
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
// blank: such a text identifies no company (sameIdentifier), so it is
// neither part of the plan's key nor sent to the company lookup.
func (a *Assembler) noIdentifierWarning(c pipeline.Cell, col, s string) {
	o := c.Origin
	if o.Header == "" {
		o.Header = col
	}
	k := "noid|" + o.File + "|" + o.Sheet + "|" + col + "|" + s
	if a.unknown[k] {
		return
	}
	a.unknown[k] = true
	a.warnf(o, s, "%s %q has no letter or digit, so it identifies no company: it is read as blank (the company is found by the plan's other identifiers); leave the cell empty when there is no such number", col, pipeline.Excerpt(s))
}

func asmIsBlank(c pipeline.Cell) bool {
	return c.Kind == pipeline.CellBlank || (c.Kind == pipeline.CellText && strings.TrimSpace(c.Text) == "")
}

func asmCellText(c pipeline.Cell) string {
	if c.Kind == pipeline.CellBlank {
		return ""
	}
	return c.Text
}

// dateText returns d.String(), formatted once per date.
func (a *Assembler) dateText(d pipeline.Date) string {
	if s, ok := a.dates[d]; ok {
		return s
	}
	s := d.String()
	if len(a.dates) < 4096 {
		a.dates[d] = s
	}
	return s
}
