package grid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

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

// hasFlatHeader reports whether a flat header cell
// (templates.IsFlatHeaderCell) is in the first rows: such a sheet is a
// flat table.
func (s sheetText) hasFlatHeader() bool {
	for r := 1; r <= min(len(s), templates.FlatHeaderRows); r++ {
		for c := 1; c <= len(s[r-1]); c++ {
			if templates.IsFlatHeaderCell(s.at(r, c)) {
				return true
			}
		}
	}
	return false
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

// gridMemo remembers, across the sheets of a workbook, what the header
// and level texts of the grid reader name (classifyHeader,
// templates.Matcher.Level): an export's 3,000 plan sheets repeat the same
// few dozen labels, each normalised once rather than on every sheet.
// Bounded: texts longer than a label are not kept, and past
// gridMemoMax entries it starts afresh. It serves one matcher (one
// catalog) and one goroutine.
type gridMemo struct {
	headers map[string]headerCell
	levels  map[string]gridLevel
}

// gridLevel is a text's templates.Matcher.Level answer.
type gridLevel struct {
	key string
	ok  bool
}

const (
	gridMemoMax     = 1 << 12
	gridMemoMaxText = 120
)

// header returns classifyHeader(m, v), remembered.
func (mm *gridMemo) header(m *templates.Matcher, v string) headerCell {
	if mm == nil || len(v) > gridMemoMaxText {
		return classifyHeader(m, v)
	}
	if h, ok := mm.headers[v]; ok {
		return h
	}
	h := classifyHeader(m, v)
	if mm.headers == nil || len(mm.headers) >= gridMemoMax {
		mm.headers = make(map[string]headerCell, 64)
	}
	mm.headers[v] = h
	return h
}

// level returns m.Level(v), remembered.
func (mm *gridMemo) level(m *templates.Matcher, v string) (string, bool) {
	if mm == nil || len(v) > gridMemoMaxText {
		return m.Level(v)
	}
	if l, ok := mm.levels[v]; ok {
		return l.key, l.ok
	}
	k, ok := m.Level(v)
	if mm.levels == nil || len(mm.levels) >= gridMemoMax {
		mm.levels = make(map[string]gridLevel, 64)
	}
	mm.levels[v] = gridLevel{k, ok}
	return k, ok
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
	// skip: a grid of numerical goals that the final year's targets grid
	// carries (placeGoals), not read as a record of its own.
	skip bool
}

func (g *gridBlock) covers(r, c int) bool { return r >= g.r0 && r <= g.r1 && c >= g.c0 && c <= g.c1 }

// gridLikeCause looks at a sheet that is no grid plan sheet (isGridSheet
// false) for a grid all the same: a grid label with two level rows
// holding numbers in the six rows below it. It returns the label's cell
// and why the grid is not read (its header names no race and gender that
// the vocabulary knows), or "" when there is none: a sheet from which no
// plan is read is then an error naming the cause, never passed over as a
// sheet of notes (docs/formats.md, the grid workbook).
func gridLikeCause(text sheetText, m *templates.Matcher) (at string, why string) {
	for r := 1; r <= len(text); r++ {
		for c := 1; c <= len(text[r-1]); c++ {
			v := text.at(r, c)
			if v == "" {
				continue
			}
			if _, ok := parseGridLabel(v); !ok {
				continue
			}
			levels, header := 0, ""
			for rr := r + 1; rr <= r+8 && rr <= len(text); rr++ {
				if levelRowWithNumber(text, rr, c, m) {
					levels++
				} else if levels == 0 && header == "" {
					header = rowExcerpt(text, rr, c)
				}
			}
			if levels < 2 {
				continue
			}
			at, _ = excelize.CoordinatesToCellName(c, r)
			if header == "" {
				return at, fmt.Sprintf("the grid labelled %q has level rows with numbers but no header of races and genders in the 4 rows below its label", v)
			}
			return at, fmt.Sprintf("the grid labelled %q has level rows with numbers, but its header (%s) names no race and gender eepipe reads: use the races (African, Coloured, Indian, White, Foreign nationals) over Male and Female, combined headers such as \"African male\" or the codes AM ... WF, MA ... FW, FNM, FNF, or teach the header's words in a mapping file given with --map", v, header)
		}
	}
	return "", ""
}

// levelRowWithNumber reports whether row r names an occupational level at
// or right of column c0 and holds a number after it.
func levelRowWithNumber(text sheetText, r, c0 int, m *templates.Matcher) bool {
	level := false
	for c := c0; c <= len(text[r-1]); c++ {
		v := text.at(r, c)
		if v == "" {
			continue
		}
		if !level {
			if _, ok := m.Level(v); !ok {
				return false
			}
			level = true
			continue
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return true
		}
	}
	return false
}

// rowExcerpt is the first cells of row r from column c0, quoted, for a
// message.
func rowExcerpt(text sheetText, r, c0 int) string {
	var parts []string
	for c := c0; c <= len(text[r-1]) && len(parts) < 6; c++ {
		if v := text.at(r, c); v != "" {
			parts = append(parts, strconv.Quote(pipeline.Excerpt(v)))
		}
	}
	return strings.Join(parts, ", ")
}
