package templates

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// ListsSheet is the hidden sheet that holds the drop-down lists (the
// sectors, the target types). Hidden sheets are never read as data.
const ListsSheet = "Lists"

// InstructionsSheet is the name of the template's instructions sheet.
const InstructionsSheet = "Instructions"

// Lists sheet columns.
const (
	sectorListCol     = "A"
	targetTypeListCol = "B"
)

// PlanSheet is what one grid plan sheet shows: the metadata values and the
// grids. Values that are zero are left blank.
type PlanSheet struct {
	Title       string // shown in the first row; "" = a generic title
	PlanID      int64
	Name        string
	Company     pipeline.CompanyIDs
	StartDate   pipeline.Date
	EndDate     pipeline.Date
	Sector      string
	ScorecardID string
	Account     string // the configured account's name; "" leaves the cell blank
	Grids       []Grid
	// Charts is how many charts the caller places below the grids, at
	// ChartRows: each starts a printed page of its own.
	Charts int
}

// Grid is one (financial year, target type) grid of a plan sheet.
type Grid struct {
	YearNumber    int                    // 0 = not shown
	FinancialYear pipeline.FinancialYear // 0 = not shown
	TargetType    string
	Counters      pipeline.Counters // blank counters: blank cells
	// Label is the label row's text; "" = GridLabel of the year and
	// target type.
	Label string
}

// Layout of a plan sheet: the label column, the first metadata row and the
// width of a metadata value cell (merged across the first counter columns).
const (
	labelCol     = 1
	firstMetaRow = 4
	metaSpan     = 5 // value cell merged across columns B:F
	metaHelpCol  = labelCol + metaSpan + 1
	metaHelpSpan = 5 // help text merged across columns G:K
	gridGap      = 1 // blank rows between grids
)

// SheetNames chooses the names of many sheets, each valid (at most 31
// characters, none of []:*?/\, no leading or trailing apostrophe, not
// "History") and unique (compared without case) among the names given
// before: one set of names taken, not a list
// folded again for every sheet (quadratic in sheets).
type SheetNames struct{ used map[string]bool }

// NewSheetNames returns a SheetNames with the names in taken (and
// "History") taken.
func NewSheetNames(taken []string) *SheetNames {
	s := &SheetNames{used: map[string]bool{foldKey("History"): true}}
	for _, t := range taken {
		s.Take(t)
	}
	return s
}

// Take marks name as taken.
func (s *SheetNames) Take(name string) { s.used[foldKey(name)] = true }

// Name returns a valid sheet name derived from base (fallback when base
// has nothing usable) that is not taken, and takes it.
func (s *SheetNames) Name(base, fallback string) string {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '[', ']', ':', '*', '?', '/', '\\':
			return '-'
		}
		if r < ' ' || r == 0xFFFE || r == 0xFFFF {
			return -1
		}
		return r
	}, base)
	clean = strings.Join(strings.Fields(clean), " ")
	clean = strings.Trim(clean, "'")
	if clean == "" {
		clean = fallback
	}
	for i := 1; ; i++ {
		suffix := ""
		if i > 1 {
			suffix = fmt.Sprintf(" (%d)", i)
		}
		name := truncateWords(clean, 31-len(suffix))
		name = strings.TrimRight(strings.TrimRight(name, " "), "'") + suffix
		if key := foldKey(name); !s.used[key] {
			s.used[key] = true
			return name
		}
	}
}

// foldKey returns s with each rune replaced by the smallest rune of its
// case-folding orbit (unicode.SimpleFold): two names have the same key
// exactly when strings.EqualFold says they are equal, which is how
// excelize (NewSheet returns the existing sheet then) and Excel compare
// sheet names. strings.ToLower misses pairs such as "ſ" and "S".
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, s)
}

// truncateWords cuts s to at most n UTF-16 units (how Excel and excelize
// measure a sheet name: a character outside the Basic Multilingual Plane,
// an emoji, counts twice) at a word boundary (a space)
// when one falls in the second half, and drops what a cut leaves dangling
// at the end (spaces, hyphens, dashes, commas, an opening bracket).
func truncateWords(s string, n int) string {
	cut := truncateUTF16(s, n)
	if len(cut) == len(s) {
		return s
	}
	next, _ := utf8.DecodeRuneInString(s[len(cut):])
	if next != ' ' {
		if i := strings.LastIndex(cut, " "); i >= 0 && utf16Len(cut[:i]) >= n/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " -–—,;:.(&/+")
}

// truncateUTF16 returns the longest prefix of s, whole runes, of at most
// n UTF-16 units.
func truncateUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

// utf16Len returns the length of s in UTF-16 units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// EnsureListsSheet adds the hidden Lists sheet (sectors in column A, target
// types in column B) unless the workbook has it, and returns the absolute
// references of the two lists for drop-down validations.
func EnsureListsSheet(f *excelize.File) (sectors, targetTypes string, err error) {
	sectors, targetTypes = listRefs()
	if idx, _ := f.GetSheetIndex(ListsSheet); idx >= 0 {
		return sectors, targetTypes, nil
	}
	if _, err = f.NewSheet(ListsSheet); err != nil {
		return "", "", err
	}
	for i, s := range pipeline.Sectors {
		if err = f.SetCellStr(ListsSheet, fmt.Sprintf("%s%d", sectorListCol, i+1), s); err != nil {
			return "", "", err
		}
	}
	for i, s := range pipeline.TargetTypes {
		if err = f.SetCellStr(ListsSheet, fmt.Sprintf("%s%d", targetTypeListCol, i+1), s); err != nil {
			return "", "", err
		}
	}
	if err = f.SetColWidth(ListsSheet, sectorListCol, sectorListCol, 70); err != nil {
		return "", "", err
	}
	if err = f.SetSheetVisible(ListsSheet, false); err != nil {
		return "", "", err
	}
	ActivateFirstVisible(f)
	return sectors, targetTypes, nil
}

// listRefs returns the absolute references of the sector and target type
// lists on the Lists sheet.
func listRefs() (sectors, targetTypes string) {
	sectors = fmt.Sprintf("%s!$%s$1:$%s$%d", ListsSheet, sectorListCol, sectorListCol, len(pipeline.Sectors))
	targetTypes = fmt.Sprintf("%s!$%s$1:$%s$%d", ListsSheet, targetTypeListCol, targetTypeListCol, len(pipeline.TargetTypes))
	return sectors, targetTypes
}

// ActivateFirstVisible makes the first visible sheet the active one unless
// the active sheet is visible: a hidden active sheet makes Excel complain.
func ActivateFirstVisible(f *excelize.File) {
	list := f.GetSheetList()
	active := f.GetActiveSheetIndex()
	if active >= 0 && active < len(list) {
		if v, err := f.GetSheetVisible(list[active]); err == nil && v {
			return
		}
	}
	for i, s := range list {
		if v, err := f.GetSheetVisible(s); err == nil && v {
			f.SetActiveSheet(i)
			return
		}
	}
}

// AddPlanSheet adds a grid plan sheet named sheet to f, laid out for the
// catalog: title, the labelled metadata cells, then one grid per entry of
// ps.Grids (label row, race header row, gender header row, one row per
// level). It adds data validation (whole numbers >= 0 on counters, the
// sector drop-down, dates, a positive plan id), text formats on
// identifiers, frozen label column, styles and column widths. The sheet is
// an ordinary worksheet that callers may go on editing; WritePlanSheetXML
// writes the same sheet's worksheet part in one pass without excelize, for
// workbooks of many plans.
func AddPlanSheet(f *excelize.File, sheet string, ps PlanSheet, cat *pipeline.Catalog, st *Styles) error {
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	if _, _, err := EnsureListsSheet(f); err != nil {
		return err
	}
	l, err := layoutPlanSheet(ps, cat, st)
	if err != nil {
		return err
	}
	if err := l.cells.set(f, sheet); err != nil {
		return err
	}
	if err := SetPrintLayout(f, sheet, planPrint); err != nil {
		return err
	}
	for _, b := range l.breaks {
		if err := f.InsertPageBreak(sheet, xlsx.CellName(labelCol, b)); err != nil {
			return err
		}
	}
	for _, dv := range l.validations {
		if err := f.AddDataValidation(sheet, dv); err != nil {
			return err
		}
	}
	for _, w := range l.widths {
		first, _ := excelize.ColumnNumberToName(w.first)
		last, _ := excelize.ColumnNumberToName(w.last)
		if err := f.SetColWidth(sheet, first, last, w.width); err != nil {
			return err
		}
	}
	return f.SetPanes(sheet, l.panes)
}

// planLayout is a grid plan sheet, ready to be written either way.
type planLayout struct {
	cells       *sheetCells
	validations []*excelize.DataValidation
	widths      []colWidth
	panes       *excelize.Panes
	gridRows    []int // each grid's first (label) row
	breaks      []int // rows that start a printed page
}

// planPrint is how a plan sheet prints: landscape, one page wide, the
// title row on every page.
var planPrint = PrintSetup{TitleFirst: 1, TitleLast: 1}

// ChartPageRows is the rows a chart below a plan sheet's grids takes (see
// ChartRows): a landscape page at the scale the sheet prints at (fitted
// to its grids' width), with its title row.
const ChartPageRows = 34

// ChartRows returns the first row of each of n charts placed below ps's
// grids, the second row of a printed page of its own (the first is
// blank), fitted to the grids' width, so
// that tables and charts never share a page (PlanSheet.Charts puts the
// page breaks before them).
func ChartRows(ps PlanSheet, cat *pipeline.Catalog, n int) []int {
	row := firstMetaRow + len(MetaFields) + 1 + len(ps.Grids)*GridHeight(cat)
	out := make([]int, n)
	for k := range out {
		// A row below the page break: a chart anchored on the break's row
		// is drawn (clipped) on the page before it too.
		out[k] = row + k*ChartPageRows + 1
	}
	return out
}

// GridHeight returns the rows one grid of the catalog takes, with the gap
// after it.
func GridHeight(cat *pipeline.Catalog) int {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	return 3 + len(cat.Levels()) + gridGap
}

type colWidth struct {
	first, last int
	width       float64
}

// layoutPlanSheet lays out a grid plan sheet (see AddPlanSheet): its
// title, its metadata, its grids (and the charts' pages below them), its
// validations and its view.
func layoutPlanSheet(ps PlanSheet, cat *pipeline.Catalog, st *Styles) (*planLayout, error) {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	c := &sheetCells{}
	title := ps.Title
	if title == "" {
		title = "Employment Equity plan targets"
	}
	c.str(labelCol, 1, title, st.Title)
	c.str(labelCol, 2, "Counters are numbers of employees. A blank counter cell leaves the value on the service as it is. Fill in the white cells.", st.Subtitle)
	row, metaRef := c.meta(ps, st)
	l := &planLayout{cells: c}
	counterRanges := l.grids(ps, row+1, cat, st)
	vs, err := planValidations(counterRanges, metaRef)
	if err != nil {
		return nil, err
	}
	l.validations = vs
	l.view(len(cat.Races())*len(cat.Genders()), metaRef)
	return l, nil
}

// meta lays out the metadata rows (MetaFields) from firstMetaRow with
// ps's values, and returns the row after them and each field's value
// cell by key.
func (c *sheetCells) meta(ps PlanSheet, st *Styles) (row int, metaRef map[string]string) {
	row = firstMetaRow
	metaRef = map[string]string{}
	for _, m := range MetaFields {
		c.str(labelCol, row, m.Label, st.MetaLabel)
		vc := labelCol + 1
		metaRef[m.Key] = xlsx.CellName(vc, row)
		style := st.Text
		switch m.Kind {
		case MetaIdentifier:
			style = st.Identifier
		case MetaInteger:
			style = st.Integer
		case MetaDate:
			style = st.Date
		}
		for col := vc; col < vc+metaSpan; col++ {
			c.style(col, row, style)
		}
		c.merge(xlsx.CellName(vc, row), xlsx.CellName(vc+metaSpan-1, row))
		// The help wrapped within the columns beside the value, the row
		// as high as its lines: text left to run past the grids' last
		// column widens the printed page, which then prints smaller.
		c.str(metaHelpCol, row, m.Help, st.Help)
		for col := metaHelpCol + 1; col < metaHelpCol+metaHelpSpan; col++ {
			c.style(col, row, st.Help)
		}
		c.merge(xlsx.CellName(metaHelpCol, row), xlsx.CellName(metaHelpCol+metaHelpSpan-1, row))
		// (Help text is smaller than the 11 pt whose digits measure the
		// columns: a tenth more of it fits a line.)
		if h := ParagraphHeight(m.Help, metaHelpSpan*CounterWidth*1.1); h > 18 {
			c.height(row, h)
		}
		c.metaValue(vc, row, m.Key, ps)
		row++
	}
	return row, metaRef
}

// metaValue writes ps's value of the metadata field key at (col, row).
func (c *sheetCells) metaValue(col, row int, key string, ps PlanSheet) {
	switch key {
	case "plan_id":
		if ps.PlanID != 0 {
			c.value(col, row, ps.PlanID)
		}
	case "plan_name":
		c.text(col, row, ps.Name)
	case "company_vat_number":
		c.text(col, row, ps.Company.VAT)
	case "company_registration_number":
		c.text(col, row, ps.Company.Registration)
	case "company_id_number":
		c.text(col, row, ps.Company.IDNumber)
	case "start_date":
		c.date(col, row, ps.StartDate)
	case "end_date":
		c.date(col, row, ps.EndDate)
	case "sector":
		c.text(col, row, ps.Sector)
	case "scorecard_id":
		c.text(col, row, ps.ScorecardID)
	case "account":
		c.text(col, row, ps.Account)
	}
}

// grids lays out ps's grids from row, and notes the page breaks: a
// financial year's grids print together (a break before each year but
// the first), and the charts below the grids take a printed page each.
// It returns the ranges of the counter cells.
func (l *planLayout) grids(ps PlanSheet, row int, cat *pipeline.Catalog, st *Styles) []string {
	races, genders, levels := cat.Races(), cat.Genders(), cat.Levels()
	var counterRanges []string
	for i, g := range ps.Grids {
		if i > 0 && (g.YearNumber != ps.Grids[i-1].YearNumber || g.FinancialYear != ps.Grids[i-1].FinancialYear) {
			l.breaks = append(l.breaks, row)
		}
		l.gridRows = append(l.gridRows, row)
		row = l.cells.grid(row, g, races, genders, levels, cat, st, &counterRanges)
		row += gridGap
	}
	for k := range ps.Charts {
		l.breaks = append(l.breaks, row+k*ChartPageRows)
	}
	return counterRanges
}

// planValidations are a plan sheet's validations, one rule per kind: the
// counters (one rule covers every grid's counterRanges), the sector, the
// dates and the plan id (their cells in metaRef).
func planValidations(counterRanges []string, metaRef map[string]string) ([]*excelize.DataValidation, error) {
	var vs []*excelize.DataValidation
	if len(counterRanges) > 0 {
		dv := excelize.NewDataValidation(true)
		dv.Sqref = strings.Join(counterRanges, " ")
		if err := dv.SetRange(0, 2147483647, excelize.DataValidationTypeWhole, excelize.DataValidationOperatorBetween); err != nil {
			return nil, err
		}
		dv.SetError(excelize.DataValidationErrorStyleStop, "Counter", "A counter is a whole number of employees, 0 or more. Leave the cell blank to keep the value on the service.")
		vs = append(vs, dv)
	}
	{
		sectorList, _ := listRefs()
		dv := excelize.NewDataValidation(true)
		dv.Sqref = metaRef["sector"]
		dv.SetSqrefDropList(sectorList)
		dv.SetError(excelize.DataValidationErrorStyleStop, "Sector", "Pick one of the sectors in the list, or leave the cell blank.")
		dv.SetInput("Sector", "Pick one of the 18 sectors, or leave blank.")
		vs = append(vs, dv)
	}
	for _, key := range []string{"start_date", "end_date"} {
		dv := excelize.NewDataValidation(true)
		dv.Sqref = metaRef[key]
		if err := dv.SetRange(xlsx.ExcelSerial(pipeline.EarliestStart.Time(), false), xlsx.ExcelSerial(time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC), false),
			excelize.DataValidationTypeDate, excelize.DataValidationOperatorBetween); err != nil {
			return nil, err
		}
		dv.SetError(excelize.DataValidationErrorStyleStop, "Date", "Enter a date on or after 2025-09-01, as YYYY-MM-DD.")
		dv.SetInput("Date", "YYYY-MM-DD, on or after 2025-09-01.")
		vs = append(vs, dv)
	}
	{
		dv := excelize.NewDataValidation(true)
		dv.Sqref = metaRef["plan_id"]
		if err := dv.SetRange(1, 2147483647, excelize.DataValidationTypeWhole, excelize.DataValidationOperatorBetween); err != nil {
			return nil, err
		}
		dv.SetError(excelize.DataValidationErrorStyleStop, "Plan ID", "The plan id is a whole number. Leave it blank for a new plan.")
		vs = append(vs, dv)
	}
	return vs, nil
}

// view sets the column widths (nCounterCols counter columns), the frozen
// panes and the selection (the plan name's cell, in metaRef).
func (l *planLayout) view(nCounterCols int, metaRef map[string]string) {
	lastCol := labelCol + max(nCounterCols, metaSpan)
	l.widths = append(l.widths, colWidth{labelCol, labelCol, LabelWidth})
	if nCounterCols > 0 {
		l.widths = append(l.widths, colWidth{labelCol + 1, lastCol, CounterWidth})
	}
	l.panes = &excelize.Panes{
		Freeze: true, XSplit: labelCol, TopLeftCell: xlsx.CellName(labelCol+1, 1), ActivePane: "topRight",
		Selection: []excelize.Selection{{SQRef: metaRef["plan_name"], ActiveCell: metaRef["plan_name"], Pane: "topRight"}},
	}
}

// grid lays out one grid from row and returns the row after it.
func (c *sheetCells) grid(row int, g Grid, races, genders, levels []string, cat *pipeline.Catalog, st *Styles, ranges *[]string) int {
	nCols := len(races) * len(genders)
	label := g.Label
	if label == "" {
		label = GridLabel(g.YearNumber, g.FinancialYear, g.TargetType)
	}
	c.str(labelCol, row, label, st.GridLabel)
	for col := labelCol + 1; col <= labelCol+nCols; col++ {
		c.style(col, row, st.GridLabel)
	}
	row++
	raceRow, genderRow := row, row+1
	c.str(labelCol, raceRow, "Occupational level", st.Header)
	c.style(labelCol, genderRow, st.Header)
	c.merge(xlsx.CellName(labelCol, raceRow), xlsx.CellName(labelCol, genderRow))
	col := labelCol + 1
	for _, r := range races {
		c.str(col, raceRow, RaceLabel(r), st.Header)
		for i, gd := range genders {
			c.str(col+i, genderRow, GenderLabel(gd), st.Header)
			if i > 0 {
				c.style(col+i, raceRow, st.Header)
			}
		}
		if len(genders) > 1 {
			c.merge(xlsx.CellName(col, raceRow), xlsx.CellName(col+len(genders)-1, raceRow))
		}
		col += len(genders)
	}
	row = genderRow + 1
	first := row
	for _, lv := range levels {
		summary := !pipeline.Contains(pipeline.OccupationalLevels, lv) && pipeline.Contains(pipeline.Levels, lv)
		ls, cs := st.LevelLabel, st.Counter
		if summary {
			ls, cs = st.TotalLabel, st.TotalCounter
		}
		c.str(labelCol, row, LevelLabel(lv), ls)
		col := labelCol + 1
		for _, r := range races {
			for _, gd := range genders {
				if name, ok := cat.Counter(r, gd, lv); ok {
					c.style(col, row, cs)
					if v, set := g.Counters.ByName(name); set {
						c.value(col, row, v)
					}
				} else {
					// No such counter in a custom catalog: shaded, so
					// that nobody types a value the reader rejects.
					c.style(col, row, st.NoCounter)
				}
				col++
			}
		}
		row++
	}
	if nCols > 0 && row > first {
		*ranges = append(*ranges, xlsx.CellName(labelCol+1, first)+":"+xlsx.CellName(labelCol+nCols, row-1))
	}
	return row
}

// sheetCells collects the cells and merged ranges of a sheet laid out in
// any order, for a StreamWriter that needs them row by row.
type sheetCells struct {
	rows    [][]*excelize.Cell // [row-1][col-1]; nil = no cell
	merges  [][2]string
	heights map[int]float64 // row heights in points, by row (1-based); others the default
	slab    []excelize.Cell // where the next cells are allocated, a block at a time
}

// height sets a row's height in points.
func (c *sheetCells) height(row int, h float64) {
	if c.heights == nil {
		c.heights = map[int]float64{}
	}
	c.heights[row] = h
}

// cell returns the cell at col, row (1-based), adding it.
func (c *sheetCells) cell(col, row int) *excelize.Cell {
	for len(c.rows) < row {
		c.rows = append(c.rows, nil)
	}
	r := c.rows[row-1]
	for len(r) < col {
		r = append(r, nil)
	}
	c.rows[row-1] = r
	if r[col-1] == nil {
		// A plan sheet has about 1,600 cells: one allocation a block.
		if len(c.slab) == cap(c.slab) {
			c.slab = make([]excelize.Cell, 0, 256)
		}
		c.slab = append(c.slab, excelize.Cell{})
		r[col-1] = &c.slab[len(c.slab)-1]
	}
	return r[col-1]
}

// str sets a text cell and its style.
func (c *sheetCells) str(col, row int, s string, style int) {
	cell := c.cell(col, row)
	cell.Value, cell.StyleID = s, style
}

// style styles a cell, keeping its value.
func (c *sheetCells) style(col, row int, style int) { c.cell(col, row).StyleID = style }

// value sets a cell's value, keeping its style.
func (c *sheetCells) value(col, row int, v any) { c.cell(col, row).Value = v }

// text sets a text value unless s is empty.
func (c *sheetCells) text(col, row int, s string) {
	if s != "" {
		c.value(col, row, s)
	}
}

// date sets a date value (the Excel serial of the day) unless d is zero.
func (c *sheetCells) date(col, row int, d pipeline.Date) {
	if !d.IsZero() {
		c.value(col, row, d.Time())
	}
}

func (c *sheetCells) merge(a, b string) { c.merges = append(c.merges, [2]string{a, b}) }

// set writes the cells and merged ranges to sheet with the ordinary
// (in-memory) excelize functions.
func (c *sheetCells) set(f *excelize.File, sheet string) error {
	for i, r := range c.rows {
		for j, cell := range r {
			if cell == nil {
				continue
			}
			ref := xlsx.CellName(j+1, i+1)
			// The style first: a date value on an unstyled cell would get
			// a default date style.
			if err := f.SetCellStyle(sheet, ref, ref, cell.StyleID); err != nil {
				return err
			}
			var err error
			switch v := cell.Value.(type) {
			case nil:
			case string:
				err = f.SetCellStr(sheet, ref, v)
			case int64:
				err = f.SetCellInt(sheet, ref, v)
			default:
				err = f.SetCellValue(sheet, ref, v)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, m := range c.merges {
		if err := f.MergeCell(sheet, m[0], m[1]); err != nil {
			return err
		}
	}
	for row, h := range c.heights {
		if err := f.SetRowHeight(sheet, row, h); err != nil {
			return err
		}
	}
	return nil
}

// sheetWriter keeps the first error of a run of cell writes.
type sheetWriter struct {
	f     *excelize.File
	sheet string
	err   error
}

func (w *sheetWriter) setErr(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

func (w *sheetWriter) str(col, row int, s string, style int) {
	ref := xlsx.CellName(col, row)
	w.setErr(w.f.SetCellStr(w.sheet, ref, s))
	w.style(col, row, style)
}

func (w *sheetWriter) style(col, row int, style int) {
	ref := xlsx.CellName(col, row)
	w.setErr(w.f.SetCellStyle(w.sheet, ref, ref, style))
}

func (w *sheetWriter) text(ref, s string) {
	if s != "" {
		w.setErr(w.f.SetCellStr(w.sheet, ref, s))
	}
}

func (w *sheetWriter) date(ref string, d pipeline.Date) {
	if !d.IsZero() {
		w.setErr(w.f.SetCellValue(w.sheet, ref, d.Time()))
	}
}
