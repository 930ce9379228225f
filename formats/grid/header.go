package grid

import (
	"strings"

	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

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
	sr := hr + 1 // the row of sub-headers, when there is one
	isHead := func(v string) bool {
		k := g.memo.header(g.m, v).kind
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
			n[g.memo.header(g.m, g.headerText(sr, c)).kind]++
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
		tk := g.memo.header(g.m, top)
		sub := ""
		if twoRow {
			sub = g.headerText(sr, c)
		}
		sk := g.memo.header(g.m, sub)
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
