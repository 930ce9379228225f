package grid

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// The grid workbook (docs/formats.md, the grid workbook) as eepipe reads it.
//
// A grid plan sheet is self-describing; the reader finds everything by its
// label, never by a fixed cell address, so inserted rows and columns or a
// block moved elsewhere on the sheet still read:
//
//   - Plan metadata: a cell reading one of the metadata labels ("Plan ID",
//     "Plan name", "Company VAT number", "Company registration number",
//     "Company ID number", "Start date", "End date", "Sector", "Scorecard ID",
//     or the flat column name such as plan_name; case, spaces, punctuation and
//     a trailing colon do not matter). Its value is the first non-blank cell
//     among the three cells to its right; none means "not given".
//   - Grids: one per financial year per target type. A grid starts with a
//     label cell such as "Year 1 — 2026/27 — All employees" (a year number,
//     a financial year, or both, and the target type: "All employees" or
//     "Employees with disabilities"/"Disabled employees"). Within four rows
//     below the label comes the column header: a row of races ("African",
//     "Coloured", ..., or the catalog keys) with a row of genders ("Male",
//     "Female") under it, a race spanning its gender columns (merged or
//     not); or a single row of combined headers ("African male"). The rows
//     below the header carry an occupational level in a cell left of the
//     first counter column ("Top management", or the key top_managers) and
//     the counters. The grid ends at the first row whose level and counter
//     cells are all blank. The label sits at the grid's top left: the grid
//     spans the label's column up to the next grid label on the same row.
//   - A blank counter cell means "leave as is"; a grid whose counter cells
//     are all blank is skipped.
//
// Each grid becomes one pipeline.Record keyed by the flat column names, each
// cell keeping the sheet cell it came from, so that validation cites exact
// cells. Layout problems (a grid without a label, a header or row label that
// names no race, gender or level) are reported with the closest names.

// MaxScanRows bounds how many rows of a sheet the grid reader looks at.
const MaxScanRows = 20000

var (
	reGridYear = regexp.MustCompile(`(?i)\b(?:year|yr\.?|y)\s*(?:no\.?\s*|number\s*|#\s*)?(\d{1,2})\b`)
	reGridFY   = regexp.MustCompile(`(?i)(?:\b|fy)((?:19|20)\d{2})\s*[/\-–—]\s*(\d{2}|\d{4})\b`)
	// reGridFYEnd is a financial year named by the year it ends in
	// ("FY2028"), unless reGridFYNext follows (a second year).
	reGridFYEnd  = regexp.MustCompile(`(?i)\bFY\s*'?((?:19|20)\d{2})\b`)
	reGridFYNext = regexp.MustCompile(`^\s*[/\-–—]\s*\d`)
	// reGridDate is a date in a title: day/month/year either way round,
	// year first, or with the month written out ("1 September 2026").
	reGridDate = regexp.MustCompile(`\b(?:\d{1,2}[/.\-]\d{1,2}[/.\-]\d{4}|\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}|\d{1,2}(?:st|nd|rd|th)?[ \-]\pL{3,9}\.?[ \-]\d{4})\b`)
	// reGridDateRange is two dates with a dash or "to" between them: the
	// dates of a financial year ("01/09/2026 – 31/08/2027").
	reGridDateRange = regexp.MustCompile(`(?i)(` + reGridDate.String() + `)\s*(?:[\-–—]|to|until|tot)\s*(` + reGridDate.String() + `)`)
	reGridAll       = regexp.MustCompile(`\ball\b`)
	// reGridInclDisabled is a clause that counts people with disabilities
	// in with everyone, as form EEA13 titles its table of all employees:
	// "all employees, including people with disabilities".
	reGridInclDisabled = regexp.MustCompile(`\b(?:including|incl|inclusive of|includes|incl of)\s+(?:the\s+)?(?:(?:people|persons|employees|employee|staff|workers|those)\s+)?(?:(?:living\s+)?with\s+(?:a\s+)?(?:disabilities|disability)|disabled(?:\s+(?:people|persons|employees|staff|workers))?|pwds?)\b`)
	// reGridDisabledSubject is a phrase whose subject is people with
	// disabilities ("employees with disabilities", "disabled employees"),
	// with an "all" in front of it ("all employees with disabilities").
	reGridDisabledSubject = regexp.MustCompile(`\b(?:all\s+)?(?:(?:(?:employees|employee|people|persons|staff|workers)\s+(?:living\s+)?with\s+(?:a\s+)?(?:disabilities|disability))|disabled(?:\s+(?:employees|employee|people|persons|staff|workers))?|disabilities|disability|pwds?)\b`)
	reGridDisab           = regexp.MustCompile(`disab|\bpwds?\b`)
	// reGridAllOf is "all" that quantifies something else than employees
	// ("all levels", "all races"): no sign of the all_employees target.
	reGridAllOf = regexp.MustCompile(`\ball (?:the |our )?(?:occupational )?(?:levels|races|genders|groups|years|categories|sites|site|branches|locations|regions|provinces|divisions|departments|business units|units|operations|offices|companies|subsidiaries|entities|stores|plants|depots)\b`)
	// reGridAside is a bracketed part of a title ("(all sites)"); one that
	// names no one (reGridAsideWho) qualifies the grid, not its target
	// type, and is not read for it.
	reGridAside     = regexp.MustCompile(`[(\[][^()\[\]]*[)\]]`)
	reGridAsideWho  = regexp.MustCompile(`(?i)employ|disab|staff|people|person|worker|pwd|everyone|total`)
	reGridExclusion = regexp.MustCompile(`\b(?:excluding|excl|except|without|other than|non|not)\b`)
)

// gridTitleWordings is the advice of an unclear grid title: the two
// wordings the reader accepts.
const gridTitleWordings = `write "All employees" (or "All employees, including people with disabilities") for the targets of all employees, or "Employees with disabilities" for the targets of employees with disabilities`

// gridLabel is a parsed grid label cell.
type gridLabel struct {
	row, col   int // 1-based
	yearNumber int
	fy         string // "2026/27" as written (separator normalised), or ""
	targetType string // "" when unclear
	unclear    bool   // it mentions disabilities, but whether as its subject is unclear
	// rangeErr says why the dates in the title give no financial year
	// (reported by checkTitles; the grid is not read).
	rangeErr string
}

// gridTitleTarget classifies the target type a grid title names. A title
// is disabled_employees only when people with disabilities are its subject
// ("Employees with disabilities", "Disabled employees"); a clause that
// counts them in ("All employees, including people with disabilities", the
// wording of form EEA13) leaves it all_employees. A title that mentions
// disabilities in another way (excluded, or beside "all employees") is
// unclear. ok is false for text that names no target type.
func gridTitleTarget(text string) (targetType string, unclear, ok bool) {
	text = reGridAside.ReplaceAllStringFunc(text, func(aside string) string {
		if reGridAsideWho.MatchString(aside) {
			return aside
		}
		return " "
	})
	n := templates.Normalize(text)
	rest := reGridInclDisabled.ReplaceAllString(n, " ")
	included := rest != n
	disabled := reGridDisab.MatchString(rest)
	if disabled && reGridExclusion.MatchString(rest) {
		return "", true, true
	}
	rest2 := reGridAllOf.ReplaceAllString(reGridDisabledSubject.ReplaceAllString(rest, " "), " ")
	all := strings.Contains(rest2, "all employees") || reGridAll.MatchString(rest2)
	switch {
	case disabled && (all || included || reGridDisab.MatchString(rest2)):
		return "", true, true
	case disabled:
		return pipeline.TargetDisabled, false, true
	case all || included:
		return pipeline.TargetAll, false, true
	}
	return "", false, false
}

// gridMaybeLabel is parseGridLabel's quick test: a label has a letter (its
// title) and a digit (its year number or financial year), which a counter
// or an empty cell has not.
func gridMaybeLabel(text string) bool {
	letter, digit := false, false
	for i := 0; i < len(text) && !(letter && digit); i++ {
		c := text[i]
		letter = letter || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80
		digit = digit || c >= '0' && c <= '9'
	}
	return letter && digit
}

// parseGridLabel recognises a grid label: a target type together with a
// year number and/or a financial year. A label whose target type is
// unclear is a label all the same (unclear set), so that the grid below it
// is reported, never read as the wrong target nor dropped.
//
// The financial year is written "2026/27" (also "FY2026/27"), "FY2028"
// (the one that ends in 2028, read by pipeline.ParseFinancialYear), or as
// the dates of the year ("Year 1 (01/09/2026 – 31/08/2027)", read by
// pipeline.DateRangeFinancialYear); dates are taken out of the title
// before the rest is read, so their digits are never a year.
func parseGridLabel(text string) (gridLabel, bool) {
	if len(text) > 120 || !gridMaybeLabel(text) {
		return gridLabel{}, false
	}
	return gridLabels.get(text)
}

// gridLabelMemo remembers what parseGridLabel made of a text: the sheets
// of a workbook repeat their labels and details (an export of thousands
// of plans has a handful of distinct labels), and parsing one takes a few
// regular expressions. It is bounded (emptied when full) and safe for
// files read at the same time.
type gridLabelMemo struct {
	mu sync.Mutex
	m  map[string]gridLabelMemoed
}

type gridLabelMemoed struct {
	g  gridLabel
	ok bool
}

const gridLabelMemoMax = 1 << 12

var gridLabels gridLabelMemo

func (c *gridLabelMemo) get(text string) (gridLabel, bool) {
	c.mu.Lock()
	r, hit := c.m[text]
	c.mu.Unlock()
	if hit {
		return r.g, r.ok
	}
	g, ok := parseGridLabelText(text)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= gridLabelMemoMax {
		c.m = make(map[string]gridLabelMemoed, 64)
	}
	c.m[strings.Clone(text)] = gridLabelMemoed{g, ok}
	c.mu.Unlock()
	return g, ok
}

// parseGridLabelText is parseGridLabel without the quick test and the memo.
func parseGridLabelText(text string) (gridLabel, bool) {
	var g gridLabel
	rest := text
	var rangeFY pipeline.FinancialYear
	if m := reGridDateRange.FindStringSubmatchIndex(rest); m != nil {
		from, to := rest[m[2]:m[3]], rest[m[4]:m[5]]
		fy, err := pipeline.DateRangeFinancialYear(from, to)
		if err != nil {
			g.rangeErr = err.Error()
		}
		rangeFY = fy
		rest = rest[:m[0]] + " " + rest[m[1]:]
	}
	rest = reGridDate.ReplaceAllString(rest, " ")
	tt, unclear, ok := gridTitleTarget(rest)
	if !ok {
		return gridLabel{}, false
	}
	g.targetType, g.unclear = tt, unclear
	if m := reGridFY.FindStringSubmatch(rest); m != nil {
		g.fy = m[1] + "/" + m[2]
	} else if m := reGridFYEnd.FindStringSubmatchIndex(rest); m != nil && !reGridFYNext.MatchString(rest[m[1]:]) {
		g.fy = "FY" + rest[m[2]:m[3]]
	}
	if m := reGridYear.FindStringSubmatch(rest); m != nil {
		g.yearNumber, _ = strconv.Atoi(m[1])
	}
	if rangeFY != 0 {
		if named, err := pipeline.ParseFinancialYear(g.fy); g.fy != "" && err == nil && named != rangeFY {
			g.rangeErr = fmt.Sprintf("the title names the financial year %s, but its dates are in %s", named, rangeFY)
		}
		g.fy = rangeFY.String()
	}
	if g.fy == "" && g.yearNumber == 0 && g.rangeErr == "" {
		return gridLabel{}, false
	}
	return g, true
}

// sheetText is the raw text of a sheet's cells, 1-based access.
type sheetText [][]string

func (s sheetText) at(row, col int) string {
	if row < 1 || row > len(s) || col < 1 || col > len(s[row-1]) {
		return ""
	}
	return strings.TrimSpace(s[row-1][col-1])
}

func (s sheetText) maxCol() int {
	m := 0
	for _, r := range s {
		m = max(m, len(r))
	}
	return m
}

// readSheetText reads the text of up to limit rows of a sheet, unformatted
// (labels and headers are text; values are typed later by xlsx.ReadCell).
func readSheetText(f *excelize.File, sheet string, limit int) (sheetText, error) {
	rows, err := f.Rows(sheet)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out sheetText
	for rows.Next() && len(out) < limit {
		cols, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return out, err
		}
		out = append(out, cols)
	}
	return out, rows.Error()
}

// hasFlatHeader reports whether a cell reading exactly target_type is in
// the first rows: such a sheet is a flat table.
func (s sheetText) hasFlatHeader() bool {
	for r := 1; r <= min(len(s), table.HeaderRows); r++ {
		for c := 1; c <= len(s[r-1]); c++ {
			if strings.EqualFold(s.at(r, c), "target_type") {
				return true
			}
		}
	}
	return false
}

// ExcelizeSheets returns the visible worksheets that hold a grid plan: a sheet
// with a grid label followed by a race header, or with plan metadata labels
// and a race header. A sheet with a flat table header (target_type in its
// first 20 rows) is never a grid sheet: the flat layout wins.
//
// A panic inside excelize is not caught here: ReadFiles turns it into an
// InternalError (exit 3), never into "invalid input".
func ExcelizeSheets(f *excelize.File) (out []string) {
	m := templates.NewMatcher(nil)
	for _, sheet := range f.GetSheetList() {
		if visible, err := f.GetSheetVisible(sheet); err != nil || !visible {
			continue
		}
		text, err := readSheetText(f, sheet, MaxScanRows)
		if err != nil || text.hasFlatHeader() {
			continue
		}
		if isGridSheet(text, m) {
			out = append(out, sheet)
		}
	}
	return out
}

func isGridSheet(text sheetText, m *templates.Matcher) bool {
	meta, header := 0, false
	maxCol := text.maxCol()
	for r := 1; r <= len(text); r++ {
		for c := 1; c <= len(text[r-1]); c++ {
			v := text.at(r, c)
			if v == "" {
				continue
			}
			if _, ok := parseGridLabel(v); ok {
				for rr := r + 1; rr <= r+4; rr++ {
					if countHeaderCells(text, rr, c, maxCol, m) > 0 {
						return true
					}
				}
			}
			if _, ok := templates.MetaFieldFor(v); ok {
				meta++
			}
		}
		if !header && countRaceCells(text, r, 1, len(text[r-1]), m) >= 2 {
			header = true
		}
	}
	return meta >= 2 && header
}

// planDetailLabels returns the cells (A1 references) of the first column
// of text holding at least three plan-detail labels (Plan name, Start
// date, ...) one below the other: the top of a grid plan sheet, with or
// without grids below. A table whose header row names such fields (the
// Sector targets sheet) has them side by side, and is not one.
func planDetailLabels(text sheetText) []string {
	byCol := map[int][]string{}
	first := 0
	for r := 1; r <= len(text); r++ {
		for c := 1; c <= len(text[r-1]); c++ {
			if v := text.at(r, c); v != "" {
				if _, ok := templates.MetaFieldFor(v); ok {
					ref, _ := excelize.CoordinatesToCellName(c, r)
					byCol[c] = append(byCol[c], ref)
					if len(byCol[c]) >= 3 && (first == 0 || c < first) {
						first = c
					}
				}
			}
		}
	}
	if first == 0 {
		return nil
	}
	return byCol[first]
}

// countRaceCells counts the cells of row r between columns c0 and c1 that
// name a race or a race and gender.
func countRaceCells(text sheetText, r, c0, c1 int, m *templates.Matcher) int {
	n := 0
	for c := c0; c <= c1; c++ {
		v := text.at(r, c)
		if v == "" {
			continue
		}
		if _, ok := m.Race(v); ok {
			n++
		} else if _, _, ok := m.RaceGender(v); ok {
			n++
		}
	}
	return n
}

// countHeaderCells counts the cells of row r between columns c0 and c1
// that name a race, a gender, or a race and gender: the first row of a grid
// header (races over genders, genders over races, or combined headers).
func countHeaderCells(text sheetText, r, c0, c1 int, m *templates.Matcher) int {
	n := 0
	for c := c0; c <= c1; c++ {
		if k := classifyHeader(m, text.at(r, c)); k.kind >= hdrRace && k.kind <= hdrRaceGender {
			n++
		}
	}
	return n
}

// headerKind is what a grid header cell names.
type headerKind int

const (
	hdrBlank headerKind = iota
	hdrRace
	hdrGender
	hdrRaceGender
	hdrTotal
	hdrOther
)

// headerCell is a classified grid header cell.
type headerCell struct {
	kind         headerKind
	race, gender string
}

// classifyHeader classifies the text of a grid header cell.
func classifyHeader(m *templates.Matcher, v string) headerCell {
	switch {
	case v == "":
		return headerCell{kind: hdrBlank}
	case isTotalHeader(v):
		return headerCell{kind: hdrTotal}
	}
	if r, ok := m.Race(v); ok {
		return headerCell{kind: hdrRace, race: r}
	}
	if gd, ok := m.Gender(v); ok {
		return headerCell{kind: hdrGender, gender: gd}
	}
	if r, gd, ok := m.RaceGender(v); ok {
		return headerCell{kind: hdrRaceGender, race: r, gender: gd}
	}
	return headerCell{kind: hdrOther}
}

// gridColumn is one counter column of a grid.
type gridColumn struct {
	col          int
	race, gender string
}

// gridBlock is a grid found on a sheet.
type gridBlock struct {
	label          gridLabel
	r0, r1, c0, c1 int // the rows and columns it covers
	columns        []gridColumn
	rows           map[int]string // sheet row -> level
	// end is the last column the grid may use (before the next grid label
	// on its row), dataStart its first row below the header.
	end, dataStart int
	// totals are the columns headed Total; blocked the columns whose
	// header is in error (reported there, so their cells are not reported
	// again); labelCols the column of each row's level label.
	totals, blocked map[int]bool
	labelCols       map[int]int
}

func (g *gridBlock) covers(r, c int) bool { return r >= g.r0 && r <= g.r1 && c >= g.c0 && c <= g.c1 }

// gridReader reads one grid sheet.
type gridReader struct {
	cells func(r, c int) pipeline.Cell // the typed cell at (r, c), without its file
	file  string
	sheet string
	text  sheetText
	// mergedAway maps the cells (row, col) inside a merged range other
	// than its top-left cell to that top-left cell.
	mergedAway map[[2]int][2]int
	// reported holds the cells a header error was reported at.
	reported map[[2]int]bool
	// unlabelled are the rows of race headers that belong to no grid
	// (reported by findUnlabelledGrids).
	unlabelled []int
	// hiddenCols are the columns the sheet hides, read on first use
	// (hiddenCol: only messages name them) from hiddenSrc.
	hiddenCols map[int]bool
	hiddenSrc  func() map[int]bool
	// notes are the notes in columns without a header (by column).
	notes    map[int]*gridNotes
	m        *templates.Matcher
	cat      *pipeline.Catalog
	problems pipeline.Problems
}

func (g *gridReader) origin(r, c int) pipeline.Origin {
	o := pipeline.Origin{File: g.file, Sheet: g.sheet, Row: r, Column: c}
	if r > 0 && c > 0 {
		o.Cell, _ = excelize.CoordinatesToCellName(c, r)
	}
	return o
}

func (g *gridReader) cell(r, c int) pipeline.Cell {
	ref, _ := excelize.CoordinatesToCellName(c, r)
	if _, away := g.mergedAway[[2]int{r, c}]; away {
		// Covered by a merged range that starts elsewhere: Excel shows
		// nothing of its own there (excelize would return the range's
		// top-left value, such as the label merged across it).
		return pipeline.Cell{Origin: pipeline.Origin{File: g.file, Sheet: g.sheet, Cell: ref, Row: r, Column: c}}
	}
	cell := g.cells(r, c)
	cell.Origin.File = g.file
	return cell
}

func (g *gridReader) errorf(r, c int, value string, suggestions []string, format string, args ...any) {
	g.problems = append(g.problems, pipeline.Problem{
		Severity: pipeline.Error, Origin: g.origin(r, c), Value: value,
		Message: fmt.Sprintf(format, args...), Suggestions: suggestions,
	})
}

func (g *gridReader) warnf(r, c int, value string, format string, args ...any) {
	g.problems.Warnf(g.origin(r, c), value, format, args...)
}

// ReadExcelizeSheet reads one grid plan sheet into one Record per (year, target
// type) grid, keyed by the flat column names (plan and company fields,
// year_number and/or financial_year, target_type, number_of_*), each cell
// with the origin of the sheet cell it came from. Layout problems are
// returned as Problems. The optional catalog (default: the default catalog)
// decides which races, genders and levels the headers may name.
func ReadExcelizeSheet(f *excelize.File, file, sheet string, date1904 bool, cat ...*pipeline.Catalog) (records []pipeline.Record, problems pipeline.Problems) {
	var c *pipeline.Catalog
	if len(cat) > 0 {
		c = cat[0]
	}
	src := gridSheetSource{
		text: func() (sheetText, error) { return readSheetText(f, sheet, MaxScanRows) },
		cells: func(r, c int) pipeline.Cell {
			ref, _ := excelize.CoordinatesToCellName(c, r)
			return xlsx.ReadCell(f, sheet, ref, date1904)
		},
		merged: func() (map[[2]int][2]int, error) { return mergedAwayCells(f, sheet) },
		hidden: func(text sheetText) map[int]bool {
			out := map[int]bool{}
			for c := 1; c <= text.maxCol(); c++ {
				name, _ := excelize.ColumnNumberToName(c)
				if visible, err := f.GetColVisible(sheet, name); err == nil && !visible {
					out[c] = true
				}
			}
			return out
		},
	}
	return readGridSheetFrom(src, file, sheet, c)
}

// gridSheetSource is what the grid reader reads of a sheet: the text of
// its first MaxScanRows rows (for the layout), each cell typed, and
// the cells its merged ranges cover other than their top-left ones, and
// the columns it hides. The
// workbook reader fills it from one streaming scan of the sheet
// (grid_stream.go); ReadExcelizeSheet from excelize.
type gridSheetSource struct {
	text   func() (sheetText, error)
	cells  func(r, c int) pipeline.Cell
	merged func() (map[[2]int][2]int, error)
	hidden func(text sheetText) map[int]bool // the columns hidden, of those text spans
}

// readGridSheetFrom is ReadExcelizeSheet over any source of the sheet's cells;
// cat nil means the default catalog.
func readGridSheetFrom(src gridSheetSource, file, sheet string, cat *pipeline.Catalog) (records []pipeline.Record, problems pipeline.Problems) {
	g := &gridReader{cells: src.cells, file: file, sheet: sheet, cat: pipeline.DefaultCatalog()}
	if cat != nil {
		g.cat = cat
	}
	g.m = templates.NewMatcher(g.cat)
	text, err := src.text()
	if err != nil {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "", "cannot read the sheet: %v", err)
		return nil, g.problems
	}
	g.text = text
	g.mergedAway, err = src.merged()
	if err != nil {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "", "cannot read the sheet: %v", err)
		return nil, g.problems
	}
	g.hiddenSrc = func() map[int]bool { return src.hidden(text) }
	blocks := g.findGrids()
	g.findUnlabelledGrids(blocks)
	g.findOrphanLevelRows(blocks)
	meta := g.readMeta(blocks)
	if len(blocks) == 0 {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "",
			"no grid found: each grid needs a label such as %q above a header of races and genders",
			templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
	}
	for _, b := range blocks {
		if rec, ok := g.record(b, meta); ok {
			records = append(records, rec)
		}
	}
	g.reportNotes()
	if len(blocks) > 0 && len(records) == 0 && !g.problems.HasErrors() {
		g.problems.Warnf(pipeline.Origin{File: file, Sheet: sheet}, "",
			"every counter cell of the %d grid%s on this sheet is blank, so the sheet changes nothing; fill in the counters to set",
			len(blocks), map[bool]string{true: "", false: "s"}[len(blocks) == 1])
	}
	return records, g.problems
}

// gridMaxMergedCells bounds the cells of a grid sheet's merged ranges that
// mergedAwayCells records: a grid sheet merges a few label cells, while a
// 23 KB sheet of 4,000 merges of 65,536 cells each would hold 262 million.
const gridMaxMergedCells = 1 << 17

// mergedAwayCells returns the cells of the sheet's merged ranges other than
// each range's top-left cell (up to the rows a grid sheet is scanned for);
// an oversized-file error past gridMaxMergedCells of them.
func mergedAwayCells(f *excelize.File, sheet string) (map[[2]int][2]int, error) {
	out := map[[2]int][2]int{}
	merged, err := f.GetMergeCells(sheet)
	if err != nil {
		return out, nil
	}
	for _, m := range merged {
		c0, r0, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c1, r1, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		if err1 != nil || err2 != nil {
			continue
		}
		r1 = min(r1, MaxScanRows)
		if (r1-r0+1)*(c1-c0+1) > 1<<16 {
			continue // a merge over a whole sheet region is no layout to read
		}
		if err := addMergedAway(out, r0, c0, r1, c1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addMergedAway records the cells of one merged range (rows r0 to r1,
// columns c0 to c1) other than its top-left one in out, within
// gridMaxMergedCells cells in all.
func addMergedAway(out map[[2]int][2]int, r0, c0, r1, c1 int) error {
	if r1 < r0 || c1 < c0 {
		return nil
	}
	if len(out)+(r1-r0+1)*(c1-c0+1) > gridMaxMergedCells {
		return xlsx.LimitErrorf("%v: the sheet's merged ranges cover more than %d cells (a grid sheet merges a few label cells)", xlsx.ErrOversized, gridMaxMergedCells)
	}
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			if r != r0 || c != c0 {
				out[[2]int{r, c}] = [2]int{r0, c0}
			}
		}
	}
	return nil
}

// findGrids finds every labelled grid of the sheet.
func (g *gridReader) findGrids() []*gridBlock {
	var labels []gridLabel
	for r := 1; r <= len(g.text); r++ {
		for c := 1; c <= len(g.text[r-1]); c++ {
			if l, ok := parseGridLabel(g.text.at(r, c)); ok {
				l.row, l.col = r, c
				labels = append(labels, l)
			}
		}
	}
	maxCol := g.text.maxCol()
	var blocks []*gridBlock
	for i, l := range labels {
		end := maxCol
		for _, o := range labels {
			if o.row == l.row && o.col > l.col && o.col-1 < end {
				end = o.col - 1
			}
		}
		isLabelRow := func(r int) bool {
			for j, o := range labels {
				if j != i && o.row == r && o.col >= l.col && o.col <= end {
					return true
				}
			}
			return false
		}
		headerRow := 0
		for r := l.row + 1; r <= l.row+4 && r <= len(g.text); r++ {
			if isLabelRow(r) {
				break
			}
			if countHeaderCells(g.text, r, l.col, end, g.m) > 0 {
				headerRow = r
				break
			}
		}
		if headerRow == 0 {
			if g.looksLikeProse(l.row, l.col) || g.isMetaValue(l.row, l.col) || !g.levelRowsBelow(l.row, l.col, end) {
				continue // a title or a note that happens to read like a label
			}
			g.errorf(l.row, l.col, g.text.at(l.row, l.col), nil,
				"grid label with no header of races (African, Coloured, ...) and genders (Male, Female) in the 4 rows below it")
			continue
		}
		b := &gridBlock{label: l, r0: l.row, c0: l.col, c1: end, end: end, rows: map[int]string{},
			totals: map[int]bool{}, blocked: map[int]bool{}, labelCols: map[int]int{}}
		b.dataStart = g.readHeader(b, headerRow)
		if len(b.columns) == 0 {
			continue
		}
		g.readRows(b, b.dataStart, isLabelRow)
		blocks = append(blocks, b)
	}
	for _, b := range blocks {
		g.strayCells(b, blocks)
	}
	g.checkTitles(blocks)
	return blocks
}

// looksLikeProse reports whether a label-like cell is a sentence (for
// example in instructions) rather than a grid label: long and wordy.
func (g *gridReader) looksLikeProse(r, c int) bool {
	return len(strings.Fields(g.text.at(r, c))) > 10
}

// levelRowsBelow reports whether an occupational level is named in the
// few rows below a label: a grid whose header was lost still has them.
func (g *gridReader) levelRowsBelow(r, c0, c1 int) bool {
	for rr := r + 1; rr <= r+6 && rr <= len(g.text); rr++ {
		for c := c0; c <= c1 && c <= len(g.text[rr-1]); c++ {
			if _, ok := g.m.Level(g.text.at(rr, c)); ok {
				return true
			}
		}
	}
	return false
}

// isMetaValue reports whether the cell is the value of a metadata label
// to its left (a plan named like a grid label).
func (g *gridReader) isMetaValue(r, c int) bool {
	for lc := c - 1; lc >= max(1, c-3); lc-- {
		if _, ok := templates.MetaFieldFor(g.text.at(r, lc)); ok {
			return true
		}
	}
	return false
}

// headerText returns the text of a header cell, blank for a cell covered by
// a merged range that starts elsewhere.
func (g *gridReader) headerText(r, c int) string {
	if _, away := g.mergedAway[[2]int{r, c}]; away {
		return ""
	}
	return g.text.at(r, c)
}

// headerErrorf reports a header problem once per cell.
func (g *gridReader) headerErrorf(r, c int, value string, suggestions []string, format string, args ...any) {
	if g.reported == nil {
		g.reported = map[[2]int]bool{}
	}
	if g.reported[[2]int{r, c}] {
		return
	}
	g.reported[[2]int{r, c}] = true
	if g.m.IsBlackGroup(value) {
		g.errorf(r, c, value, nil, "%q is not a race of the counter catalog: %s", value, templates.BlackGroupAdvice)
		return
	}
	g.errorf(r, c, value, suggestions, format, args...)
}

// readHeader reads the grid header starting at row hr and returns the first
// data row. The header is one of:
//
//   - races over genders: "African" over "Male", "Female" (the race merged
//     across its gender columns or not);
//   - genders over races, as form EEA2 prints it: "Male" over "A", "C",
//     "I", "W", then "Female" over the same, then "Foreign nationals" over
//     "Male", "Female" (each group merged or not);
//   - one row of combined headers: "African male", "AM", "Male African".
//
// The two-row shapes may be mixed within one header, group by group. A
// column headed Total (in either row) holds totals: it is not read, and its
// cells are allowed. Any other header cell that names no race and gender is
// an error at that cell, and its column is blocked (its cells are not
// reported again).
func (g *gridReader) readHeader(b *gridBlock, hr int) int {
	sr := hr + 1 // the row of sub-headers, when there is one
	isHead := func(v string) bool {
		k := classifyHeader(g.m, v).kind
		return k == hdrRace || k == hdrGender || k == hdrRaceGender
	}
	firstCol := 0
	for c := b.c0; c <= b.c1 && firstCol == 0; c++ {
		if isHead(g.headerText(hr, c)) {
			firstCol = c
		}
	}
	twoRow := false
	for c := b.c0 + 1; c <= b.c1; c++ {
		if isHead(g.headerText(sr, c)) {
			twoRow = true
			if c < firstCol || firstCol == 0 {
				firstCol = c
			}
		}
	}
	if firstCol == 0 {
		return hr + 1
	}
	// A group header heads its own column, the columns it is merged
	// across, and (not merged) the columns after it with a sub-header,
	// up to the next group header or a column without a sub-header.
	group := map[int]int{}
	cur := 0
	for c := firstCol; c <= b.c1; c++ {
		if o, away := g.mergedAway[[2]int{hr, c}]; away {
			if o[0] == hr && o[1] >= firstCol {
				group[c], cur = o[1], o[1]
			} else {
				cur = 0
			}
			continue
		}
		switch {
		case g.text.at(hr, c) != "":
			group[c], cur = c, c
		case twoRow && g.headerText(sr, c) != "" && cur > 0:
			group[c] = cur
		default:
			cur = 0
		}
	}
	g.misspeltLeading(b, hr, firstCol, twoRow)

	seen := map[[2]string]int{}
	add := func(c int, race, gender string) {
		if prev, dup := seen[[2]string{race, gender}]; dup {
			ref, _ := excelize.CoordinatesToCellName(prev, hr)
			g.errorf(hr, c, "", nil, "the column %s %s appears twice in this grid (also at %s); each race and gender once",
				templates.RaceLabel(race), templates.GenderLabel(gender), ref)
			b.blocked[c] = true
			return
		}
		seen[[2]string{race, gender}] = c
		b.columns = append(b.columns, gridColumn{col: c, race: race, gender: gender})
	}
	// hasSub reports whether a column of the group headed at column top has
	// a sub-header.
	hasSub := func(top int) bool {
		for c := top; c <= b.c1; c++ {
			if group[c] != top {
				if c > top {
					break
				}
				continue
			}
			if g.headerText(sr, c) != "" {
				return true
			}
		}
		return false
	}
	// subKind is what the sub-headers mostly name (genders or races), for
	// the advice on one that names neither.
	subKind := hdrBlank
	if twoRow {
		n := map[headerKind]int{}
		for c := firstCol; c <= b.c1; c++ {
			n[classifyHeader(g.m, g.headerText(sr, c)).kind]++
		}
		switch {
		case n[hdrGender] > n[hdrRace]:
			subKind = hdrGender
		case n[hdrRace] > n[hdrGender]:
			subKind = hdrRace
		}
	}
	bothSuggest := func(v string) []string {
		return append(g.m.SuggestRace(v), g.m.SuggestGender(v)...)
	}
	for c := firstCol; c <= b.c1; c++ {
		topCol := group[c]
		top := ""
		if topCol > 0 {
			top = g.text.at(hr, topCol)
		}
		tk := classifyHeader(g.m, top)
		sub := ""
		if twoRow {
			sub = g.headerText(sr, c)
		}
		sk := classifyHeader(g.m, sub)
		blockTop := func(suggest []string, format string, args ...any) {
			g.headerErrorf(hr, topCol, top, suggest, format, args...)
			b.blocked[c] = true
		}
		blockSub := func(suggest []string, format string, args ...any) {
			g.headerErrorf(sr, c, sub, suggest, format, args...)
			b.blocked[c] = true
		}
		if sub != "" {
			switch sk.kind {
			case hdrRaceGender:
				add(c, sk.race, sk.gender)
			case hdrTotal:
				b.totals[c] = true
			case hdrRace:
				switch tk.kind {
				case hdrGender:
					add(c, sk.race, tk.gender)
				case hdrTotal:
					b.totals[c] = true
				case hdrBlank:
					blockSub(nil, "the race column %q has no gender above it: put Male or Female over its race columns (merged or not), or write combined headers such as \"African male\"", sub)
				case hdrOther:
					blockTop(g.m.SuggestGender(top), "%q is not a gender of the counter catalog (it heads race columns); its columns are not read", top)
				default:
					blockSub(nil, "the race column %q is under %q, which is no gender: put a race over Male/Female, or a gender over the races", sub, top)
				}
			case hdrGender:
				switch tk.kind {
				case hdrRace:
					add(c, tk.race, sk.gender)
				case hdrTotal:
					b.totals[c] = true
				case hdrBlank:
					blockSub(nil, "the gender column %q has no race above it: put the race over its gender columns (merged or not), or write combined headers such as \"African male\"", sub)
				case hdrOther:
					blockTop(g.m.SuggestRace(top), "%q is not a race of the counter catalog (it heads gender columns); its columns are not read", top)
				default:
					blockSub(nil, "the gender column %q is under %q, which is no race: put a race over Male/Female, or a gender over the races", sub, top)
				}
			default: // hdrOther
				switch tk.kind {
				case hdrRace:
					blockSub(g.m.SuggestGender(sub), "%q is not a gender of the counter catalog; its column is not read", sub)
				case hdrGender:
					blockSub(g.m.SuggestRace(sub), "%q is not a race of the counter catalog; its column is not read", sub)
				case hdrTotal:
					if _, merged := g.mergedAway[[2]int{hr, c}]; topCol == c || merged {
						b.totals[c] = true // under its own or a merged Total header
						break
					}
					// Beside a Total header, not merged with it: the
					// column is headed by its own cell, which says no Total.
					blockSub(bothSuggest(sub), "%q is not a race or gender of the counter catalog, nor a Total; its column is not read", sub)
				default:
					switch subKind {
					case hdrGender:
						blockSub(g.m.SuggestGender(sub), "%q is not a gender of the counter catalog; its column is not read", sub)
					case hdrRace:
						blockSub(g.m.SuggestRace(sub), "%q is not a race of the counter catalog; its column is not read", sub)
					default:
						blockSub(bothSuggest(sub), "%q is not a race or gender of the counter catalog; its column is not read", sub)
					}
				}
			}
			continue
		}
		if topCol != c {
			continue // under a group header, without a sub-header of its own
		}
		switch tk.kind {
		case hdrRaceGender:
			add(c, tk.race, tk.gender)
		case hdrTotal:
			b.totals[c] = true
		case hdrRace:
			if !twoRow || !hasSub(c) {
				blockTop(nil, "the race %q has no gender: put Male/Female in the row below, or write headers such as \"African male\"", top)
			}
		case hdrGender:
			if !twoRow || !hasSub(c) {
				blockTop(nil, "the gender %q has no race: put the races (African, Coloured, ... or A, C, I, W) in the row below, or write headers such as \"African male\"", top)
			}
		case hdrOther:
			if twoRow {
				blockTop(bothSuggest(top), "%q is not a race or gender of the counter catalog; its column is not read", top)
			} else {
				blockTop(bothSuggest(top), "%q is not a race and gender of the counter catalog; its column is not read", top)
			}
		}
	}
	if twoRow {
		return sr + 1
	}
	return hr + 1
}

// misspeltLeading reports the header cells left of the first header cell
// the catalog knows that are race or gender headers all the same (a gender
// or race below them, or a combined header ending in a gender): without
// this, a misspelt first race ("Afican") would drop its counter columns.
func (g *gridReader) misspeltLeading(b *gridBlock, hr, firstCol int, twoRow bool) {
	for c := b.c0 + 1; c < firstCol; c++ {
		v := g.headerText(hr, c)
		if v == "" || isTotalHeader(v) {
			continue
		}
		if twoRow {
			// The columns this cell heads: itself and those merged into it.
			heads := []int{c}
			for cc := c + 1; cc < firstCol; cc++ {
				if o, away := g.mergedAway[[2]int{hr, cc}]; away && o == [2]int{hr, c} {
					heads = append(heads, cc)
				} else {
					break
				}
			}
			sub := classifyHeader(g.m, g.headerText(hr+1, c)).kind
			switch sub {
			case hdrGender:
				g.headerErrorf(hr, c, v, g.m.SuggestRace(v), "%q is not a race of the counter catalog; its columns are not read", v)
			case hdrRace:
				g.headerErrorf(hr, c, v, g.m.SuggestGender(v), "%q is not a gender of the counter catalog; its columns are not read", v)
			default:
				continue
			}
			for _, cc := range heads {
				b.blocked[cc] = true
			}
			continue
		}
		words := strings.Fields(strings.ReplaceAll(templates.Normalize(v), "_", " "))
		if len(words) < 2 {
			continue
		}
		if _, ok := g.m.Gender(words[len(words)-1]); ok {
			race := strings.Join(words[:len(words)-1], " ")
			g.headerErrorf(hr, c, v, g.m.SuggestRace(race), "%q is not a race and gender of the counter catalog; its column is not read", v)
			b.blocked[c] = true
		}
	}
}

// isTotalHeader reports whether a header says Total ("Total", "TOTALS",
// "Grand total", "Total male"): a column of totals, which is not read.
func isTotalHeader(v string) bool {
	for _, w := range strings.Fields(templates.Normalize(v)) {
		if w == "total" || w == "totals" {
			return true
		}
	}
	return false
}

// readRows reads the level rows of a grid from row r.
func (g *gridReader) readRows(b *gridBlock, r int, isLabelRow func(int) bool) {
	firstCounter, lastCounter := b.c1, b.c0
	for _, col := range b.columns {
		firstCounter = min(firstCounter, col.col)
		lastCounter = max(lastCounter, col.col)
	}
	b.c1 = lastCounter
	b.r1 = r - 1
	seen := map[string]int{}
	rowLabel := func(r int) (int, string) {
		for c := b.c0; c < firstCounter; c++ {
			if v := g.text.at(r, c); v != "" {
				return c, v
			}
		}
		return 0, ""
	}
	rowHasCounter := func(r int) bool {
		for _, col := range b.columns {
			if g.text.at(r, col.col) != "" {
				return true
			}
		}
		return false
	}
	for ; r <= len(g.text); r++ {
		if isLabelRow(r) {
			break
		}
		labelCol, label := rowLabel(r)
		if label == "" && !rowHasCounter(r) {
			// A blank row ends the grid, unless level rows follow it (a
			// row inserted inside the grid).
			next := r + 1
			for next <= len(g.text) && !isLabelRow(next) {
				if _, l := rowLabel(next); l != "" || rowHasCounter(next) {
					break
				}
				next++
			}
			if next > len(g.text) || isLabelRow(next) {
				break
			}
			if _, l := rowLabel(next); l == "" {
				break
			} else if _, isLevel := g.m.Level(l); !isLevel {
				break
			}
			r = next - 1
			continue
		}
		b.r1 = r
		if label == "" {
			g.errorf(r, b.c0, "", nil, "this row of counters has no occupational level in front of it")
			continue
		}
		b.labelCols[r] = labelCol
		level, ok := g.m.Level(label)
		if !ok {
			g.errorf(r, labelCol, label, g.m.SuggestLevel(label), "%q is not an occupational level of the counter catalog", label)
			continue
		}
		if prev, dup := seen[level]; dup {
			g.errorf(r, labelCol, label, nil, "the level %q appears twice in this grid (also on row %d)", label, prev)
			continue
		}
		seen[level] = r
		b.rows[r] = level
	}
}

// strayCells reports the cells in the rows of a grid (from below its header
// to its last level row) that the reader does not read: every non-blank
// cell of a column without a race and gender header, within the columns
// the header spans and right of them (up to the next grid label on the
// row), numbers and text alike. Text is an error too: "12 " or "n/a" in a
// column the grid does not map may be a counter typed in the wrong place,
// and the rule is that nothing non-blank inside a grid's rows is
// passed over. A cell under a header already reported is an error of its
// own, pointing at the header. A column headed Total, the level labels,
// metadata labels with their values (read by readMeta) and cells of other
// grids are left alone.
func (g *gridReader) strayCells(b *gridBlock, blocks []*gridBlock) {
	mapped := map[int]bool{}
	for _, col := range b.columns {
		mapped[col.col] = true
	}
	var near []*gridBlock // the other grids beside this one's rows
	for _, o := range blocks {
		if o != b && o.r0 <= b.r1 && o.r1 >= b.dataStart {
			near = append(near, o)
		}
	}
	inOther := func(r, c int) bool {
		for _, o := range near {
			if o.covers(r, c) {
				return true
			}
		}
		return false
	}
	// The header's last column: its last non-blank header cell, or the
	// end of a group header merged across columns.
	headerEnd := b.c0
	for r := b.label.row + 1; r < b.dataStart; r++ {
		for c := b.c0; c <= b.end; c++ {
			if g.text.at(r, c) != "" {
				headerEnd = max(headerEnd, c)
			} else if o, away := g.mergedAway[[2]int{r, c}]; away && o[0] >= b.label.row+1 && o[1] >= b.c0 && o[1] <= b.end {
				headerEnd = max(headerEnd, c)
			}
		}
	}
	for r := b.dataStart; r <= b.r1; r++ {
		metaValueUntil := 0 // the cells right of a metadata label hold its value
		for c := b.c0; c <= b.end && c <= len(g.text[r-1]); c++ {
			v := g.text.at(r, c)
			if v == "" || mapped[c] || b.totals[c] {
				continue
			}
			if lc, ok := b.labelCols[r]; (ok && lc == c) || (!ok && c == b.c0) {
				continue
			}
			if _, away := g.mergedAway[[2]int{r, c}]; away || inOther(r, c) {
				continue
			}
			if b.blocked[c] {
				// The header is reported already; each value under it is
				// named too, so that no cell is passed over in silence.
				g.errorf(r, c, v, nil, "%q is not read: the header of its column is reported as not a race and gender of the counter catalog; correct the header", v)
				continue
			}
			if c > headerEnd {
				if _, isMeta := templates.MetaFieldFor(v); isMeta {
					metaValueUntil = c + 3
					continue
				}
				if c <= metaValueUntil {
					metaValueUntil = 0 // the label's value, read as metadata
					continue
				}
			}
			if g.isNote(r, c) && !g.columnHasHeader(b, c) {
				g.noteAt(r, c, v)
				continue
			}
			advice := "a counter column needs a race and a gender over it (\"African\" over \"Male\", \"Male\" over \"A\", or \"African male\"), and only a column headed Total may hold other numbers"
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				advice += "; a note belongs above the grid's title or below its last level row, not beside its rows"
			}
			g.errorf(r, c, v, nil, "%q is in a column this grid does not read: %s; %s",
				v, g.columnHeaderDescription(b, c), advice)
		}
	}
}

// isNote reports whether the cell at (r, c) holds a note rather than
// something that could be a counter: text that is not written as a number
// (pipeline.IsNumberText), or TRUE/FALSE, as a check formula beside a grid
// gives (=IF(L19>=0,"ok","check")), also when the workbook asks to be
// recalculated and only the type of the result is known to be text.
// Numbers, error values and other formulas without a result could be
// counters.
func (g *gridReader) isNote(r, c int) bool {
	cell := g.cell(r, c)
	switch cell.Kind {
	case pipeline.CellBool:
		return true
	case pipeline.CellText:
		return !pipeline.IsErrorValue(cell.Text) && !pipeline.IsNumberText(cell.Text)
	case pipeline.CellFormulaNoValue:
		// A formula whose result the writer declared as text (its value
		// is not trusted, the workbook asking to be recalculated).
		t := strings.TrimSpace(cell.Text)
		return t != "" && !pipeline.IsErrorValue(t) && !pipeline.IsNumberText(t)
	}
	return false
}

// columnHasHeader reports whether any header cell of grid b names column c
// (its own text, or a group header merged across it).
func (g *gridReader) columnHasHeader(b *gridBlock, c int) bool {
	for r := b.label.row + 1; r < b.dataStart; r++ {
		if g.headerText(r, c) != "" {
			return true
		}
		if o, away := g.mergedAway[[2]int{r, c}]; away && o[0] == r && g.text.at(o[0], o[1]) != "" {
			return true
		}
	}
	return false
}

// gridNotes are the notes found in one column without a header beside
// the rows of the sheet's grids, reported by reportNotes in one warning.
type gridNotes struct {
	row, count, last int
	value            string
}

// noteAt records a note in a column without a header beside a grid.
func (g *gridReader) noteAt(r, c int, v string) {
	if g.notes == nil {
		g.notes = map[int]*gridNotes{}
	}
	n := g.notes[c]
	if n == nil {
		n = &gridNotes{row: r, value: v}
		g.notes[c] = n
	}
	n.count++
	n.last = max(n.last, r)
}

// reportNotes gives one warning per column without a header that holds
// notes beside a grid's rows, at its first note: the column is not read,
// and when the sheet hides it, the warning says so (the consultant cannot
// see it).
func (g *gridReader) reportNotes() {
	cols := make([]int, 0, len(g.notes))
	for c := range g.notes {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	for _, c := range cols {
		n := g.notes[c]
		letters, _ := excelize.ColumnNumberToName(c)
		where := fmt.Sprintf("in row %d", n.row)
		if n.count > 1 {
			where = fmt.Sprintf("in %d cells of rows %d to %d", n.count, n.row, n.last)
		}
		what := "column " + letters
		if g.hiddenCol(c) {
			what += ", which the sheet hides,"
		}
		g.warnf(n.row, c, n.value, "%s has no header and holds text beside the grid (%q %s), so it is read as notes, not counters, and ignored; a number in it would be an error, as it could be a counter",
			what, n.value, where)
	}
}

// hiddenCol reports whether the sheet hides column c, reading the
// sheet's hidden columns the first time it is asked.
func (g *gridReader) hiddenCol(c int) bool {
	if g.hiddenSrc != nil {
		g.hiddenCols, g.hiddenSrc = g.hiddenSrc(), nil
	}
	return g.hiddenCols[c]
}

// columnHeaderDescription says what heads column c of a grid, for errors.
func (g *gridReader) columnHeaderDescription(b *gridBlock, c int) string {
	var parts []string
	named := false
	for r := b.label.row + 1; r < b.dataStart; r++ {
		v := g.headerText(r, c)
		if o, away := g.mergedAway[[2]int{r, c}]; away && o[0] == r {
			v = g.text.at(o[0], o[1]) // a group header merged across the column
		}
		if v == "" {
			parts = append(parts, "a blank cell")
			continue
		}
		named = true
		parts = append(parts, fmt.Sprintf("%q", v))
	}
	if !named {
		if g.hiddenCol(c) {
			return "the column has no header and is hidden (unhide it to see the cell)"
		}
		return "the column has no header"
	}
	return "its header (" + strings.Join(parts, " over ") + ") names no race and gender"
}

// checkTitles reports the grids whose title is unclear, and two grids of
// the sheet titled for the same year and target type (as when both grids
// of a year carry the EEA13 title "all employees, including people with
// disabilities"). Neither is read.
func (g *gridReader) checkTitles(blocks []*gridBlock) {
	type key struct {
		year int
		fy   string
		tt   string
	}
	seen := map[key]*gridBlock{}
	for _, b := range blocks {
		l := b.label
		text := g.text.at(l.row, l.col)
		if l.unclear {
			g.errorf(l.row, l.col, text, nil,
				"the grid title %q does not say clearly whose targets the grid holds; %s", text, gridTitleWordings)
			continue
		}
		if l.rangeErr != "" {
			b.label.unclear = true // not read: the error says why
			g.errorf(l.row, l.col, text, nil, "the grid title %q does not say which financial year the grid holds: %s", text, l.rangeErr)
			continue
		}
		k := key{l.yearNumber, l.fy, l.targetType}
		prev, dup := seen[k]
		if !dup {
			seen[k] = b
			continue
		}
		b.label.unclear = true // not read: the error below says why
		ref, _ := excelize.CoordinatesToCellName(prev.label.col, prev.label.row)
		what := "all employees"
		if l.targetType == pipeline.TargetDisabled {
			what = "employees with disabilities"
		}
		g.errorf(l.row, l.col, text, nil,
			"this grid and the grid at %s (%q) are both titled as the targets of %s for the same year, and this one is not read; keep one grid per year and target type, and if one of them holds the targets of employees with disabilities, title it \"Employees with disabilities\" (a title reads as all employees when it says \"All employees\", also with \"including people with disabilities\")",
			ref, g.text.at(prev.label.row, prev.label.col), what)
	}
}

// findUnlabelledGrids reports race headers that belong to no labelled grid.
func (g *gridReader) findUnlabelledGrids(blocks []*gridBlock) {
	for r := 1; r <= len(g.text); r++ {
		covered := false
		for _, b := range blocks {
			if r >= b.r0 && r <= b.r1 {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		if n := countRaceCells(g.text, r, 1, len(g.text[r-1]), g.m); n >= 2 {
			c := 1
			for ; c <= len(g.text[r-1]); c++ {
				v := g.text.at(r, c)
				if _, ok := g.m.Race(v); ok {
					break
				}
				if _, _, ok := g.m.RaceGender(v); ok {
					break
				}
			}
			g.unlabelled = append(g.unlabelled, r)
			g.errorf(r, c, g.text.at(r, c), nil,
				"a grid of races and genders with no label above it: put a label such as %q in the row above, at the grid's top left",
				templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
		}
	}
}

// findOrphanLevelRows reports the rows outside every grid that name an
// occupational level and hold a number: a level row cut off from its grid
// (a grid ends at its first blank row that no level row follows, so a row
// of other text after the blank ends it for good). Its counters would be
// dropped without a word; the error is at its level label.
func (g *gridReader) findOrphanLevelRows(blocks []*gridBlock) {
	if len(blocks) == 0 {
		return
	}
	var rowBlocks []*gridBlock // the grids whose rows include the row at hand
	inGrid := func(r, c int) bool {
		for _, b := range rowBlocks {
			if b.covers(r, c) || (c >= b.c0 && c <= b.end) {
				return true
			}
		}
		return false
	}
	// underUnlabelled: the row follows a header already reported as a
	// grid without a label, with no grid label in between.
	underUnlabelled := func(r int) bool {
		h := 0
		for _, u := range g.unlabelled {
			if u < r {
				h = max(h, u)
			}
		}
		if h == 0 {
			return false
		}
		for _, b := range blocks {
			if b.label.row > h && b.label.row < r {
				return false
			}
		}
		return true
	}
	for r := 1; r <= len(g.text); r++ {
		if len(g.text[r-1]) == 0 || underUnlabelled(r) {
			continue
		}
		rowBlocks = rowBlocks[:0]
		for _, b := range blocks {
			if r >= min(b.label.row, b.r0) && r <= b.r1 {
				rowBlocks = append(rowBlocks, b)
			}
		}
		labelCol, level := 0, ""
		for c := 1; c <= len(g.text[r-1]); c++ {
			v := g.text.at(r, c)
			if v == "" || inGrid(r, c) {
				continue
			}
			if labelCol == 0 {
				if _, ok := g.m.Level(v); !ok {
					break // the row does not start with a level
				}
				labelCol, level = c, v
				continue
			}
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				g.errorf(r, labelCol, level, nil,
					"the level row %q is outside every grid, so its numbers are not read: a grid ends at its first blank row that no level row follows; remove the blank or other rows between this row and its grid, or give its rows a grid label and a header of races and genders", level)
				break
			}
		}
	}
}

// readMeta reads the labelled metadata cells outside the grids.
func (g *gridReader) readMeta(blocks []*gridBlock) map[string]pipeline.Cell {
	meta := map[string]pipeline.Cell{}
	where := map[string]pipeline.Origin{}
	inGrid := func(r, c int) bool {
		for _, b := range blocks {
			if b.covers(r, c) {
				return true
			}
		}
		return false
	}
	for r := 1; r <= len(g.text); r++ {
		for c := 1; c <= len(g.text[r-1]); c++ {
			if inGrid(r, c) {
				continue
			}
			field, ok := templates.MetaFieldFor(g.text.at(r, c))
			if !ok {
				continue
			}
			var value pipeline.Cell
			found, labelCol := false, c
			for vc := c + 1; vc <= c+3; vc++ {
				v := g.text.at(r, vc)
				if _, isLabel := templates.MetaFieldFor(v); isLabel && v != "" {
					break
				}
				cell := g.cell(r, vc)
				if cell.Kind != pipeline.CellBlank {
					value, found = cell, true
					c = vc // the value is not a label, whatever it reads
					break
				}
			}
			if prev, dup := where[field.Key]; dup {
				if found {
					g.errorf(r, labelCol, g.text.at(r, labelCol), nil, "the label %q appears twice on the sheet (also at %s); keep one", field.Label, prev.Cell)
				}
				if prevCell, had := meta[field.Key]; (had && prevCell.Kind != pipeline.CellBlank) || !found {
					continue
				}
			}
			where[field.Key] = g.origin(r, labelCol)
			if found {
				meta[field.Key] = value
			} else if strings.HasPrefix(field.Key, "company_") {
				// A blank identifier cell: where a missing company is
				// reported (pipeline.MissingCompany).
				meta[field.Key] = g.cell(r, labelCol+1)
			}
		}
	}
	g.placeMissingCompany(meta, where)
	return meta
}

// gridCompanyKeys are the company identifier fields of a grid sheet's
// company block, in the template's order.
var gridCompanyKeys = [...]string{"company_vat_number", "company_registration_number", "company_id_number"}

// placeMissingCompany gives a sheet whose company identifiers are all blank
// one place for the missing company (pipeline.MissingCompany): the company
// block, from its labels to the value cells beside them ("A6:B8"), when
// the labels are in one column on consecutive rows, as the template lays
// them out; otherwise the first label and the value cell beside it
// ("A6:B6"). A consultant sees the labels and the cells to fill in, and
// the annotated copy marks them.
func (g *gridReader) placeMissingCompany(meta map[string]pipeline.Cell, where map[string]pipeline.Origin) {
	var labels []pipeline.Origin
	for _, k := range gridCompanyKeys {
		if c, ok := meta[k]; ok && c.Kind != pipeline.CellBlank {
			return // a company is given
		}
		if o, ok := where[k]; ok {
			labels = append(labels, o)
		}
	}
	if len(labels) == 0 {
		return
	}
	slices.SortFunc(labels, func(a, b pipeline.Origin) int { return cmp.Compare(a.Row, b.Row) })
	first, last := labels[0], labels[0]
	for _, o := range labels[1:] {
		if o.Column != first.Column || o.Row != last.Row+1 {
			last = first
			break
		}
		last = o
	}
	from, _ := excelize.CoordinatesToCellName(first.Column, first.Row)
	to, _ := excelize.CoordinatesToCellName(first.Column+1, last.Row)
	at := pipeline.Origin{File: g.file, Sheet: g.sheet, Cell: from + ":" + to, Row: first.Row, Column: first.Column}
	for _, k := range gridCompanyKeys {
		if c, ok := meta[k]; ok {
			c.Origin = at
			meta[k] = c
		}
	}
}

// record turns a grid into a Record; ok is false for a grid whose counter
// cells are all blank.
func (g *gridReader) record(b *gridBlock, meta map[string]pipeline.Cell) (pipeline.Record, bool) {
	if b.label.unclear {
		return pipeline.Record{}, false // reported by checkTitles
	}
	labelOrigin := g.origin(b.label.row, b.label.col)
	rec := pipeline.Record{Origin: labelOrigin, Cells: map[string]pipeline.Cell{}}
	for k, v := range meta {
		rec.Cells[k] = v
	}
	if b.label.yearNumber > 0 {
		rec.Cells["year_number"] = pipeline.Cell{Origin: labelOrigin, Kind: pipeline.CellNumber,
			Number: float64(b.label.yearNumber), Text: strconv.Itoa(b.label.yearNumber)}
	}
	if b.label.fy != "" {
		rec.Cells["financial_year"] = pipeline.Cell{Origin: labelOrigin, Kind: pipeline.CellText, Text: b.label.fy}
	}
	rec.Cells["target_type"] = pipeline.Cell{Origin: labelOrigin, Kind: pipeline.CellText, Text: b.label.targetType}
	rows := make([]int, 0, len(b.rows))
	for r := range b.rows {
		rows = append(rows, r)
	}
	sort.Ints(rows)
	counters := 0
	for _, r := range rows {
		level := b.rows[r]
		for _, col := range b.columns {
			cell := g.cell(r, col.col)
			if cell.Kind == pipeline.CellBlank {
				continue
			}
			name, ok := g.cat.Counter(col.race, col.gender, level)
			if !ok {
				g.errorf(r, col.col, cell.Text, g.cat.Suggest(name, 3),
					"the counter catalog has no counter %s (%s, %s, %s)", name,
					templates.RaceLabel(col.race), templates.GenderLabel(col.gender), templates.LevelLabel(level))
				continue
			}
			rec.Cells[name] = cell
			counters++
		}
	}
	g.checkTotals(b, rows)
	return rec, counters > 0
}

// checkTotals compares each plain Total column of a grid (headed Total,
// Totals or Grand total alone, not "Total male") with the sum of the
// row's counters, in the rows where every counter cell and the total hold
// a counter value as the counters are read (pipeline.CounterValue: a
// number, or text such as "12 " or "1 234"): a difference is a warning at
// the total, since either a counter or the total is wrong, and the total
// is not read. A grid with a column not read (its header is in error) is
// not checked: its sum would leave that column out.
func (g *gridReader) checkTotals(b *gridBlock, rows []int) {
	if len(b.blocked) > 0 {
		return
	}
	var plain []int
	for c := range b.totals {
		words := 0
		for r := b.label.row + 1; r < b.dataStart; r++ {
			v := g.headerText(r, c)
			if o, away := g.mergedAway[[2]int{r, c}]; away && o[0] == r {
				v = g.text.at(o[0], o[1])
			}
			for _, w := range strings.Fields(templates.Normalize(v)) {
				if w != "total" && w != "totals" && w != "grand" {
					words++
				}
			}
		}
		if words == 0 {
			plain = append(plain, c)
		}
	}
	sort.Ints(plain)
	for _, r := range rows {
		var sum int64
		complete := true
		for _, col := range b.columns {
			n, ok, err := pipeline.CounterValue(g.cell(r, col.col))
			if !ok || err != nil {
				complete = false
				break
			}
			sum += n
		}
		if !complete {
			continue
		}
		for _, c := range plain {
			cell := g.cell(r, c)
			total, ok, err := pipeline.CounterValue(cell)
			if !ok || err != nil || total == sum {
				continue
			}
			g.warnf(r, c, cell.Text, "the Total column says %d, but the %d counters of this row add up to %d: a counter or the total is wrong (the total itself is not read)",
				total, len(b.columns), sum)
		}
	}
}
