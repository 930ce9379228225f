package xlsx

import (
	"errors"
	"fmt"
	"io"
	"strconv"
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
	var batch *rowBatch
	get := func() bool {
		select {
		case batch = <-free:
			return true
		case <-stop:
			return false
		}
	}
	send := func() bool {
		select {
		case full <- batch:
			return true
		case <-stop:
			return false
		}
	}
	finish := func(err error) {
		batch.last, batch.err = true, err
		send()
	}
	if !get() {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			batch.last, batch.panic = true, v
			send()
		}
	}()
	sc := NewScanner(r)
	defer sc.Release()
	var (
		row        int
		rowFrom    int  // the current row's cells are batch.cells[rowFrom:rowTo]
		rowTo      int  // (set when the row ends)
		sealed     bool // the row has ended and been passed on as it was then
		inRow      bool
		cur        = -1 // the cell being read, in batch.cells; -1 for none, staleCell
		stale      RawCell
		field      string // "v", "f", "t" (inline string) while inside one
		fieldStart int    // where the field's text starts in batch.text
		pending    []byte // an open field's text, moving to the next batch
		lastCol    int
		afterRows  bool // past </sheetData>, gathering merged ranges
	)
	// fail ends the scan with an error at a cell of the current row (col
	// 0: the row).
	fail := func(col int, err error) {
		finish(&ScanError{row: row, col: col, Err: err})
	}
	// cell returns the cell being read, for a change. The cells of a row
	// that has ended are passed on as they were then: a change after that
	// (a stray element after </row>, a second </row>) goes to a copy, as
	// it would go to the row's cells after they were read.
	cell := func() *RawCell {
		if cur == staleCell {
			return &stale
		}
		if sealed {
			n := rowTo - rowFrom
			batch.cells = append(batch.cells, batch.cells[rowFrom:rowTo]...)
			cur += len(batch.cells) - n - rowFrom
			rowFrom, rowTo, sealed = len(batch.cells)-n, len(batch.cells), false
		}
		return &batch.cells[cur]
	}
	// end handles the end of an element; stop is true when the scan ends.
	end := func(name string) (stop bool) {
		switch name {
		case "v":
			if cur != -1 && field == "v" {
				c := cell()
				c.vStart, c.vEnd, c.hasV = fieldStart, len(batch.text), true
				if tooManyChars(batch.text[c.vStart:c.vEnd]) {
					fail(lastCol, cellTooLong())
					return true
				}
			}
			field = ""
		case "f":
			if cur != -1 {
				cell().formula = true
			}
			field = ""
		case "t":
			if cur != -1 && field == "t" {
				c := cell()
				if !c.hasInline {
					c.iStart, c.hasInline = fieldStart, true
				}
				c.iEnd = len(batch.text)
				if tooManyChars(batch.text[c.iStart:c.iEnd]) {
					fail(lastCol, cellTooLong())
					return true
				}
			}
			field = ""
		case "c":
			cur = -1
		case "row":
			inRow = false
			if !sealed {
				rowTo, sealed = len(batch.cells), true
			}
			if row > excelize.TotalRows {
				fail(0, LimitErrorf("the file is oversized or damaged: the sheet has more than %d rows, the most a sheet has", excelize.TotalRows))
				return true
			}
			batch.rows = append(batch.rows, rowSpan{row: row, from: rowFrom, to: rowTo})
		case "sheetData":
			if merges && !inRow {
				afterRows, cur, field = true, -1, ""
				return false
			}
			finish(nil)
			return true
		}
		return false
	}
	for {
		err := sc.Next()
		if err == io.EOF {
			finish(nil)
			return
		}
		if afterRows {
			switch {
			case err != nil:
				finish(nil) // what follows the rows is no data
				return
			case sc.Kind != TokStart || knownName(sc.Name) != "mergeCell":
			case len(sc.Attr("ref")) > 32:
				// Longer than XFD1048576:XFD1048576, it names no range:
				// left out, as a reader skips it.
			case len(batch.merges) >= MaxMergeRefs:
				batch.mergesCut = true
				finish(nil)
				return
			default:
				ref := sc.Attr("ref")
				batch.text = append(batch.text, ref...)
				batch.merges = append(batch.merges, [2]int{len(batch.text) - len(ref), len(batch.text)})
			}
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrOversized) {
				err = errDamaged
			}
			if inRow {
				fail(0, err)
			} else {
				finish(err)
			}
			return
		}
		switch sc.Kind {
		case TokStart:
			name := knownName(sc.Name)
			switch name {
			case "row":
				if len(batch.rows) >= batchRows || len(batch.text) >= batchText || len(batch.cells) >= batchCells {
					// A field left open goes on in the next batch (its
					// text would become the value of a <v> that ends in
					// this row).
					if field != "" {
						pending = append(pending[:0], batch.text[fieldStart:]...)
					}
					if !send() || !get() {
						return
					}
					if field != "" {
						batch.text, fieldStart = append(batch.text, pending...), 0
					}
				}
				// A cell left open in the last row is no part of this one:
				// what a stray element writes to it is never read.
				if cur >= 0 {
					cur = staleCell
				}
				inRow, sealed = true, false
				rowFrom, rowTo = len(batch.cells), len(batch.cells)
				lastCol = 0
				prev := row
				row++
				if r := sc.Attr("r"); r != nil {
					v, ok := Atoi(r)
					if !ok || v < 1 || v > excelize.TotalRows {
						fail(0, fmt.Errorf("the row number %q is not a row of a sheet (1 to %d); the sheet is damaged", quotePrefix(r), excelize.TotalRows))
						return
					}
					if v <= prev {
						row = v
						fail(0, fmt.Errorf("row %d comes again after row %d (rows must be in order, each once); the sheet is damaged", v, prev))
						return
					}
					row = v
				}
			case "c":
				if !inRow {
					break
				}
				if len(batch.cells)-rowFrom >= MaxRowCells {
					fail(0, LimitErrorf("the file is oversized or damaged: the row has more than %d cells (a row has columns A to XFD)", MaxRowCells))
					return
				}
				batch.cells = append(batch.cells, RawCell{})
				cur = len(batch.cells) - 1
				c := &batch.cells[cur]
				if ref := sc.Attr("r"); ref != nil {
					col, refRow := CellRef(ref)
					switch {
					case col == 0:
						fail(lastCol+1, fmt.Errorf("the cell reference %q is not a cell of a sheet (A1 to XFD%d); the sheet is damaged", quotePrefix(ref), excelize.TotalRows))
						return
					case refRow != row:
						fail(col, fmt.Errorf("the cell reference %q is inside row %d; the sheet is damaged", quotePrefix(ref), row))
						return
					case col <= lastCol:
						fail(col, fmt.Errorf("the cell reference %q comes after column %s of the same row (a row's cells must be in column order, each once); the sheet is damaged", quotePrefix(ref), columnLetters(lastCol)))
						return
					}
					c.Col = col
				}
				if v, ok := Atoi(sc.Attr("s")); ok {
					c.Style = v
				}
				c.Type = knownName(sc.Attr("t"))
				if c.Col == 0 {
					c.Col = lastCol + 1
					if c.Col > MaxRowCells {
						fail(0, LimitErrorf("the file is oversized or damaged: the row has a cell past the last column XFD"))
						return
					}
				}
				lastCol = c.Col
			case "v", "f", "t":
				if cur != -1 {
					field = name
					if name == "t" && cur >= 0 && batch.cells[cur].hasInline && batch.cells[cur].iEnd != len(batch.text) {
						// Another element's text came between this cell's
						// runs: move the runs so far to the end, where
						// this one continues them.
						c := cell()
						n := c.iEnd - c.iStart
						batch.text = append(batch.text, batch.text[c.iStart:c.iEnd]...)
						c.iStart, c.iEnd = len(batch.text)-n, len(batch.text)
					}
					fieldStart = len(batch.text)
				}
			}
			if sc.Self && end(name) {
				return
			}
		case TokText:
			if field == "v" || field == "t" {
				batch.text = append(batch.text, sc.Text...)
				if n := len(batch.text) - fieldStart; n > MaxCellBytes || (field == "t" && cur >= 0 && batch.cells[cur].hasInline && len(batch.text)-batch.cells[cur].iStart > MaxCellBytes) {
					fail(lastCol, cellTooLong())
					return
				}
			}
		case TokEnd:
			if end(knownName(sc.Name)) {
				return
			}
		}
	}
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
		o.Cell = columnLetters(e.col) + strconv.Itoa(e.row)
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

// columnLetters returns the letters of a column number (1 is A).
func columnLetters(col int) string {
	s, err := excelize.ColumnNumberToName(col)
	if err != nil {
		return strconv.Itoa(col)
	}
	return s
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
