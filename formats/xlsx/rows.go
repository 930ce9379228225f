package xlsx

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

// RawCell is one <c> element as found in the sheet XML. Value and
// Inline are the text of its <v> and of its <t> elements (an inline
// string's runs, joined); they are valid until the next row is read.
type RawCell struct {
	Col     int
	Style   int
	Type    string
	Value   []byte
	Inline  []byte
	formula bool
	hasV    bool

	// value and inline as spans of the batch's text while the rows are
	// scanned (the text may move as it grows).
	vStart, vEnd int
	iStart, iEnd int
	hasInline    bool
}

// staleCell stands for a cell left open in an earlier row, which the
// scan may still write to (as a stray </v> would) though no row reads it.
const staleCell = -2

// RowFunc receives each non-empty row: its number and its cells (the
// slice is reused between calls). Returning false stops the scan.
type RowFunc func(row int, cells []RawCell) bool

// rowBatch is a run of rows of a sheet, scanned and not yet read: the
// cells of all its rows, and the text their spans point into.
type rowBatch struct {
	rows  []rowSpan
	cells []RawCell
	text  []byte
	last  bool  // the scan ended after these rows
	err   error // why, when it failed
	panic any   // the scanner panicked, with this value
	// merges are the ref attributes of the <mergeCell> elements after
	// the rows (spans of text), in the last batch of a scan that asked
	// for them; mergesCut says there were more than MaxMergeRefs.
	merges    [][2]int
	mergesCut bool
}

// MaxMergeRefs bounds the merged ranges a scan gathers after a
// sheet's rows (readRowsMerged); a reference is a few bytes.
const MaxMergeRefs = 1 << 17

type rowSpan struct {
	row      int
	from, to int // the row's cells in cells
}

// Limits of a batch: rows, or text and cells for sheets with long rows.
const (
	batchRows  = 32
	batchText  = 256 << 10
	batchCells = 16 << 10
)

// ScanSheet streams a worksheet's rows to fn. The XML is decompressed and
// scanned on a goroutine of its own, a few batches of rows ahead of fn, so
// that reading a large sheet uses a second core; fn sees the rows in order,
// as if it were one loop.
func (b *Book) ScanSheet(info Sheet, fn RowFunc) error {
	if info.Path == "" {
		return fmt.Errorf("sheet %s has no worksheet data", info.Name)
	}
	rc, err := b.Open(info.Path)
	if err != nil {
		return err
	}
	defer rc.Close()
	return ReadRows(rc, fn, nil)
}

// ScanSheetMerged is scanSheet that also gathers the ref attributes of
// the sheet's <mergeCell> elements, which follow its rows, in the same
// pass: merged gets each (for that call only) once every row has been
// seen, unless fn stopped the scan; complete is false when there were more
// than MaxMergeRefs of them, or the scan stopped before them.
func (b *Book) ScanSheetMerged(info Sheet, fn RowFunc, merged func(ref []byte)) (complete bool, err error) {
	if info.Path == "" {
		return false, fmt.Errorf("sheet %s has no worksheet data", info.Name)
	}
	rc, err := b.Open(info.Path)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	complete = true
	err = ReadRows(rc, fn, func(refs [][]byte, cut bool) {
		for _, ref := range refs {
			merged(ref)
		}
		complete = !cut
	})
	return complete, err
}

// ReadRows scans the sheet XML of r on a goroutine (scanRows) and
// passes its rows to fn, in order; it returns once the goroutine is done.
// With merges set, the scan goes on after the rows for the <mergeCell>
// elements, and merges gets their ref attributes once every row has been
// passed (not when fn stopped the scan).
func ReadRows(r io.Reader, fn RowFunc, merges func(refs [][]byte, cut bool)) error {
	const batches = 3
	full := make(chan *rowBatch, batches)
	free := make(chan *rowBatch, batches)
	var mine [batches]*rowBatch
	for i := range mine {
		mine[i] = getBatch()
		free <- mine[i]
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		scanRows(r, full, free, stop, merges != nil)
	}()
	defer func() {
		close(stop)
		<-done // before r is closed
		for _, b := range mine {
			putBatch(b)
		}
	}()
	for {
		batch := <-full
		for _, r := range batch.rows {
			cells := batch.cells[r.from:r.to]
			for i := range cells {
				c := &cells[i]
				c.Value, c.Inline = batch.text[c.vStart:c.vEnd:c.vEnd], batch.text[c.iStart:c.iEnd:c.iEnd]
			}
			if !fn(r.row, cells) {
				return nil
			}
		}
		if batch.last {
			if batch.panic != nil {
				panic(batch.panic)
			}
			if merges != nil && batch.err == nil {
				refs := make([][]byte, len(batch.merges))
				for i, m := range batch.merges {
					refs[i] = batch.text[m[0]:m[1]:m[1]]
				}
				merges(refs, batch.mergesCut)
			}
			return batch.err
		}
		batch.rows, batch.cells, batch.text = batch.rows[:0], batch.cells[:0], batch.text[:0]
		free <- batch
	}
}

// batchPool holds row batches between scans (getBatch,
// putBatch): a workbook of thousands of small sheets would otherwise
// grow three new batches for every scan of every sheet.
var batchPool sync.Pool

func getBatch() *rowBatch {
	if b, ok := batchPool.Get().(*rowBatch); ok {
		return b
	}
	return &rowBatch{}
}

// putBatch empties b, once no scan uses it, into the pool, unless a
// row of thousands of cells grew it past a batch's usual size.
func putBatch(b *rowBatch) {
	if cap(b.cells) > 2*batchCells || cap(b.text) > 2*batchText || cap(b.rows) > 4*batchRows || cap(b.merges) > 1<<12 {
		return
	}
	clear(b.cells[:cap(b.cells)]) // (no text of a scan kept alive by the pool)
	*b = rowBatch{rows: b.rows[:0], cells: b.cells[:0], text: b.text[:0], merges: b.merges[:0]}
	batchPool.Put(b)
}

// scanRows scans the sheet XML of r into batches of rows: it takes
// empty batches from free and sends them filled to full, the last one
// marked, until stop is closed. With merges, it goes on after the rows
// and puts the ref attributes of the <mergeCell> elements in the last
// batch (damage after the rows ends the scan as its end would).
func scanRows(r io.Reader, full chan<- *rowBatch, free <-chan *rowBatch, stop <-chan struct{}, merges bool) {
	s := &rowScan{full: full, free: free, stop: stop, merges: merges, cur: -1}
	if !s.get() {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.batch.last, s.batch.panic = true, v
			s.send()
		}
	}()
	s.sc = NewScanner(r)
	defer s.sc.Release()
	for s.step() {
	}
}

// rowScan is scanRows' state while it scans one sheet.
type rowScan struct {
	sc     *Scanner
	batch  *rowBatch
	full   chan<- *rowBatch
	free   <-chan *rowBatch
	stop   <-chan struct{}
	merges bool

	row        int
	rowFrom    int  // the current row's cells are batch.cells[rowFrom:rowTo]
	rowTo      int  // (set when the row ends)
	sealed     bool // the row has ended and been passed on as it was then
	inRow      bool
	cur        int // the cell being read, in batch.cells; -1 for none, staleCell
	stale      RawCell
	field      string // "v", "f", "t" (inline string) while inside one
	fieldStart int    // where the field's text starts in batch.text
	pending    []byte // an open field's text, moving to the next batch
	lastCol    int
	afterRows  bool // past </sheetData>, gathering merged ranges
}

// get takes an empty batch; false when the scan is stopped.
func (s *rowScan) get() bool {
	select {
	case s.batch = <-s.free:
		return true
	case <-s.stop:
		return false
	}
}

// send passes the batch on; false when the scan is stopped.
func (s *rowScan) send() bool {
	select {
	case s.full <- s.batch:
		return true
	case <-s.stop:
		return false
	}
}

// finish ends the scan with err (nil: the sheet's end).
func (s *rowScan) finish(err error) {
	s.batch.last, s.batch.err = true, err
	s.send()
}

// fail ends the scan with an error at a cell of the current row (col
// 0: the row).
func (s *rowScan) fail(col int, err error) {
	s.finish(&ScanError{row: s.row, col: col, Err: err})
}

// cell returns the cell being read, for a change. The cells of a row
// that has ended are passed on as they were then: a change after that
// (a stray element after </row>, a second </row>) goes to a copy, as
// it would go to the row's cells after they were read.
func (s *rowScan) cell() *RawCell {
	if s.cur == staleCell {
		return &s.stale
	}
	if s.sealed {
		b := s.batch
		n := s.rowTo - s.rowFrom
		b.cells = append(b.cells, b.cells[s.rowFrom:s.rowTo]...)
		s.cur += len(b.cells) - n - s.rowFrom
		s.rowFrom, s.rowTo, s.sealed = len(b.cells)-n, len(b.cells), false
	}
	return &s.batch.cells[s.cur]
}

// step reads one token of the sheet; false when the scan has ended.
func (s *rowScan) step() bool {
	sc := s.sc
	err := sc.Next()
	if err == io.EOF {
		s.finish(nil)
		return false
	}
	if s.afterRows {
		return s.mergeCell(err)
	}
	if err != nil {
		if !errors.Is(err, ErrOversized) {
			err = errDamaged
		}
		if s.inRow {
			s.fail(0, err)
		} else {
			s.finish(err)
		}
		return false
	}
	switch sc.Kind {
	case TokStart:
		name := knownName(sc.Name)
		switch name {
		case "row":
			if !s.startRow() {
				return false
			}
		case "c":
			if !s.startCell() {
				return false
			}
		case "v", "f", "t":
			s.startField(name)
		}
		if sc.Self && s.end(name) {
			return false
		}
	case TokText:
		return s.text()
	case TokEnd:
		return !s.end(knownName(sc.Name))
	}
	return true
}

// mergeCell reads a token after the rows (afterRows): the ref of a
// <mergeCell> goes into the batch; false when the scan has ended.
func (s *rowScan) mergeCell(err error) bool {
	sc, b := s.sc, s.batch
	switch {
	case err != nil:
		s.finish(nil) // what follows the rows is no data
		return false
	case sc.Kind != TokStart || knownName(sc.Name) != "mergeCell":
	case len(sc.Attr("ref")) > 32:
		// Longer than XFD1048576:XFD1048576, it names no range:
		// left out, as a reader skips it.
	case len(b.merges) >= MaxMergeRefs:
		b.mergesCut = true
		s.finish(nil)
		return false
	default:
		ref := sc.Attr("ref")
		b.text = append(b.text, ref...)
		b.merges = append(b.merges, [2]int{len(b.text) - len(ref), len(b.text)})
	}
	return true
}

// startRow starts a <row>, in a new batch when this one is full; false
// when the scan has ended.
func (s *rowScan) startRow() bool {
	if b := s.batch; len(b.rows) >= batchRows || len(b.text) >= batchText || len(b.cells) >= batchCells {
		// A field left open goes on in the next batch (its
		// text would become the value of a <v> that ends in
		// this row).
		if s.field != "" {
			s.pending = append(s.pending[:0], b.text[s.fieldStart:]...)
		}
		if !s.send() || !s.get() {
			return false
		}
		if s.field != "" {
			s.batch.text, s.fieldStart = append(s.batch.text, s.pending...), 0
		}
	}
	// A cell left open in the last row is no part of this one:
	// what a stray element writes to it is never read.
	if s.cur >= 0 {
		s.cur = staleCell
	}
	s.inRow, s.sealed = true, false
	s.rowFrom, s.rowTo = len(s.batch.cells), len(s.batch.cells)
	s.lastCol = 0
	prev := s.row
	s.row++
	if r := s.sc.Attr("r"); r != nil {
		v, ok := Atoi(r)
		if !ok || v < 1 || v > excelize.TotalRows {
			s.fail(0, fmt.Errorf("the row number %q is not a row of a sheet (1 to %d); the sheet is damaged", quotePrefix(r), excelize.TotalRows))
			return false
		}
		if v <= prev {
			s.row = v
			s.fail(0, fmt.Errorf("row %d comes again after row %d (rows must be in order, each once); the sheet is damaged", v, prev))
			return false
		}
		s.row = v
	}
	return true
}

// startCell starts a <c> of the current row; false when the scan has
// ended.
func (s *rowScan) startCell() bool {
	if !s.inRow {
		return true
	}
	b := s.batch
	if len(b.cells)-s.rowFrom >= MaxRowCells {
		s.fail(0, LimitErrorf("the file is oversized or damaged: the row has more than %d cells (a row has columns A to XFD)", MaxRowCells))
		return false
	}
	b.cells = append(b.cells, RawCell{})
	s.cur = len(b.cells) - 1
	c := &b.cells[s.cur]
	if ref := s.sc.Attr("r"); ref != nil {
		col, refRow := CellRef(ref)
		switch {
		case col == 0:
			s.fail(s.lastCol+1, fmt.Errorf("the cell reference %q is not a cell of a sheet (A1 to XFD%d); the sheet is damaged", quotePrefix(ref), excelize.TotalRows))
			return false
		case refRow != s.row:
			s.fail(col, fmt.Errorf("the cell reference %q is inside row %d; the sheet is damaged", quotePrefix(ref), s.row))
			return false
		case col <= s.lastCol:
			s.fail(col, fmt.Errorf("the cell reference %q comes after column %s of the same row (a row's cells must be in column order, each once); the sheet is damaged", quotePrefix(ref), ColumnLetters(s.lastCol)))
			return false
		}
		c.Col = col
	}
	if v, ok := Atoi(s.sc.Attr("s")); ok {
		c.Style = v
	}
	c.Type = knownName(s.sc.Attr("t"))
	if c.Col == 0 {
		c.Col = s.lastCol + 1
		if c.Col > MaxRowCells {
			s.fail(0, LimitErrorf("the file is oversized or damaged: the row has a cell past the last column XFD"))
			return false
		}
	}
	s.lastCol = c.Col
	return true
}

// startField starts a <v>, <f> or <t> of the cell being read.
func (s *rowScan) startField(name string) {
	if s.cur == -1 {
		return
	}
	s.field = name
	if b := s.batch; name == "t" && s.cur >= 0 && b.cells[s.cur].hasInline && b.cells[s.cur].iEnd != len(b.text) {
		// Another element's text came between this cell's
		// runs: move the runs so far to the end, where
		// this one continues them.
		c := s.cell()
		n := c.iEnd - c.iStart
		b.text = append(b.text, b.text[c.iStart:c.iEnd]...)
		c.iStart, c.iEnd = len(b.text)-n, len(b.text)
	}
	s.fieldStart = len(s.batch.text)
}

// text keeps the text of a <v> or <t>; false when the scan has ended.
func (s *rowScan) text() bool {
	if s.field != "v" && s.field != "t" {
		return true
	}
	b := s.batch
	b.text = append(b.text, s.sc.Text...)
	if n := len(b.text) - s.fieldStart; n > MaxCellBytes || (s.field == "t" && s.cur >= 0 && b.cells[s.cur].hasInline && len(b.text)-b.cells[s.cur].iStart > MaxCellBytes) {
		s.fail(s.lastCol, cellTooLong())
		return false
	}
	return true
}

// end handles the end of an element; stop is true when the scan ends.
func (s *rowScan) end(name string) (stop bool) {
	switch name {
	case "v":
		if s.cur != -1 && s.field == "v" {
			c := s.cell()
			c.vStart, c.vEnd, c.hasV = s.fieldStart, len(s.batch.text), true
			if tooManyChars(s.batch.text[c.vStart:c.vEnd]) {
				s.fail(s.lastCol, cellTooLong())
				return true
			}
		}
		s.field = ""
	case "f":
		if s.cur != -1 {
			s.cell().formula = true
		}
		s.field = ""
	case "t":
		if s.cur != -1 && s.field == "t" {
			c := s.cell()
			if !c.hasInline {
				c.iStart, c.hasInline = s.fieldStart, true
			}
			c.iEnd = len(s.batch.text)
			if tooManyChars(s.batch.text[c.iStart:c.iEnd]) {
				s.fail(s.lastCol, cellTooLong())
				return true
			}
		}
		s.field = ""
	case "c":
		s.cur = -1
	case "row":
		return s.endRow()
	case "sheetData":
		if s.merges && !s.inRow {
			s.afterRows, s.cur, s.field = true, -1, ""
			return false
		}
		s.finish(nil)
		return true
	}
	return false
}

// endRow ends a </row>: the row's cells are passed on; true when the
// scan ends.
func (s *rowScan) endRow() (stop bool) {
	s.inRow = false
	if !s.sealed {
		s.rowTo, s.sealed = len(s.batch.cells), true
	}
	if s.row > excelize.TotalRows {
		s.fail(0, LimitErrorf("the file is oversized or damaged: the sheet has more than %d rows, the most a sheet has", excelize.TotalRows))
		return true
	}
	s.batch.rows = append(s.batch.rows, rowSpan{row: s.row, from: s.rowFrom, to: s.rowTo})
	return false
}

// ScanError is an error at a row (col 0) or cell of a sheet.
type ScanError struct {
	row, col int
	Err      error
}

func (e *ScanError) Error() string { return e.Err.Error() }
func (e *ScanError) Unwrap() error { return e.Err }

// Origin places the error in a sheet.
func (e *ScanError) Origin(file, sheet string) pipeline.Origin {
	o := pipeline.Origin{File: file, Sheet: sheet, Row: e.row}
	if e.col > 0 && e.col <= MaxRowCells && e.row > 0 {
		o.Column = e.col
		o.Cell = CellName(e.col, e.row)
	}
	return o
}

func cellTooLong() error {
	return LimitErrorf("the file is oversized or damaged: the cell holds more than %d characters, the most a cell holds", MaxCellChars)
}

// tooManyChars reports whether text has more characters than a cell
// holds.
func tooManyChars(text []byte) bool {
	return len(text) > MaxCellChars && utf8.RuneCount(text) > MaxCellChars
}

// quotePrefix returns at most the first bytes of a value found in a
// file, for a message.
func quotePrefix(b []byte) string {
	return pipeline.Excerpt(string(b))
}

// knownName returns the names and cell types the reader knows as constants
// (no allocation per cell), others as a copy.
func knownName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "c":
		return "c"
	case "v":
		return "v"
	case "f":
		return "f"
	case "t":
		return "t"
	case "row":
		return "row"
	case "is":
		return "is"
	case "sheetData":
		return "sheetData"
	case "s":
		return "s"
	case "n":
		return "n"
	case "str":
		return "str"
	case "inlineStr":
		return "inlineStr"
	case "b":
		return "b"
	case "e":
		return "e"
	case "d":
		return "d"
	}
	return string(b)
}
