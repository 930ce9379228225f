package formats

import (
	"bytes"
	"io"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// gridStreamSheet is one worksheet read by a single streaming scan (the
// flat reader's scanner): the raw text of its first maxGridScanRows rows
// for the layout, and every cell typed once, kept sparse (a row holds the
// cells it has, by column).
type gridStreamSheet struct {
	text  sheetText
	cells [][]gridCellAt // by row - 1, sorted by column
	// slots counts the text slots of the dense rows of text; past
	// gridMaxTextSlots the scan stops and tooWide is set (rows of one
	// cell in column XFD would otherwise take 256 KiB each).
	slots   int
	tooWide bool
	// kept counts the cells kept (typed, in the first maxGridScanRows
	// rows); past gridMaxSheetCells the scan stops and tooMany is set.
	kept    int
	tooMany bool
}

// gridMaxSheetCells bounds the cells one sheet read as a grid plan sheet
// may keep in memory (a sheet is held whole until the reader knows whether
// it is a grid; about 300 bytes a cell): a grid plan sheet holds a few
// thousand cells, so this admits anything a person or an export makes and
// keeps a hostile sheet of a million cells under the memory bound.
const gridMaxSheetCells = 250_000

// gridMaxTextSlots bounds the dense text rows a grid sheet's layout is
// read into (16 bytes a slot): a grid plan sheet spans a few dozen columns
// and rows, about 5,000 slots.
const gridMaxTextSlots = 1 << 22

type gridCellAt struct {
	col  int
	cell pipeline.Cell // without its origin
}

// scanGridSheet reads a sheet in one pass: the first maxGridScanRows
// rows are kept, every cell is counted into cells (the scan stops once
// they pass gridMaxCells).
func (b *flatBook) scanGridSheet(info flatSheetInfo, cells *int) (*gridStreamSheet, error) {
	s := &gridStreamSheet{}
	err := b.scanSheet(info, func(row int, raw []flatRawCell) bool {
		*cells += len(raw)
		if *cells > gridMaxCells {
			return false
		}
		if row < 1 || row > maxGridScanRows {
			return true // counted and checked by the scan, not read
		}
		for len(s.text) < row {
			s.text = append(s.text, nil)
			s.cells = append(s.cells, nil)
		}
		line, typed := s.text[row-1], s.cells[row-1]
		for i := range raw {
			rc := &raw[i]
			if rc.col < 1 || rc.col > excelize.MaxColumns {
				continue
			}
			c := b.cell(rc, pipeline.Origin{})
			text := c.Text
			switch c.Kind {
			case pipeline.CellNumber, pipeline.CellDate, pipeline.CellBool:
				// The layout reads values as excelize's raw cell values.
				text = string(bytes.TrimSpace(rc.value))
			}
			if text != "" {
				if grow := rc.col - len(line); grow > 0 {
					if s.slots += grow; s.slots > gridMaxTextSlots {
						s.tooWide = true
						return false
					}
					line = append(line, make([]string, grow)...)
				}
				line[rc.col-1] = text
			}
			if c.Kind != pipeline.CellBlank {
				if s.kept++; s.kept > gridMaxSheetCells {
					s.tooMany = true
					return false
				}
				typed = append(typed, gridCellAt{rc.col, c})
			}
		}
		sort.SliceStable(typed, func(i, j int) bool { return typed[i].col < typed[j].col })
		s.text[row-1], s.cells[row-1] = line, typed
		return true
	})
	return s, err
}

// cell returns the typed cell at (r, c), with its origin but no file.
func (s *gridStreamSheet) cell(sheet string, r, c int) pipeline.Cell {
	ref, _ := excelize.CoordinatesToCellName(c, r)
	o := pipeline.Origin{Sheet: sheet, Cell: ref, Row: r, Column: c}
	if r < 1 || r > len(s.cells) {
		return pipeline.Cell{Origin: o}
	}
	row := s.cells[r-1]
	i := sort.Search(len(row), func(i int) bool { return row[i].col >= c })
	if i == len(row) || row[i].col != c {
		return pipeline.Cell{Origin: o}
	}
	cell := row[i].cell
	cell.Origin = o
	return cell
}

// mergedAway returns the cells of the sheet's merged ranges other than
// each range's top-left cell (up to the rows a grid sheet is scanned
// for), as mergedAwayCells does: a second, light scan of the sheet for its
// <mergeCell> elements, which follow the cells.
func (b *flatBook) mergedAway(info flatSheetInfo) (map[[2]int][2]int, error) {
	out := map[[2]int][2]int{}
	if info.path == "" {
		return out, nil
	}
	rc, err := b.open(info.path)
	if err != nil {
		return out, nil
	}
	defer rc.Close()
	sc := newFlatXMLScanner(rc)
	for {
		if err := sc.next(); err != nil {
			return out, nil // io.EOF, or damage the row scan reports
		}
		if sc.kind != flatTokStart || string(sc.name) != "mergeCell" {
			continue
		}
		ref := string(sc.attr("ref"))
		from, to, ok := strings.Cut(ref, ":")
		if !ok {
			continue
		}
		c0, r0, err1 := excelize.CellNameToCoordinates(from)
		c1, r1, err2 := excelize.CellNameToCoordinates(to)
		if err1 != nil || err2 != nil {
			continue
		}
		if c0 > c1 {
			c0, c1 = c1, c0
		}
		if r0 > r1 {
			r0, r1 = r1, r0
		}
		r1 = min(r1, maxGridScanRows)
		if (r1-r0+1)*(c1-c0+1) > 1<<16 {
			continue // a merge over a whole sheet region is no layout to read
		}
		if err := addMergedAway(out, r0, c0, r1, c1); err != nil {
			return nil, err
		}
	}
}

// hiddenColumns returns the columns the sheet hides (<col hidden="1">,
// which come before its cells), so that a message about a cell in one can
// say the consultant cannot see it. A sheet that cannot be scanned hides
// none (the row scan reports the damage).
func (b *flatBook) hiddenColumns(info flatSheetInfo) map[int]bool {
	out := map[int]bool{}
	if info.path == "" {
		return out
	}
	rc, err := b.open(info.path)
	if err != nil {
		return out
	}
	defer rc.Close()
	sc := newFlatXMLScanner(rc)
	for {
		if err := sc.next(); err != nil || sc.kind == flatTokStart && string(sc.name) == "sheetData" {
			return out
		}
		if sc.kind != flatTokStart || string(sc.name) != "col" {
			continue
		}
		if h := string(sc.attr("hidden")); h != "1" && h != "true" {
			continue
		}
		lo, ok1 := flatAtoi(sc.attr("min"))
		hi, ok2 := flatAtoi(sc.attr("max"))
		if !ok1 || !ok2 || lo < 1 || hi < lo {
			continue
		}
		for c := lo; c <= min(hi, lo+maxHiddenColumns, excelize.MaxColumns); c++ {
			out[c] = true
		}
	}
}

// maxHiddenColumns bounds the columns one <col> element hides that are
// recorded: a grid spans a few dozen columns, and a sheet may hide every
// column to its last (min 20, max 16384).
const maxHiddenColumns = 256

// readXLSXGrids reads the grid plan sheets of a workbook that holds no
// flat table: each sheet is scanned once with the bounded streaming
// scanner (a malformed cell reference or an oversized row is an error at
// the cell; hidden sheets are checked too, never read), the visible grid
// sheets are read from that scan (their merged ranges in a second, light
// scan) and let go before the next, so memory holds one sheet at a time
// and the cost is linear in the sheets.
func readXLSXGrids(file string, _ io.ReaderAt, _ int64, book *flatBook, hidden []string, cat *pipeline.Catalog, emit func(pipeline.Record), ps *pipeline.Problems) {
	fileOrigin := pipeline.Origin{File: file}
	total, ok := book.plausibleSize()
	if !ok {
		ps.Errorf(fileOrigin, "", "%v", errFlatDamaged)
		return
	}
	if total > gridMaxUncompressed {
		ps.Errorf(fileOrigin, "", "%v", limitErrorf("the file is oversized or damaged: it has no flat table (no target_type header in the first %d rows of a sheet), and as grid plan sheets, which are read whole, it unpacks to %s, more than the %s a grid workbook may", flatHeaderRows, sizeText(total), sizeText(gridMaxUncompressed)))
		return
	}
	m := templates.NewMatcher(nil)
	found, cells := 0, 0
	for _, info := range book.sheets {
		if info.path == "" {
			continue
		}
		var sheet *gridStreamSheet
		var err error
		if info.hidden {
			err = book.scanSheet(info, func(_ int, row []flatRawCell) bool {
				cells += len(row)
				return cells <= gridMaxCells
			})
		} else {
			sheet, err = book.scanGridSheet(info, &cells)
		}
		book.noteScanError(info, err)
		if sheet != nil && sheet.tooMany {
			ps.Errorf(pipeline.Origin{File: file, Sheet: info.name}, "", "%v", limitErrorf("the file is oversized or damaged: it has no flat table (no target_type header in the first %d rows of a sheet), and this sheet, read as a grid plan sheet (which is read whole), has more than %d cells; a grid plan sheet holds a few thousand", flatHeaderRows, gridMaxSheetCells))
			return
		}
		if sheet != nil && sheet.tooWide {
			ps.Errorf(pipeline.Origin{File: file, Sheet: info.name}, "", "%v", limitErrorf("the file is oversized or damaged: the sheet's cells spread over more than %d cells of rows and columns (a grid plan sheet spans a few dozen of each)", gridMaxTextSlots))
			return
		}
		if cells > gridMaxCells {
			ps.Errorf(fileOrigin, "", "%v", limitErrorf("the file is oversized or damaged: it has no flat table (no target_type header in the first %d rows of a sheet), and as grid plan sheets, which are read whole, it has more than %d cells, the most a grid workbook may have", flatHeaderRows, gridMaxCells))
			return
		}
		if book.scanErr != nil {
			o := book.scanErrAt
			o.File = file
			ps.Errorf(o, "", "the workbook cannot be read: %v", book.scanErr)
			return
		}
		if sheet == nil || err != nil || sheet.text.hasFlatHeader() {
			continue // a sheet the scan cannot walk is not a grid sheet
		}
		if !isGridSheet(sheet.text, m) {
			// A plan sheet without a grid (an export of a plan that has
			// no targets) is named, never skipped in silence.
			if labels := planDetailLabels(sheet.text); labels != nil {
				found++
				ps.Warnf(pipeline.Origin{File: file, Sheet: info.name, Cell: labels[0]}, "",
					"this sheet has a plan's details but no grid of targets (a label such as %q above a header of races and genders), so it is not read: nothing is compared or applied for it",
					templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
			}
			continue
		}
		found++
		name, info := info.name, info
		src := gridSheetSource{
			text:   func() (sheetText, error) { return sheet.text, nil },
			cells:  func(r, c int) pipeline.Cell { return sheet.cell(name, r, c) },
			merged: func() (map[[2]int][2]int, error) { return book.mergedAway(info) },
			hidden: func(sheetText) map[int]bool { return book.hiddenColumns(info) },
		}
		recs, gps := readGridSheetFrom(src, file, name, cat)
		for i := range gps {
			if gps[i].Origin.File == "" {
				gps[i].Origin.File = file
			}
		}
		*ps = append(*ps, gps...)
		for _, rec := range recs {
			rec.Origin.File = file
			for k, c := range rec.Cells {
				if c.Origin.File == "" {
					c.Origin.File = file
					rec.Cells[k] = c
				}
			}
			emit(rec)
		}
	}
	if found > 0 {
		book.warnHiddenPlans(file, ps)
		return
	}
	if hiddenPlans := book.hiddenPlanSheets(file); len(hiddenPlans) > 0 {
		ps.Errorf(fileOrigin, "", "the plans of this workbook are on hidden sheets (%s), and hidden sheets are never read: unhide the sheet that holds the plans to apply (%s), save the workbook and run again",
			strings.Join(flatQuoteEach(hiddenPlans), ", "), unhideAdvice)
		return
	}
	ps.Errorf(fileOrigin, "", "no table found: no visible sheet has a header row (a row within the first %d rows with a cell reading target_type), and no sheet is a grid plan sheet", flatHeaderRows)
}
