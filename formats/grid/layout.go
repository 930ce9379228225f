package grid

import (
	"strings"

	"github.com/eepipe/eepipe/formats/table"
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
}

func (g *gridBlock) covers(r, c int) bool { return r >= g.r0 && r <= g.r1 && c >= g.c0 && c <= g.c1 }
