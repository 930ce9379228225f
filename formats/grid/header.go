package grid

import (
	"strings"

	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// findGrids finds every labelled grid of the sheet.
func (g *gridReader) findGrids() []*gridBlock {
	labels := g.findLabels()
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
			if l.weak {
				continue // a heading's line, not a grid's title
			}
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

// findLabels returns the grid labels of the sheet, each with its EEA13
// section: the one its title names, else that of the nearest section
// heading above it ("4.2 Numerical goals", "Workforce profile"), else
// numerical targets. Under a heading of goals or of a profile, a title
// naming only whose figures they are ("All employees, including people
// with disabilities", "People with disabilities only") is a label too
// (weak: only with a header below it). A grid's own title that names its
// section ("Workforce profile 2025/26: all employees") heads only such
// bare titles below it: a grid titled for a year below it keeps its own
// section, so a short profile title never turns the targets after it into
// the baseline.
func (g *gridReader) findLabels() []gridLabel {
	var labels []gridLabel
	heading, headed := sectionTargets, false  // a heading line's
	bare, bareHeaded := sectionTargets, false // a heading line's or a title's
	for r := 1; r <= len(g.text); r++ {
		for c := 1; c <= len(g.text[r-1]); c++ {
			v := g.text.at(r, c)
			if v == "" {
				continue
			}
			l, ok := parseGridLabel(v)
			if !ok && bareHeaded && bare != sectionTargets && len(v) <= 120 && !g.looksLikeProse(r, c) {
				if tt, unclear, named := templates.TitleTargetType(v); named && !unclear {
					l, ok = gridLabel{targetType: tt, weak: true}, true
				}
			}
			if sec, named := headingOf(v); named {
				bare, bareHeaded = sec, true
				if !ok {
					heading, headed = sec, true
				}
			}
			if !ok {
				continue
			}
			l.row, l.col = r, c
			switch {
			case l.sectionNamed:
			case l.weak:
				l.section = bare
			case headed:
				l.section = heading
			}
			labels = append(labels, l)
		}
	}
	return labels
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
			if _, ok := g.memo.level(g.m, g.text.at(rr, c)); ok {
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
	h := &headerRead{g: g, b: b, hr: hr, sr: hr + 1}
	firstCol := h.firstColumn()
	if firstCol == 0 {
		return hr + 1
	}
	h.groupColumns(firstCol)
	g.misspeltLeading(b, hr, firstCol, h.twoRow)
	h.seen = map[[2]string]int{}
	h.subKind = h.subHeaderKind(firstCol)
	for c := firstCol; c <= b.c1; c++ {
		h.column(c)
	}
	if h.twoRow {
		return h.sr + 1
	}
	return hr + 1
}

// headerRead is readHeader's state while it reads one grid header.
type headerRead struct {
	g      *gridReader
	b      *gridBlock
	hr, sr int  // the header row and the row of sub-headers, when there is one
	twoRow bool // the header has a row of sub-headers
	// group maps a column to the column of the group header heading it.
	group   map[int]int
	seen    map[[2]string]int // race and gender -> the column read for them
	subKind headerKind        // what the sub-headers mostly name (subHeaderKind)
}

// isHead reports whether v names a race, a gender or both.
func (h *headerRead) isHead(v string) bool {
	k := h.g.memo.header(h.g.m, v).kind
	return k == hdrRace || k == hdrGender || k == hdrRaceGender
}

// firstColumn returns the first column of the header that names a race or
// a gender (0: none), and sets twoRow when the row below has such a cell.
func (h *headerRead) firstColumn() int {
	g, b := h.g, h.b
	firstCol := 0
	for c := b.c0; c <= b.c1 && firstCol == 0; c++ {
		if h.isHead(g.headerText(h.hr, c)) {
			firstCol = c
		}
	}
	for c := b.c0 + 1; c <= b.c1; c++ {
		if h.isHead(g.headerText(h.sr, c)) {
			h.twoRow = true
			if c < firstCol || firstCol == 0 {
				firstCol = c
			}
		}
	}
	return firstCol
}

// groupColumns sets group: a group header heads its own column, the
// columns it is merged across, and (not merged) the columns after it with
// a sub-header, up to the next group header or a column without a
// sub-header.
func (h *headerRead) groupColumns(firstCol int) {
	g, b, hr := h.g, h.b, h.hr
	h.group = map[int]int{}
	cur := 0
	for c := firstCol; c <= b.c1; c++ {
		if o, away := g.mergedAway[[2]int{hr, c}]; away {
			if o[0] == hr && o[1] >= firstCol {
				h.group[c], cur = o[1], o[1]
			} else {
				cur = 0
			}
			continue
		}
		switch {
		case g.text.at(hr, c) != "":
			h.group[c], cur = c, c
		case h.twoRow && g.headerText(h.sr, c) != "" && cur > 0:
			h.group[c] = cur
		default:
			cur = 0
		}
	}
}

// subHeaderKind returns what the sub-headers mostly name (genders or
// races), for the advice on one that names neither.
func (h *headerRead) subHeaderKind(firstCol int) headerKind {
	if !h.twoRow {
		return hdrBlank
	}
	n := map[headerKind]int{}
	for c := firstCol; c <= h.b.c1; c++ {
		n[h.g.memo.header(h.g.m, h.g.headerText(h.sr, c)).kind]++
	}
	switch {
	case n[hdrGender] > n[hdrRace]:
		return hdrGender
	case n[hdrRace] > n[hdrGender]:
		return hdrRace
	}
	return hdrBlank
}

// add reads column c as the counters of race and gender, unless an
// earlier column has them (an error, and c is blocked).
func (h *headerRead) add(c int, race, gender string) {
	if prev, dup := h.seen[[2]string{race, gender}]; dup {
		ref, _ := excelize.CoordinatesToCellName(prev, h.hr)
		h.g.errorf(h.hr, c, "", nil, "the column %s %s appears twice in this grid (also at %s); each race and gender once",
			templates.RaceLabel(race), templates.GenderLabel(gender), ref)
		h.b.blocked[c] = true
		return
	}
	h.seen[[2]string{race, gender}] = c
	h.b.columns = append(h.b.columns, gridColumn{col: c, race: race, gender: gender})
}

// hasSub reports whether a column of the group headed at column top has
// a sub-header.
func (h *headerRead) hasSub(top int) bool {
	for c := top; c <= h.b.c1; c++ {
		if h.group[c] != top {
			if c > top {
				break
			}
			continue
		}
		if h.g.headerText(h.sr, c) != "" {
			return true
		}
	}
	return false
}

// bothSuggest suggests races and genders for v.
func (h *headerRead) bothSuggest(v string) []string {
	return append(h.g.m.SuggestRace(v), h.g.m.SuggestGender(v)...)
}

// headerColumn is one column of a header as headerRead reads it: its
// group header (top, in column topCol) and its sub-header, classified.
type headerColumn struct {
	c, topCol int
	top, sub  string
	tk, sk    headerCell
}

// blockTop reports the column's group header and blocks the column.
func (h *headerRead) blockTop(hc *headerColumn, suggest []string, format string, args ...any) {
	h.g.headerErrorf(h.hr, hc.topCol, hc.top, suggest, format, args...)
	h.b.blocked[hc.c] = true
}

// blockSub reports the column's sub-header and blocks the column.
func (h *headerRead) blockSub(hc *headerColumn, suggest []string, format string, args ...any) {
	h.g.headerErrorf(h.sr, hc.c, hc.sub, suggest, format, args...)
	h.b.blocked[hc.c] = true
}

// column reads column c of the header: a counter column, a Total column,
// or an error at the header cell that names no race and gender.
func (h *headerRead) column(c int) {
	g := h.g
	hc := headerColumn{c: c, topCol: h.group[c]}
	if hc.topCol > 0 {
		hc.top = g.text.at(h.hr, hc.topCol)
	}
	hc.tk = g.memo.header(g.m, hc.top)
	if h.twoRow {
		hc.sub = g.headerText(h.sr, c)
	}
	hc.sk = g.memo.header(g.m, hc.sub)
	switch {
	case hc.sub != "":
		h.subHeaded(&hc)
	case hc.topCol == c:
		h.topOnly(&hc)
	}
	// else: under a group header, without a sub-header of its own
}

// subHeaded reads a column with a sub-header of its own.
func (h *headerRead) subHeaded(hc *headerColumn) {
	c, top, sub, tk, sk := hc.c, hc.top, hc.sub, hc.tk, hc.sk
	m := h.g.m
	switch sk.kind {
	case hdrRaceGender:
		h.add(c, sk.race, sk.gender)
	case hdrTotal:
		h.b.totals[c] = true
	case hdrRace:
		switch tk.kind {
		case hdrGender:
			h.add(c, sk.race, tk.gender)
		case hdrTotal:
			h.b.totals[c] = true
		case hdrBlank:
			h.blockSub(hc, nil, "the race column %q has no gender above it: put Male or Female over its race columns (merged or not), or write combined headers such as \"African male\"", sub)
		case hdrOther:
			h.blockTop(hc, m.SuggestGender(top), "%q is not a gender of the counter catalog (it heads race columns); its columns are not read", top)
		default:
			h.blockSub(hc, nil, "the race column %q is under %q, which is no gender: put a race over Male/Female, or a gender over the races", sub, top)
		}
	case hdrGender:
		switch tk.kind {
		case hdrRace:
			h.add(c, tk.race, sk.gender)
		case hdrTotal:
			h.b.totals[c] = true
		case hdrBlank:
			h.blockSub(hc, nil, "the gender column %q has no race above it: put the race over its gender columns (merged or not), or write combined headers such as \"African male\"", sub)
		case hdrOther:
			h.blockTop(hc, m.SuggestRace(top), "%q is not a race of the counter catalog (it heads gender columns); its columns are not read", top)
		default:
			h.blockSub(hc, nil, "the gender column %q is under %q, which is no race: put a race over Male/Female, or a gender over the races", sub, top)
		}
	default: // hdrOther
		h.otherSub(hc)
	}
}

// otherSub reads a column whose sub-header names no race, gender or
// Total.
func (h *headerRead) otherSub(hc *headerColumn) {
	c, sub := hc.c, hc.sub
	m := h.g.m
	switch hc.tk.kind {
	case hdrRace:
		h.blockSub(hc, m.SuggestGender(sub), "%q is not a gender of the counter catalog; its column is not read", sub)
	case hdrGender:
		h.blockSub(hc, m.SuggestRace(sub), "%q is not a race of the counter catalog; its column is not read", sub)
	case hdrTotal:
		if _, merged := h.g.mergedAway[[2]int{h.hr, c}]; hc.topCol == c || merged {
			h.b.totals[c] = true // under its own or a merged Total header
			return
		}
		// Beside a Total header, not merged with it: the
		// column is headed by its own cell, which says no Total.
		h.blockSub(hc, h.bothSuggest(sub), "%q is not a race or gender of the counter catalog, nor a Total; its column is not read", sub)
	default:
		switch h.subKind {
		case hdrGender:
			h.blockSub(hc, m.SuggestGender(sub), "%q is not a gender of the counter catalog; its column is not read", sub)
		case hdrRace:
			h.blockSub(hc, m.SuggestRace(sub), "%q is not a race of the counter catalog; its column is not read", sub)
		default:
			h.blockSub(hc, h.bothSuggest(sub), "%q is not a race or gender of the counter catalog; its column is not read", sub)
		}
	}
}

// topOnly reads a column headed by its own group header, without a
// sub-header.
func (h *headerRead) topOnly(hc *headerColumn) {
	c, top, tk := hc.c, hc.top, hc.tk
	switch tk.kind {
	case hdrRaceGender:
		h.add(c, tk.race, tk.gender)
	case hdrTotal:
		h.b.totals[c] = true
	case hdrRace:
		if !h.twoRow || !h.hasSub(c) {
			h.blockTop(hc, nil, "the race %q has no gender: put Male/Female in the row below, or write headers such as \"African male\"", top)
		}
	case hdrGender:
		if !h.twoRow || !h.hasSub(c) {
			h.blockTop(hc, nil, "the gender %q has no race: put the races (African, Coloured, ... or A, C, I, W) in the row below, or write headers such as \"African male\"", top)
		}
	case hdrOther:
		if h.twoRow {
			h.blockTop(hc, h.bothSuggest(top), "%q is not a race or gender of the counter catalog; its column is not read", top)
		} else {
			h.blockTop(hc, h.bothSuggest(top), "%q is not a race and gender of the counter catalog; its column is not read", top)
		}
	}
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
			sub := g.memo.header(g.m, g.headerText(hr+1, c)).kind
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
