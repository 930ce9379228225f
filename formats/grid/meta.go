package grid

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// readMeta reads the labelled metadata cells outside the grids.
func (g *sheetReader) readMeta(blocks []*block) map[string]pipeline.Cell {
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

// companyKeys are the company identifier fields of a grid sheet's
// company block, in the template's order.
var companyKeys = [...]string{"company_vat_number", "company_registration_number", "company_id_number"}

// placeMissingCompany gives a sheet whose company identifiers are all blank
// one place for the missing company (pipeline.MissingCompany): the company
// block, from its labels to the value cells beside them ("A6:B8"), when
// the labels are in one column on consecutive rows, as the template lays
// them out; otherwise the first label and the value cell beside it
// ("A6:B6"). A consultant sees the labels and the cells to fill in, and
// the annotated copy marks them.
func (g *sheetReader) placeMissingCompany(meta map[string]pipeline.Cell, where map[string]pipeline.Origin) {
	var labels []pipeline.Origin
	for _, k := range companyKeys {
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
	for _, k := range companyKeys {
		if c, ok := meta[k]; ok {
			c.Origin = at
			meta[k] = c
		}
	}
}

// record turns a grid into a Record; ok is false for a grid whose counter
// cells are all blank.
func (g *sheetReader) record(b *block, meta map[string]pipeline.Cell) (pipeline.Record, bool) {
	if b.label.unclear || b.skip {
		return pipeline.Record{}, false // reported by checkTitles or placeGoals
	}
	labelOrigin := g.origin(b.label.row, b.label.col)
	// Sized at once for the metadata, the year and type and every counter
	// cell: grown from empty, the map of ~90 counters is rebuilt on the
	// way several times per grid.
	rec := pipeline.Record{Origin: labelOrigin, Cells: make(map[string]pipeline.Cell, len(meta)+3+len(b.rows)*len(b.columns))}
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
			cell := g.cellAt(r, col.col) // placed by row and column (cellAt)
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
func (g *sheetReader) checkTotals(b *block, rows []int) {
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
			n, ok, err := pipeline.CounterValue(g.cellAt(r, col.col))
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
			cell := g.cellAt(r, c)
			total, ok, err := pipeline.CounterValue(cell)
			if !ok || err != nil || total == sum {
				continue
			}
			g.warnf(r, c, cell.Text, "the Total column says %d, but the %d counters of this row add up to %d: a counter or the total is wrong (the total itself is not read)",
				total, len(b.columns), sum)
		}
	}
}
