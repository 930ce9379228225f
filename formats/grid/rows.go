package grid

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

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
			} else if _, isLevel := g.memo.level(g.m, l); !isLevel {
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
		level, ok := g.memo.level(g.m, label)
		if !ok && len(seen) == 0 && !rowHasCounter(r) && templates.IsLevelColumnName(label) {
			// The level column's name on a row of its own below a
			// two-row header (pandas' to_excel): part of the header.
			b.dataStart = r + 1
			delete(b.labelCols, r)
			continue
		}
		if !ok {
			g.levelRefusal(r, labelCol, label)
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

// levelRefusal reports a row label that names no occupational level, with
// its cause: an occupational category of the old EEA tables, a job grade
// (with the pointer to the mapping file), or a misspelt level (with the
// closest levels).
func (g *gridReader) levelRefusal(r, c int, label string) {
	switch {
	case templates.IsOccupationalCategory(label):
		g.errorf(r, c, label, nil, "%q is an occupational category, not an occupational level: %s", label, templates.CategoryAdvice)
	case templates.IsJobGrade(label):
		g.errorf(r, c, label, nil, "%q is a job grade, not an occupational level: %s", label, templates.JobGradeAdvice)
	default:
		g.errorf(r, c, label, g.m.SuggestLevel(label), "%q is not an occupational level of the counter catalog", label)
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
	cell := g.cellAt(r, c)
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
		year    int
		fy      string
		tt      string
		section gridSection
	}
	seen := map[key]*gridBlock{}
	for _, b := range blocks {
		l := b.label
		text := g.text.at(l.row, l.col)
		if l.income {
			b.label.unclear = true // not read: the error says why
			g.errorf(l.row, l.col, text, nil,
				"the table %q is of remuneration (form EEA4's income differentials: Rand amounts by level, race and gender), not of numbers of employees: it is never read as a plan; an EE plan's targets are headcounts (form EEA13)", text)
			continue
		}
		if l.unclear {
			g.errorf(l.row, l.col, text, nil,
				"the grid title %q does not say clearly whose targets the grid holds; %s", text, templates.TitleWordings)
			continue
		}
		if l.rangeErr != "" {
			b.label.unclear = true // not read: the error says why
			g.errorf(l.row, l.col, text, nil, "the grid title %q does not say which financial year the grid holds: %s", text, l.rangeErr)
			continue
		}
		k := key{l.yearNumber, l.fy, l.targetType, l.section}
		prev, dup := seen[k]
		if !dup {
			seen[k] = b
			continue
		}
		b.label.unclear = true // not read: the error below says why
		ref, _ := excelize.CoordinatesToCellName(prev.label.col, prev.label.row)
		what := templates.TargetTypeWords(pipeline.TargetAll)
		if l.targetType == pipeline.TargetDisabled {
			what = templates.TargetTypeWords(pipeline.TargetDisabled)
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
				if _, ok := g.memo.level(g.m, v); !ok {
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
