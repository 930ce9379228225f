package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"strconv"
	"strings"
)

// asmTarget holds the places of a target's year cells when they are not
// its table's usual ones (Assembler.odd).
type asmTarget struct {
	year pipeline.ReadPlace // the year_number cell, when given
	fy   pipeline.ReadPlace // the financial_year cell, when given
}

// asmYearCells are the columns of a table's year cells, the first seen. A
// target whose year cells are in them, on its own row, written as the
// value reads (the usual case), keeps no places until Finish: they follow
// from its row.
type asmYearCells struct{ year, fy *pipeline.Origin }

// keepYears keeps the places of t's year cells until Finish, unless they
// are the usual ones (see asmYearCells).
func (a *Assembler) keepYears(t *pipeline.InputTarget, year, fy pipeline.ReadPlace) {
	k := [2]string{t.Origin.File, t.Origin.Sheet}
	yc := a.yearCells[k]
	if yc == nil {
		yc = &asmYearCells{}
		if len(a.yearCells) < 4096 {
			a.yearCells[[2]string{strings.Clone(k[0]), strings.Clone(k[1])}] = yc
		}
	}
	usual := func(p pipeline.ReadPlace, col **pipeline.Origin, text string, given bool) bool {
		if !given {
			return p.At == nil
		}
		if !p.OnRow || p.Raw != text {
			return false
		}
		if *col == nil {
			*col = p.At
		}
		return *col == p.At
	}
	if usual(year, &yc.year, asmYearText(t.YearNumber), t.YearNumber != 0) && usual(fy, &yc.fy, a.fyText(t.FinancialYear), t.FinancialYear != 0) {
		return
	}
	if a.odd == nil {
		a.odd = map[*pipeline.InputTarget]*asmTarget{}
	}
	a.odd[t] = &asmTarget{year: year, fy: fy}
}

// yearPlaces returns the places of t's year cells as read (call it before
// Finish fills in the year the row leaves out).
func (a *Assembler) yearPlaces(t *pipeline.InputTarget) (year, fy pipeline.ReadPlace) {
	if ta := a.odd[t]; ta != nil {
		return ta.year, ta.fy
	}
	yc := a.yearCells[[2]string{t.Origin.File, t.Origin.Sheet}]
	if yc == nil {
		return pipeline.ReadPlace{}, pipeline.ReadPlace{}
	}
	if t.YearNumber != 0 && yc.year != nil {
		year = pipeline.ReadPlace{At: yc.year, OnRow: true, Raw: asmYearText(t.YearNumber)}
	}
	if t.FinancialYear != 0 && yc.fy != nil {
		fy = pipeline.ReadPlace{At: yc.fy, OnRow: true, Raw: a.fyText(t.FinancialYear)}
	}
	return year, fy
}

func asmYearText(n int) string { return strconv.Itoa(n) }

// fyText returns fy.String(), formatted once per year.
func (a *Assembler) fyText(fy pipeline.FinancialYear) string {
	if fy == 0 {
		return ""
	}
	if s, ok := a.fyTexts[fy]; ok {
		return s
	}
	s := fy.String()
	if a.fyTexts == nil {
		a.fyTexts = map[pipeline.FinancialYear]string{}
	}
	if len(a.fyTexts) < 4096 {
		a.fyTexts[fy] = s
	}
	return s
}

// place returns the asmPlace of a cell read at o with text raw.
func (a *Assembler) place(o pipeline.Origin, row int, raw string) pipeline.ReadPlace {
	raw = a.keepText(raw)
	if col, ok := columnOf(o, row); ok {
		// The last few columns looked up, compared field by field (their
		// strings are usually the reader's same ones), before the map,
		// whose key hashes every string of the Origin.
		for i := range a.placeCache {
			if pc := &a.placeCache[i]; pc.at != nil && asmSameOrigin(&pc.col, &col) {
				return pipeline.ReadPlace{At: pc.at, OnRow: true, Raw: raw}
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
		return pipeline.ReadPlace{At: at, OnRow: true, Raw: raw}
	}
	k := asmKeep(o)
	return pipeline.ReadPlace{At: &k, Raw: raw}
}

// asmPlaceCacheEntry is one of place's last columns: the column (an
// Origin without a row) and the shared Origin place gives for it.
type asmPlaceCacheEntry struct {
	col pipeline.Origin
	at  *pipeline.Origin
}

// asmSameOrigin reports whether *a == *b, at once for the strings that
// are the same string.
func asmSameOrigin(a, b *pipeline.Origin) bool {
	return a.Row == b.Row && a.Column == b.Column && asmSame(a.File, b.File) && asmSame(a.Sheet, b.Sheet) &&
		asmSame(a.Cell, b.Cell) && asmSame(a.Header, b.Header)
}

// asmKeep returns o with its own copy of the cell reference, for an Origin
// the Assembler keeps: a reader may cut the references of a row from one
// string, which a kept reference would hold in memory whole.
func asmKeep(o pipeline.Origin) pipeline.Origin {
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

func asmOriginOf(c pipeline.Cell, rec pipeline.Record, col string) pipeline.Origin {
	o := c.Origin
	if o.File == "" {
		o = rec.Origin
	}
	if o.Header == "" {
		o.Header = col
	}
	return o
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
func asmRef(earlier, here pipeline.Origin) string {
	e := earlier
	e.Header = ""
	if earlier.File == here.File {
		e.File = ""
		return strings.TrimPrefix(strings.TrimPrefix(e.String(), "."), " ")
	}
	return e.String()
}
