package formats

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// The grid workbook (format section 2) as eepipe reads it.
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

// maxGridScanRows bounds how many rows of a sheet the grid reader looks at.
const maxGridScanRows = 20000

// flatHeaderRows is how far down the flat reader looks for its header; a
// sheet with a cell reading target_type there is a flat table, not a grid.
const flatHeaderRows = 20

var (
	reGridYear = regexp.MustCompile(`(?i)\b(?:year|yr\.?|y)\s*(?:no\.?\s*|number\s*|#\s*)?(\d{1,2})\b`)
	reGridFY   = regexp.MustCompile(`(?i)(?:\b|fy)((?:19|20)\d{2})\s*[/\-–—]\s*(\d{2}|\d{4})\b`)
	reGridAll  = regexp.MustCompile(`\ball\b`)
)

// gridLabel is a parsed grid label cell.
type gridLabel struct {
	row, col   int // 1-based
	yearNumber int
	fy         string // "2026/27" as written (separator normalised), or ""
	targetType string
}

// parseGridLabel recognises a grid label: a target type together with a
// year number and/or a financial year.
func parseGridLabel(text string) (gridLabel, bool) {
	if len(text) > 120 {
		return gridLabel{}, false
	}
	n := templates.Normalize(text)
	var g gridLabel
	switch {
	case strings.Contains(n, "disab"):
		g.targetType = pipeline.TargetDisabled
	case strings.Contains(n, "all employees") || reGridAll.MatchString(n):
		g.targetType = pipeline.TargetAll
	default:
		return gridLabel{}, false
	}
	if m := reGridFY.FindStringSubmatch(text); m != nil {
		g.fy = m[1] + "/" + m[2]
	}
	if m := reGridYear.FindStringSubmatch(text); m != nil {
		g.yearNumber, _ = strconv.Atoi(m[1])
	}
	if g.fy == "" && g.yearNumber == 0 {
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
// (labels and headers are text; values are typed later by readCell).
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
	for r := 1; r <= min(len(s), flatHeaderRows); r++ {
		for c := 1; c <= len(s[r-1]); c++ {
			if strings.EqualFold(s.at(r, c), "target_type") {
				return true
			}
		}
	}
	return false
}

// gridSheets returns the visible worksheets that hold a grid plan: a sheet
// with a grid label followed by a race header, or with plan metadata labels
// and a race header. A sheet with a flat table header (target_type in its
// first 20 rows) is never a grid sheet: the flat layout wins.
func gridSheets(f *excelize.File) (out []string) {
	defer func() {
		// A damaged workbook must never crash a run: a sheet excelize
		// cannot walk is not a grid sheet.
		if recover() != nil {
			out = nil
		}
	}()
	m := templates.NewMatcher(nil)
	for _, sheet := range f.GetSheetList() {
		if visible, err := f.GetSheetVisible(sheet); err != nil || !visible {
			continue
		}
		text, err := readSheetText(f, sheet, maxGridScanRows)
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
					if countRaceCells(text, rr, c, maxCol, m) > 0 {
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
}

func (g *gridBlock) covers(r, c int) bool { return r >= g.r0 && r <= g.r1 && c >= g.c0 && c <= g.c1 }

// gridReader reads one grid sheet.
type gridReader struct {
	f        *excelize.File
	file     string
	sheet    string
	date1904 bool
	text     sheetText
	// mergedAway holds the cells (row, col) inside a merged range other
	// than its top-left cell.
	mergedAway map[[2]int]bool
	m          *templates.Matcher
	cat        *pipeline.Catalog
	problems   pipeline.Problems
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
	if g.mergedAway[[2]int{r, c}] {
		// Covered by a merged range that starts elsewhere: Excel shows
		// nothing of its own there (excelize would return the range's
		// top-left value, such as the label merged across it).
		return pipeline.Cell{Origin: pipeline.Origin{File: g.file, Sheet: g.sheet, Cell: ref, Row: r, Column: c}}
	}
	cell := readCell(g.f, g.sheet, ref, g.date1904)
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

// readGridSheet reads one grid plan sheet into one Record per (year, target
// type) grid, keyed by the flat column names (plan and company fields,
// year_number and/or financial_year, target_type, number_of_*), each cell
// with the origin of the sheet cell it came from. Layout problems are
// returned as Problems. The optional catalog (default: the default catalog)
// decides which races, genders and levels the headers may name.
func readGridSheet(f *excelize.File, file, sheet string, date1904 bool, cat ...*pipeline.Catalog) (records []pipeline.Record, problems pipeline.Problems) {
	defer func() {
		if r := recover(); r != nil {
			records = nil
			problems = append(problems, pipeline.Problem{Severity: pipeline.Error,
				Origin:  pipeline.Origin{File: file, Sheet: sheet},
				Message: fmt.Sprintf("the sheet cannot be read: the workbook is damaged (%v)", r)})
		}
	}()
	g := &gridReader{f: f, file: file, sheet: sheet, date1904: date1904, cat: pipeline.DefaultCatalog()}
	if len(cat) > 0 && cat[0] != nil {
		g.cat = cat[0]
	}
	g.m = templates.NewMatcher(g.cat)
	text, err := readSheetText(f, sheet, maxGridScanRows)
	if err != nil {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "", "cannot read the sheet: %v", err)
		return nil, g.problems
	}
	g.text = text
	g.mergedAway = mergedAwayCells(f, sheet)
	blocks := g.findGrids()
	g.findUnlabelledGrids(blocks)
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
	if len(blocks) > 0 && len(records) == 0 && !g.problems.HasErrors() {
		g.problems.Warnf(pipeline.Origin{File: file, Sheet: sheet}, "",
			"every counter cell of the %d grid%s on this sheet is blank, so the sheet changes nothing; fill in the counters to set",
			len(blocks), map[bool]string{true: "", false: "s"}[len(blocks) == 1])
	}
	return records, g.problems
}

// mergedAwayCells returns the cells of the sheet's merged ranges other than
// each range's top-left cell (up to the rows a grid sheet is scanned for).
func mergedAwayCells(f *excelize.File, sheet string) map[[2]int]bool {
	out := map[[2]int]bool{}
	merged, err := f.GetMergeCells(sheet)
	if err != nil {
		return out
	}
	for _, m := range merged {
		c0, r0, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c1, r1, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		if err1 != nil || err2 != nil {
			continue
		}
		r1 = min(r1, maxGridScanRows)
		if (r1-r0+1)*(c1-c0+1) > 1<<16 {
			continue // a merge over a whole sheet region is no layout to read
		}
		for r := r0; r <= r1; r++ {
			for c := c0; c <= c1; c++ {
				if r != r0 || c != c0 {
					out[[2]int{r, c}] = true
				}
			}
		}
	}
	return out
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
			if countRaceCells(g.text, r, l.col, end, g.m) > 0 {
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
		b := &gridBlock{label: l, r0: l.row, c0: l.col, c1: end, rows: map[int]string{}}
		dataStart := g.readHeader(b, headerRow)
		if len(b.columns) == 0 {
			continue
		}
		g.readRows(b, dataStart, isLabelRow)
		blocks = append(blocks, b)
	}
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

// readHeader reads the race/gender header starting at row hr and returns
// the first data row.
func (g *gridReader) readHeader(b *gridBlock, hr int) int {
	firstRace := 0
	for c := b.c0; c <= b.c1; c++ {
		v := g.text.at(hr, c)
		if _, ok := g.m.Race(v); ok {
			firstRace = c
			break
		}
		if _, _, ok := g.m.RaceGender(v); ok {
			firstRace = c
			break
		}
	}
	// Does a gender row follow?
	genderRow := hr + 1
	hasGenders := false
	for c := firstRace; c <= b.c1; c++ {
		if _, ok := g.m.Gender(g.text.at(genderRow, c)); ok {
			hasGenders = true
			break
		}
	}
	g.misspeltLeadingRaces(b, hr, firstRace, hasGenders)
	seen := map[[2]string]int{}
	add := func(c int, race, gender string) {
		if prev, dup := seen[[2]string{race, gender}]; dup {
			ref, _ := excelize.CoordinatesToCellName(prev, hr)
			g.errorf(hr, c, "", nil, "the column %s %s appears twice in this grid (also at %s); each race and gender once",
				templates.RaceLabel(race), templates.GenderLabel(gender), ref)
			return
		}
		seen[[2]string{race, gender}] = c
		b.columns = append(b.columns, gridColumn{col: c, race: race, gender: gender})
	}
	curRace := ""
	for c := firstRace; c <= b.c1; c++ {
		v := g.text.at(hr, c)
		if v != "" {
			if r, ok := g.m.Race(v); ok {
				curRace = r
			} else if r, gd, ok := g.m.RaceGender(v); ok {
				curRace = ""
				add(c, r, gd)
				continue
			} else if isTotalHeader(v) {
				curRace = ""
				g.warnf(hr, c, v, "column %q is not a counter and is ignored", v)
				continue
			} else {
				curRace = ""
				g.errorf(hr, c, v, g.m.SuggestRace(v), "%q is not a race of the counter catalog", v)
				continue
			}
		}
		if !hasGenders {
			if v != "" && curRace != "" {
				g.errorf(hr, c, v, nil, "the race %q has no gender: put Male/Female in the row below, or write headers such as \"African male\"", v)
			}
			continue
		}
		gv := g.text.at(genderRow, c)
		if gv == "" {
			continue
		}
		gd, ok := g.m.Gender(gv)
		switch {
		case !ok && isTotalHeader(gv):
			g.warnf(genderRow, c, gv, "column %q is not a counter and is ignored", gv)
		case !ok:
			g.errorf(genderRow, c, gv, g.m.SuggestGender(gv), "%q is not a gender of the counter catalog", gv)
		case curRace == "":
			g.errorf(genderRow, c, gv, nil, "the gender column %q has no race above it", gv)
		default:
			add(c, curRace, gd)
		}
	}
	if hasGenders {
		return genderRow + 1
	}
	return hr + 1
}

// misspeltLeadingRaces reports the header cells left of the first race the
// catalog knows that are race headers all the same (a gender below them, or
// a combined header ending in a gender): without this, a misspelt first
// race ("Afican") would drop its counter columns silently.
func (g *gridReader) misspeltLeadingRaces(b *gridBlock, hr, firstRace int, hasGenders bool) {
	for c := b.c0 + 1; c < firstRace; c++ {
		v := g.text.at(hr, c)
		if v == "" || isTotalHeader(v) {
			continue
		}
		if hasGenders {
			if _, ok := g.m.Gender(g.text.at(hr+1, c)); ok {
				g.errorf(hr, c, v, g.m.SuggestRace(v), "%q is not a race of the counter catalog", v)
			}
			continue
		}
		words := strings.Fields(strings.ReplaceAll(templates.Normalize(v), "_", " "))
		if len(words) < 2 {
			continue
		}
		if _, ok := g.m.Gender(words[len(words)-1]); ok {
			race := strings.Join(words[:len(words)-1], " ")
			g.errorf(hr, c, v, g.m.SuggestRace(race), "%q is not a race and gender of the counter catalog", v)
		}
	}
}

func isTotalHeader(v string) bool {
	n := templates.Normalize(v)
	return n == "total" || n == "totals" || n == "sum" || n == "grand total" || n == "total male" || n == "total female"
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
			g.errorf(r, c, g.text.at(r, c), nil,
				"a grid of races and genders with no label above it: put a label such as %q in the row above, at the grid's top left",
				templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
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
	return meta
}

// record turns a grid into a Record; ok is false for a grid whose counter
// cells are all blank.
func (g *gridReader) record(b *gridBlock, meta map[string]pipeline.Cell) (pipeline.Record, bool) {
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
	return rec, counters > 0
}
