package table

import (
	"encoding/xml"
	"errors"
	"strings"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// HeaderRow scans the first rows of a sheet for the flat header
// (templates.IsFlatHeaderCell). Only a text cell can read target_type (a
// number, a boolean, an error or a date cannot), so no other is typed.
func HeaderRow(b *xlsx.Book, info xlsx.Sheet) (int, bool) {
	found, headerRow := false, 0
	err := b.ScanSheet(info, func(row int, cells []xlsx.RawCell) bool {
		if row > templates.FlatHeaderRows {
			return false
		}
		for _, rc := range cells {
			if rc.Type != "s" && rc.Type != "inlineStr" && rc.Type != "str" {
				continue
			}
			c := b.Cell(&rc, pipeline.Origin{})
			if templates.IsFlatHeaderCell(c.Text) {
				found, headerRow = true, row
				return false
			}
		}
		return true
	})
	b.NoteScanError(info, err)
	return headerRow, found
}

// FindSheet picks the sheet of the flat table: Targets when present and
// visible, else the first visible sheet with a header row. Hidden sheets
// are never read; the dispatch names those that hold plans (formats'
// hiddenPlanSheets).
func FindSheet(b *xlsx.Book) (sheet xlsx.Sheet, headerRow int, ok bool) {
	for _, s := range b.Sheets {
		if !s.Hidden && strings.EqualFold(s.Name, "Targets") {
			if r, found := HeaderRow(b, s); found {
				return s, r, true
			}
		}
	}
	for _, s := range b.Sheets {
		if s.Hidden {
			continue
		}
		if r, found := HeaderRow(b, s); found {
			return s, r, true
		}
	}
	return xlsx.Sheet{}, 0, false
}

// ReadSheet streams the flat table of one sheet into emit, which must
// not keep the record's Cells map nor its Counters slice: they are reused
// for the next row.
// words, when not nil, is the mapping file whose columns name headers.
func ReadSheet(b *xlsx.Book, file string, info xlsx.Sheet, headerRow int, cat *pipeline.Catalog, words *mapping.File, emit func(pipeline.Record), ps *pipeline.Problems) {
	r := &flatSheetReader{b: b, file: file, info: info, cat: cat, words: words, ps: ps}
	emitted := 0
	totals := tableTotalsRows(b, info)
	err := b.ScanSheet(info, func(row int, cells []xlsx.RawCell) bool {
		if row < headerRow {
			return true
		}
		if t, ok := totals[row]; ok && row > headerRow {
			ps.Warnf(pipeline.Origin{File: file, Sheet: info.Name, Row: row}, "",
				"row %d is the Total Row of the Excel table %q (%s), not a plan row, so it is not read", row, t.name, t.ref)
			return true
		}
		if row == headerRow {
			r.readHeader(row, cells)
			return true
		}
		if rec, ok := r.readRow(row, cells); ok {
			emit(rec)
			emitted++
		}
		return true
	})
	var se *xlsx.ScanError
	if errors.As(err, &se) {
		ps.Errorf(se.Origin(file, info.Name), "", "the sheet cannot be read to the end: %v", se.Err)
	} else if err != nil {
		ps.Errorf(pipeline.Origin{File: file, Sheet: info.Name}, "", "the sheet cannot be read to the end: %v", err)
	} else if emitted == 0 {
		ps.Warnf(pipeline.Origin{File: file, Sheet: info.Name, Row: headerRow}, "", "the table has a header row but no rows below it, so the sheet changes nothing")
	}
}

// flatSheetReader reads the rows of one sheet's flat table (ReadSheet).
type flatSheetReader struct {
	b     *xlsx.Book
	file  string
	info  xlsx.Sheet
	cat   *pipeline.Catalog
	words *mapping.File
	ps    *pipeline.Problems

	hdr *flatHeader
	// recCells is reused as it is: the Assembler keeps nothing of it, and
	// every row emitted sets every column's key (the columns it lacks as
	// blank cells), so updating the keys allocates nothing where new keys
	// would.
	recCells map[string]pipeline.Cell
	refBuf   []byte
	typed    []pipeline.Cell // the row's cells, typed
	names    []string        // the row's cells' column names ("": not read)
	present  []int           // column -> the last row (by rowSeq) with a cell in it
	rowSeq   int
	// The counter columns go to a slice (Record.Counters), as the flat
	// CSV reader's do: each place keeps its column's name and origin,
	// and a row sets its row, kind and text, so that a counter cell
	// costs no map update and the Assembler its per-column memo.
	counterCells []pipeline.CounterCell
	slot         []int // column -> its place in counterCells, -1 for the others
	otherCols    []int // the columns read that are not counters, in order
}

// origin is the place of a cell, with its reference.
func (r *flatSheetReader) origin(row, col int, header string) pipeline.Origin {
	r.refBuf = xlsx.AppendCellRef(r.refBuf[:0], col, row)
	return pipeline.Origin{File: r.file, Sheet: r.info.Name, Cell: string(r.refBuf), Row: row, Column: col, Header: header}
}

// readHeader reads the header row: the columns, and the places of the
// counter cells.
func (r *flatSheetReader) readHeader(row int, cells []xlsx.RawCell) {
	var names []flatHeaderCell
	for i := range cells {
		rc := &cells[i]
		c := r.b.Cell(rc, r.origin(row, rc.Col, ""))
		names = append(names, flatHeaderCell{col: rc.Col, text: c.Text, origin: c.Origin})
	}
	r.hdr = buildFlatHeader(names, r.cat, r.words, r.ps)
	r.recCells, r.present = nil, make([]int, len(r.hdr.names))
	r.counterCells, r.otherCols, r.slot = nil, nil, make([]int, len(r.hdr.names))
	for col := range r.slot {
		r.slot[col] = -1
	}
	for _, col := range r.hdr.cols {
		name := r.hdr.names[col]
		if !strings.HasPrefix(name, pipeline.CounterPrefix) {
			r.otherCols = append(r.otherCols, col)
			continue
		}
		r.slot[col] = len(r.counterCells)
		r.counterCells = append(r.counterCells, pipeline.CounterCell{Name: name, Cell: pipeline.Cell{
			Origin: pipeline.Origin{File: r.file, Sheet: r.info.Name, Column: col, Header: name}}})
	}
}

// readRow reads a row below the header as a record; false for a row
// with no cell in a column read.
func (r *flatSheetReader) readRow(row int, cells []xlsx.RawCell) (pipeline.Record, bool) {
	r.rowSeq++
	r.typed, r.names = r.typed[:0], r.names[:0]
	nonBlank := false
	for i := range cells {
		rc := &cells[i]
		c := r.b.Cell(rc, pipeline.Origin{}) // the place is added below, for the cells kept
		name, ok := r.hdr.name(rc.Col)
		if !ok {
			if !r.hdr.named[rc.Col] && !r.hdr.unheaded[rc.Col] && c.Kind != pipeline.CellBlank {
				c.Origin = r.origin(row, rc.Col, "")
				r.hdr.checkUnheaded(rc.Col, c.Origin, c.Text, r.ps)
			}
		} else {
			r.present[rc.Col] = r.rowSeq
			if c.Kind != pipeline.CellBlank {
				nonBlank = true
			}
		}
		r.typed, r.names = append(r.typed, c), append(r.names, name)
	}
	if !nonBlank {
		return pipeline.Record{}, false // a completely empty row
	}
	// The row's cells are placed by sheet, row and column, without a
	// cell reference string (pipeline.Origin derives it when needed):
	// a row allocates nothing for its places.
	if r.recCells == nil {
		r.recCells = make(map[string]pipeline.Cell, len(r.otherCols))
	}
	rec := pipeline.Record{Origin: pipeline.Origin{File: r.file, Sheet: r.info.Name, Row: row}, Cells: r.recCells, Counters: r.counterCells}
	for k := range r.counterCells {
		// Blank unless the row has the cell (set below).
		cc := &r.counterCells[k]
		o := cc.Cell.Origin
		o.Row = row
		cc.Cell = pipeline.Cell{Origin: o}
	}
	for i, name := range r.names {
		if name == "" {
			continue
		}
		col := cells[i].Col
		c := r.typed[i]
		if k := r.slot[col]; k >= 0 {
			c.Origin = r.counterCells[k].Cell.Origin
			r.counterCells[k].Cell = c
			continue
		}
		c.Origin = pipeline.Origin{File: r.file, Sheet: r.info.Name, Row: row, Column: col, Header: name}
		rec.Cells[name] = c
	}
	for _, col := range r.otherCols {
		if r.present[col] != r.rowSeq {
			rec.Cells[r.hdr.names[col]] = pipeline.Cell{Origin: pipeline.Origin{File: r.file, Sheet: r.info.Name, Row: row, Column: col, Header: r.hdr.names[col]}}
		}
	}
	return rec, true
}

// flatTable is an Excel table (ListObject) of a sheet, as its totals rows
// concern the reader.
type flatTable struct {
	name, ref string
}

// flatMaxTables bounds the table parts of a sheet that are read.
const flatMaxTables = 64

// tableTotalsRows returns the sheet rows that are the totals rows of its
// Excel tables (xl/tables/tableN.xml, related to the sheet): the last
// totalsRowCount rows of each table's range. Excel writes totalsRowCount
// when the table's Total Row is switched on (totalsRowShown only says
// whether it ever was); such a row sums the columns and holds no plan.
func tableTotalsRows(b *xlsx.Book, info xlsx.Sheet) map[int]flatTable {
	if info.Path == "" {
		return nil
	}
	rels, err := b.Rels(info.Path)
	if err != nil {
		return nil
	}
	var out map[int]flatTable
	n := 0
	for _, r := range rels {
		if !strings.HasSuffix(r.Type, "/table") {
			continue
		}
		if n++; n > flatMaxTables {
			break
		}
		rc, err := b.OpenMeta(xlsx.RelTarget(info.Path, r.Target))
		if err != nil {
			continue
		}
		var t struct {
			Name        string `xml:"name,attr"`
			DisplayName string `xml:"displayName,attr"`
			Ref         string `xml:"ref,attr"`
			TotalsRows  int    `xml:"totalsRowCount,attr"`
		}
		err = xml.NewDecoder(rc).Decode(&t)
		rc.Close()
		if err != nil || t.TotalsRows <= 0 {
			continue
		}
		_, to, ok := strings.Cut(t.Ref, ":")
		if !ok {
			continue
		}
		_, last, err := excelize.CellNameToCoordinates(to)
		if err != nil {
			continue
		}
		name := t.DisplayName
		if name == "" {
			name = t.Name
		}
		if out == nil {
			out = map[int]flatTable{}
		}
		for row := last - min(t.TotalsRows, 16) + 1; row <= last; row++ {
			out[row] = flatTable{name: name, ref: t.Ref}
		}
	}
	return out
}
