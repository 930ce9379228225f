package assemble

import (
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// counters validates the counter cells of a record. Cells on the record's
// own row are described by the table's shared CounterColumns, the others
// on its sheet (grid cells) by CellPlaces; only the rest get an Origin
// each.
func (a *Assembler) counters(rec pipeline.Record) (pipeline.Counters, map[string]pipeline.Origin, *pipeline.CellPlaces, pipeline.CounterColumns) {
	cs := asmCounterState{counters: pipeline.NewCounters(a.cat), row: rec.Origin.Row}
	cs.columns, cs.known = a.tableColumns(rec.Origin)
	if len(rec.Counters) == 0 {
		// (A reader that gives Counters puts no counter in Cells.)
		for name, c := range rec.Cells {
			if !strings.HasPrefix(name, pipeline.CounterPrefix) {
				continue
			}
			a.counter(&cs, &rec, name, &c, nil)
		}
	}
	if len(rec.Counters) > 0 {
		if rec.Origin.File != a.memoFile || rec.Origin.Sheet != a.memoSheet || len(a.memo) != len(rec.Counters) {
			a.memoFile, a.memoSheet = rec.Origin.File, rec.Origin.Sheet
			a.memo = make([]asmCounterMemo, len(rec.Counters))
		}
		row := cs.row
		for i := range rec.Counters {
			cc, memo := &rec.Counters[i], &a.memo[i]
			if memo.seen && asmSame(memo.name, cc.Name) {
				// counter's usual case, inline: a cell of a known
				// column, blank or plain digits, on the record's row.
				c := &cc.Cell
				if c.Kind == pipeline.CellBlank {
					continue
				}
				if o, col := &c.Origin, memo.col; c.Kind == pipeline.CellText && o.File != "" && o.Header != "" &&
					o.Row == row && row > 0 && o.Column == col.Column && col.Row == 0 && o.Cell == "" && col.Cell == "" &&
					asmSame(o.File, col.File) && asmSame(o.Sheet, col.Sheet) && asmSame(o.Header, col.Header) {
					if n, ok := pipeline.ValPlainDigits(c.Text); ok {
						cs.counters.Set(memo.index, n)
						continue
					}
				}
			} else if !strings.HasPrefix(cc.Name, pipeline.CounterPrefix) {
				continue // (a name the memo holds has the prefix)
			}
			a.counter(&cs, &rec, cc.Name, &cc.Cell, memo)
		}
	}
	if !cs.known {
		cs.columns = nil
	}
	return cs.counters, cs.cells, cs.places, cs.columns
}

// asmCounterState is counters' state while it reads one record.
type asmCounterState struct {
	counters pipeline.Counters
	cells    map[string]pipeline.Origin
	places   *pipeline.CellPlaces
	columns  pipeline.CounterColumns
	known    bool
	row      int
	digits   [20]byte
	ndigits  int // len of cs.row in decimal in digits; 0 until rowSuffix
}

// rowSuffix returns the record's row in decimal.
func (cs *asmCounterState) rowSuffix() []byte {
	if cs.ndigits == 0 {
		cs.ndigits = len(strconv.AppendInt(cs.digits[:0], int64(cs.row), 10))
	}
	return cs.digits[:cs.ndigits]
}

// asmCounterMemo remembers, for one place of Record.Counters, the catalog
// index of the name last read there and its column in the table's
// CounterColumns, so that the next row with the same name in that place
// (the reader's same string) looks up neither.
type asmCounterMemo struct {
	name  string
	col   *pipeline.Origin // a copy of the name's entry in the table's CounterColumns; nil when it has none
	index int
	seen  bool // col is set
}

// counter validates one counter cell of a record (see counters); memo,
// when not nil, is its place's asmCounterMemo.
func (a *Assembler) counter(cs *asmCounterState, rec *pipeline.Record, name string, c *pipeline.Cell, memo *asmCounterMemo) {
	var (
		prev  *pipeline.Origin
		seen  bool
		index int
	)
	switch {
	case memo != nil && memo.name == name && memo.seen:
		// A table's CounterColumns entry, once made, does not change.
		prev, seen, index = memo.col, true, memo.index
	default:
		// col stays on the stack: only the memo's copy is allocated, once
		// per place and table (a grid cell, off the record's row, has none).
		var col pipeline.Origin
		col, seen = cs.columns[name] // a name in columns is in the catalog
		prev = &col
		index = a.cat.IndexOf(name)
		if memo != nil {
			*memo = asmCounterMemo{name: name, index: index, seen: seen}
			if seen {
				memo.col = asmKeepColumn(col)
			}
		}
	}
	if !seen && index < 0 {
		o := asmOriginOf(*c, *rec, name)
		k := o.File + "|" + o.Sheet + "|" + name
		if !a.unknown[k] {
			a.unknown[k] = true
			a.Problems = append(a.Problems, pipeline.Problem{Severity: pipeline.Error, Origin: asmKeep(o), Value: name,
				Message:     fmt.Sprintf("%s is not a counter of the catalog; check the spelling", name),
				Suggestions: a.cat.Suggest(name, 3), Code: pipeline.CodeUnknownCounter})
		}
		return
	}
	var (
		n   int64
		set bool
		err error
	)
	if c.Kind == pipeline.CellText {
		// CounterValue's first case, without copying the cell (digits
		// alone need no trimming).
		if n, set = pipeline.ValPlainDigits(c.Text); !set {
			n, set = pipeline.ValPlainDigits(strings.TrimSpace(c.Text))
		}
	}
	if !set {
		n, set, err = pipeline.CounterValue(*c)
	}
	if err != nil {
		a.errorf(asmOriginOf(*c, *rec, name), asmCellText(*c), "%s: %v", name, err)
		return
	}
	if !set {
		return
	}
	cs.counters.Set(index, n)
	o := &c.Origin // asmOriginOf's, without copying the usual cell's
	if o.File == "" || o.Header == "" {
		oc := asmOriginOf(*c, *rec, name)
		o = &oc
	}
	if seen {
		if asmInColumn(o, prev, cs.row, cs.rowSuffix()) {
			return
		}
	} else if col, ok := columnOf(*o, cs.row); ok {
		if !cs.known {
			cs.columns, cs.known = pipeline.CounterColumns{}, true
			a.setTableColumns(rec.Origin, cs.columns)
		}
		cs.columns[name] = col
		if memo != nil && memo.name == name {
			memo.col, memo.seen = asmKeepColumn(col), true
		}
		return
	}
	if p, ok := asmPlaceOf(o, &rec.Origin, name); ok {
		if cs.places == nil {
			cs.places = &pipeline.CellPlaces{Cat: a.cat, At: make([]pipeline.CellPlace, a.cat.Len())}
		}
		cs.places.At[index] = p
		return
	}
	if cs.cells == nil {
		cs.cells = make(map[string]pipeline.Origin)
	}
	cs.cells[name] = asmKeep(*o)
}

// asmKeepColumn returns a copy of col on the heap, for an asmCounterMemo:
// taking the address of counter's own variable would move it to the heap
// for every cell, memo or not.
func asmKeepColumn(col pipeline.Origin) *pipeline.Origin { return &col }

// asmPlaceOf returns o, the origin of counter name, as a cellPlace when
// that and the name say all of it: a cell headed by the name (as
// asmOriginOf heads it) on the sheet of the record's origin (a grid cell),
// whose Cell, when set, is its row and column's.
func asmPlaceOf(o, rec *pipeline.Origin, name string) (pipeline.CellPlace, bool) {
	if o.Header != name || o.Sheet == "" || o.Row <= 0 || o.Column <= 0 || o.Row > math.MaxInt32 || o.Column > math.MaxInt32 ||
		o.File != rec.File || o.Sheet != rec.Sheet {
		return pipeline.CellPlace{}, false
	}
	if o.Cell != "" {
		var buf [24]byte
		if string(strconv.AppendInt(pipeline.AppendColumnLetters(buf[:0], o.Column), int64(o.Row), 10)) != o.Cell {
			return pipeline.CellPlace{}, false
		}
	}
	return pipeline.CellPlace{Row: int32(o.Row), Column: int32(o.Column)}, true
}

// tableColumns returns the CounterColumns of the table (file and sheet)
// of a record, and whether the table has them yet.
func (a *Assembler) tableColumns(o pipeline.Origin) (pipeline.CounterColumns, bool) {
	if a.lastColumns == nil || o.File != a.lastFile || o.Sheet != a.lastSheet {
		columns, ok := a.columns[o.File+"|"+o.Sheet]
		if !ok {
			return nil, false
		}
		a.lastFile, a.lastSheet, a.lastColumns = o.File, o.Sheet, columns
	}
	return a.lastColumns, true
}

func (a *Assembler) setTableColumns(o pipeline.Origin, columns pipeline.CounterColumns) {
	a.columns[o.File+"|"+o.Sheet] = columns
	a.lastFile, a.lastSheet, a.lastColumns = o.File, o.Sheet, columns
}

// asmInColumn reports whether columnOf(o, row) gives col, without building
// the column's Origin: rowSuffix is row in decimal.
func asmInColumn(o, col *pipeline.Origin, row int, rowSuffix []byte) bool {
	if row <= 0 || o.Row != row || o.Column != col.Column || col.Row != 0 || !asmSame(o.File, col.File) || !asmSame(o.Sheet, col.Sheet) || !asmSame(o.Header, col.Header) {
		return false
	}
	if o.Cell == "" {
		// A cell given by its sheet, row and column (see Origin), in
		// the column col describes (Column compared above).
		return col.Cell == "" || o.Sheet != ""
	}
	if col.Cell == "" {
		return false
	}
	// col.Cell holds letters only (columnOf made it): o.Cell must be
	// those letters and the row.
	return len(o.Cell) == len(col.Cell)+len(rowSuffix) && o.Cell[:len(col.Cell)] == col.Cell && o.Cell[len(col.Cell):] == string(rowSuffix)
}

// asmSame reports whether a == b, at once when they are the same string
// (a reader's header names and file name, shared by the cells of a table).
func asmSame(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b
}

// columnOf returns o without its row when o is a cell on the given row
// (a flat table's cell), for CounterColumns.
func columnOf(o pipeline.Origin, row int) (pipeline.Origin, bool) {
	if row <= 0 || o.Row != row {
		return pipeline.Origin{}, false
	}
	if o.Cell != "" {
		var digits [20]byte
		suffix := strconv.AppendInt(digits[:0], int64(row), 10)
		n := len(o.Cell) - len(suffix)
		if n <= 0 || o.Cell[n:] != string(suffix) || strings.ContainsAny(o.Cell[:n], "0123456789") {
			return pipeline.Origin{}, false
		}
		o.Cell = o.Cell[:n]
	}
	o.Row = 0
	return o, true
}
