package grid

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// gridStreamSheet is one worksheet read by a single streaming scan (the
// flat reader's scanner): the raw text of its first MaxScanRows rows
// for the layout, and every cell typed once, kept sparse (a row holds the
// cells it has, by column).
type gridStreamSheet struct {
	text  sheetText
	cells [][]gridCellAt // by row - 1, sorted by column
	// merged are the cells of the sheet's merged ranges other than each
	// range's top-left cell, as mergedAway gives them, read in the same
	// pass (mergedAway reads them again when mergedDone is false: more
	// ranges than one pass gathers); mergedErr is mergedAway's error.
	merged     map[[2]int][2]int
	mergedErr  error
	mergedDone bool
	// slots counts the text slots of the dense rows of text; past
	// MaxTextSlots the scan stops and tooWide is set (rows of one
	// cell in column XFD would otherwise take 256 KiB each).
	slots   int
	tooWide bool
	// kept counts the cells kept (typed, in the first MaxScanRows
	// rows); past MaxSheetCells the scan stops and tooMany is set.
	kept    int
	tooMany bool
}

// gridCellArena holds the typed cells of the grid sheet being read, in
// chunks reused from sheet to sheet (reset), so that reading thousands of
// plan sheets does not allocate their cells anew for each.
type gridCellArena struct {
	chunks [][]gridCellAt
	at     int // the chunk cells are taken from
	// texts are the chunks the rows of text are taken from (takeText),
	// textAt the one taken from.
	texts  [][]string
	textAt int
}

// takeText returns an empty slice with room for n texts, from the
// arena when they fit in a chunk (a row of a plan sheet spans a few dozen
// columns), so that a row's text does not grow cell by cell.
func (a *gridCellArena) takeText(n int) []string {
	if a == nil || n > gridArenaChunk/8 {
		return nil // grown as the cells come (and counted in MaxTextSlots)
	}
	for {
		if a.textAt == len(a.texts) {
			a.texts = append(a.texts, make([]string, 0, gridArenaChunk))
		}
		c := a.texts[a.textAt]
		if len(c)+n <= cap(c) {
			a.texts[a.textAt] = c[:len(c)+n]
			return c[len(c) : len(c) : len(c)+n]
		}
		a.textAt++
	}
}

const gridArenaChunk = 4096

// take returns an empty slice with room for n cells, from the arena when
// they fit in a chunk.
func (a *gridCellArena) take(n int) []gridCellAt {
	if a == nil || n > gridArenaChunk {
		return make([]gridCellAt, 0, n)
	}
	for {
		if a.at == len(a.chunks) {
			a.chunks = append(a.chunks, make([]gridCellAt, 0, gridArenaChunk))
		}
		c := a.chunks[a.at]
		if len(c)+n <= cap(c) {
			a.chunks[a.at] = c[:len(c)+n]
			return c[len(c) : len(c) : len(c)+n]
		}
		a.at++
	}
}

// reset makes the arena's cells free for the next sheet; the sheet read
// before is not used after.
func (a *gridCellArena) reset() {
	for i := range a.chunks {
		// Cells are only ever taken below a chunk's length (take), and the
		// rest of it was cleared before: clearing the length lets no text
		// live on, without clearing the whole chunk for every sheet.
		clear(a.chunks[i])
		a.chunks[i] = a.chunks[i][:0]
	}
	a.at = 0
	for i := range a.texts {
		clear(a.texts[i])
		a.texts[i] = a.texts[i][:0]
	}
	a.textAt = 0
}

// MaxSheetCells bounds the cells one sheet read as a grid plan sheet
// may keep in memory (a sheet is held whole until the reader knows whether
// it is a grid; about 300 bytes a cell): a grid plan sheet holds a few
// thousand cells, so this admits anything a person or an export makes and
// keeps a hostile sheet of a million cells under the memory bound.
const MaxSheetCells = 250_000

// MaxTextSlots bounds the dense text rows a grid sheet's layout is
// read into (16 bytes a slot): a grid plan sheet spans a few dozen columns
// and rows, about 5,000 slots.
const MaxTextSlots = 1 << 22

type gridCellAt struct {
	col  int
	cell pipeline.Cell // without its origin
}

// scanGridSheet reads a sheet in one pass: the first MaxScanRows
// rows are kept (within MaxSheetCells and MaxTextSlots), the
// others only checked by the scan.
func scanGridSheet(b *xlsx.Book, info xlsx.Sheet, arena *gridCellArena) (*gridStreamSheet, error) {
	s := &gridStreamSheet{merged: map[[2]int][2]int{}}
	complete, err := b.ScanSheetMerged(info, func(row int, raw []xlsx.RawCell) bool {
		if row < 1 || row > MaxScanRows {
			return true // counted and checked by the scan, not read
		}
		for len(s.text) < row {
			s.text = append(s.text, nil)
			s.cells = append(s.cells, nil)
		}
		line, typed := s.text[row-1], s.cells[row-1]
		if typed == nil {
			typed = arena.take(len(raw))
		}
		if line == nil && len(raw) > 0 {
			// Room up to the row's last cell (cells come in column
			// order), so that the appends below do not reallocate.
			if last := raw[len(raw)-1].Col; last >= 1 && last <= excelize.MaxColumns {
				line = arena.takeText(last)
			}
		}
		for i := range raw {
			rc := &raw[i]
			if rc.Col < 1 || rc.Col > excelize.MaxColumns {
				continue
			}
			c := b.Cell(rc, pipeline.Origin{})
			text := c.Text
			switch c.Kind {
			case pipeline.CellNumber, pipeline.CellDate, pipeline.CellBool:
				// The layout reads values as excelize's raw cell values.
				text = string(bytes.TrimSpace(rc.Value))
			}
			if text != "" {
				if grow := rc.Col - len(line); grow > 0 {
					if s.slots += grow; s.slots > MaxTextSlots {
						s.tooWide = true
						return false
					}
					line = append(line, make([]string, grow)...)
				}
				line[rc.Col-1] = text
			}
			if c.Kind != pipeline.CellBlank {
				if s.kept++; s.kept > MaxSheetCells {
					s.tooMany = true
					return false
				}
				typed = append(typed, gridCellAt{rc.Col, c})
			}
		}
		sort.SliceStable(typed, func(i, j int) bool { return typed[i].col < typed[j].col })
		s.text[row-1], s.cells[row-1] = line, typed
		return true
	}, func(ref []byte) {
		if s.mergedErr == nil {
			s.mergedErr = addMergedRef(s.merged, ref)
		}
	})
	s.mergedDone = complete && err == nil && !s.tooMany && !s.tooWide
	return s, err
}

// addMergedRef adds the cells of the merged range ref (B4:F4) to out, as
// mergedAway does for each <mergeCell>: a reference that names no range,
// or a range over a whole sheet region, is left out.
func addMergedRef(out map[[2]int][2]int, ref []byte) error {
	from, to, ok := strings.Cut(string(ref), ":")
	if !ok {
		return nil
	}
	c0, r0, err1 := excelize.CellNameToCoordinates(from)
	c1, r1, err2 := excelize.CellNameToCoordinates(to)
	if err1 != nil || err2 != nil {
		return nil
	}
	if c0 > c1 {
		c0, c1 = c1, c0
	}
	if r0 > r1 {
		r0, r1 = r1, r0
	}
	r1 = min(r1, MaxScanRows)
	if (r1-r0+1)*(c1-c0+1) > 1<<16 {
		return nil // a merge over a whole sheet region is no layout to read
	}
	return addMergedAway(out, r0, c0, r1, c1)
}

// Signs of a grid plan sheet in one cell's text (planSheetSign).
const (
	signLabel  = 1 << iota // a grid label (parseGridLabel)
	signHeader             // a grid header cell: a race, gender or both
	signRace               // a race or a race and gender (countRaceCells)
	signMeta               // a plan-detail label (templates.MetaFieldFor)
)

// planSheetSign scans a sheet too large to be read as a grid plan sheet,
// keeping nothing but a few counters, for what would make the grid reader
// read it as one (isGridSheet, planDetailLabels) in its first
// MaxScanRows rows: a grid label with a header cell at or right of it
// in one of the four rows below, two plan-detail labels and a row naming
// two races, or three plan-detail labels in one column. It returns the
// cell where the sign was found ("" when the sheet has none: it is no
// plan sheet, as the Sector targets sheet of a large export is not). The
// scan stops after those rows, so damage further down such a sheet,
// which nothing reads, is not looked for.
func planSheetSign(b *xlsx.Book, info xlsx.Sheet, m *templates.Matcher) (string, error) {
	type label struct{ row, col int } // the leftmost label of a row
	var (
		pending   []label // labels of the last four rows
		meta      int
		firstMeta [2]int
		raceRow   bool
		metaByCol = map[int]int{}
		memo      = map[string]uint8{}
		at        string
	)
	signs := func(v string) uint8 { return cellSigns(v, m, memo) }
	ref := func(r, c int) string { s, _ := excelize.CoordinatesToCellName(c, r); return s }
	err := b.ScanSheet(info, func(row int, raw []xlsx.RawCell) bool {
		if row > MaxScanRows {
			// Rows come in order (the scan refuses others), and the grid
			// reader looks no further: the rest of a sheet too large to
			// be a plan sheet is neither read nor unpacked.
			return false
		}
		if row < 1 {
			return true
		}
		lab, header, races := label{}, 0, 0
		for i := range raw {
			rc := &raw[i]
			if rc.Col < 1 || rc.Col > excelize.MaxColumns {
				continue
			}
			c := b.Cell(rc, pipeline.Origin{})
			switch c.Kind {
			case pipeline.CellBlank, pipeline.CellNumber, pipeline.CellDate, pipeline.CellBool:
				continue // no letters: no label, header or detail
			}
			v := strings.TrimSpace(c.Text)
			if v == "" {
				continue
			}
			f := signs(v)
			if f&signHeader != 0 {
				header = max(header, rc.Col)
			}
			if f&signRace != 0 {
				races++
			}
			if f&signMeta != 0 {
				if meta++; meta == 1 {
					firstMeta = [2]int{row, rc.Col}
				}
				if metaByCol[rc.Col]++; metaByCol[rc.Col] == 3 {
					at = ref(firstMeta[0], firstMeta[1])
					return false
				}
			}
			if f&signLabel != 0 && (lab.row == 0 || rc.Col < lab.col) {
				lab = label{row, rc.Col}
			}
		}
		kept := pending[:0]
		for _, p := range pending {
			if row-p.row > 4 {
				continue
			}
			if header >= p.col {
				at = ref(p.row, p.col)
				return false
			}
			kept = append(kept, p)
		}
		pending = kept
		if lab.row != 0 {
			pending = append(pending, lab)
		}
		raceRow = raceRow || races >= 2
		if meta >= 2 && raceRow {
			at = ref(firstMeta[0], firstMeta[1])
			return false
		}
		return true
	})
	return at, err
}

// cellSigns returns the signs of a grid plan sheet in one cell's text,
// remembered in memo (bounded) for the texts that repeat.
func cellSigns(v string, m *templates.Matcher, memo map[string]uint8) uint8 {
	if f, ok := memo[v]; ok {
		return f
	}
	var f uint8
	if _, ok := parseGridLabel(v); ok {
		f |= signLabel
	}
	if k := classifyHeader(m, v).kind; k >= hdrRace && k <= hdrRaceGender {
		f |= signHeader
	}
	if _, ok := m.Race(v); ok {
		f |= signRace
	} else if _, _, ok := m.RaceGender(v); ok {
		f |= signRace
	}
	if _, ok := templates.MetaFieldFor(v); ok {
		f |= signMeta
	}
	if len(v) <= 120 { // a label is no longer (parseGridLabel)
		if len(memo) >= 1<<14 {
			clear(memo) // a sheet of many distinct texts: bounded all the same
		}
		memo[v] = f
	}
	return f
}

// cell returns the typed cell at (r, c), with its origin but neither file
// nor cell reference (gridReader.cellAt).
func (s *gridStreamSheet) cell(sheet string, r, c int) pipeline.Cell {
	o := pipeline.Origin{Sheet: sheet, Row: r, Column: c}
	if r < 1 || r > len(s.cells) {
		return pipeline.Cell{Origin: o}
	}
	row := s.cells[r-1]
	lo, hi := 0, len(row) // sort.Search without its closure call per step
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); row[m].col < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(row) || row[lo].col != c {
		return pipeline.Cell{Origin: o}
	}
	cell := row[lo].cell
	cell.Origin = o
	return cell
}

// mergedAway returns the cells of the sheet's merged ranges other than
// each range's top-left cell (up to the rows a grid sheet is scanned
// for): a second, light scan of the sheet for its
// <mergeCell> elements, which follow the cells.
func mergedAway(b *xlsx.Book, info xlsx.Sheet) (map[[2]int][2]int, error) {
	out := map[[2]int][2]int{}
	if info.Path == "" {
		return out, nil
	}
	rc, err := b.Open(info.Path)
	if err != nil {
		return out, nil
	}
	defer rc.Close()
	sc := xlsx.NewScanner(rc)
	defer sc.Release()
	for {
		if err := sc.Next(); err != nil {
			return out, nil // io.EOF, or damage the row scan reports
		}
		if sc.Kind != xlsx.TokStart || string(sc.Name) != "mergeCell" {
			continue
		}
		if err := addMergedRef(out, sc.Attr("ref")); err != nil {
			return nil, err
		}
	}
}

// ReadWorkbook reads the grid plan sheets of a workbook that holds no
// flat table: each sheet is scanned once with the bounded streaming
// scanner (a malformed cell reference or an oversized row is an error at
// the cell; hidden sheets are checked too, never read), the visible grid
// sheets are read from that scan (their merged ranges in a second, light
// scan) and let go, so the cost is linear in the sheets. The scan of a
// sheet runs while the sheet before it is read into records
// (scanGridSheets), so memory holds at most two sheets at a time; records
// and problems come in sheet order all the same.
//
// The workbook as a whole is bounded by Limits.MaxUncompressed, as every
// workbook is (xlsx.Open); each sheet read as a grid plan sheet by
// Limits.MaxGridSheet and the bounds of gridStreamSheet. A larger sheet is
// scanned for what would make it a plan sheet in its first
// MaxScanRows rows (planSheetSign), keeping nothing: one that has it
// is refused as oversized, one that has not (the Sector targets sheet of
// a large export) is no plan sheet and is passed over like any other,
// unread past those rows.
//
// words, when not nil, is the mapping file whose levels, races and genders
// the grids' labels and headers may use (mapping.File.Matcher).
func ReadWorkbook(file string, lim xlsx.Limits, book *xlsx.Book, cat *pipeline.Catalog, words *mapping.File, emit func(pipeline.Record), ps *pipeline.Problems) (found int, ok bool) {
	m := words.Matcher(nil)
	gm := words.Matcher(cat) // the grids' vocabulary, for cat
	memo := &gridMemo{}      // the sheets' labels, for gm
	scans, stop := scanGridSheets(book, lim, m)
	defer stop()
	for s := range scans {
		if s.panic != nil {
			panic(s.panic) // a bug in the scan, raised where the caller recovers it
		}
		n, ok := readScannedSheet(file, lim, book, s, m, gm, cat, memo, emit, ps)
		found += n
		if !ok {
			return found, false
		}
	}
	return found, true
}

// gridScan is one sheet of a workbook as scanGridSheets leaves it for
// readScannedSheet: a grid sheet's scan, or the sign of a plan sheet too
// large to read, and the scan's error.
type gridScan struct {
	info  xlsx.Sheet
	sheet *gridStreamSheet // nil for a hidden or large sheet
	sign  string           // where a sheet too large to read shows it is a plan sheet
	size  int64
	err   error
	panic any // the scan's panic (a bug), raised again by the reader
}

// scanGridSheets scans the sheets of book, in order, on a goroutine of
// its own, each as ReadWorkbook reads it, handing each scan over when the
// reader takes it: the next sheet is scanned while the reader reads the
// one before, and no further (two sheets at most in memory; the cells
// alternate between two arenas). Only the scan touches book's cells
// (Book.Cell, its shared strings and texts); the reader may open parts.
// A panic of the scan is handed over too, for the reader to raise (a
// reader's panic is an internal error of the file, not a crash). stop
// ends the scan and waits for it, so that book is free again.
func scanGridSheets(book *xlsx.Book, lim xlsx.Limits, m *templates.Matcher) (scans <-chan gridScan, stop func()) {
	out := make(chan gridScan) // unbuffered: see the arenas below
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		defer func() {
			if v := recover(); v != nil {
				select {
				case out <- gridScan{panic: v}:
				case <-quit:
				}
			}
		}()
		// Sheet i's cells are in arenas[i%2]: when sheet i+2 is scanned,
		// sheet i+1 was handed over, so the reader is done with sheet i.
		var arenas [2]gridCellArena
		i := 0
		for _, info := range book.Sheets {
			if info.Path == "" {
				continue
			}
			arena := &arenas[i%2]
			i++
			arena.reset()
			s := gridScan{info: info}
			var large bool
			s.size, large = book.SheetSize(info, lim)
			switch {
			case info.Hidden:
				// Checked only, and up to the whole workbook's bound: the
				// scan ends as soon as the reader has stopped (stop), so
				// that an error before a large hidden sheet does not wait
				// for its scan.
				s.err = book.ScanSheet(info, func(int, []xlsx.RawCell) bool {
					select {
					case <-quit:
						return false // the scan is not handed over (below)
					default:
						return true
					}
				})
			case large:
				s.sign, s.err = planSheetSign(book, info, m)
			default:
				s.sheet, s.err = scanGridSheet(book, info, arena)
			}
			select {
			case out <- s:
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// readScannedSheet reads one scanned sheet (ReadWorkbook): its problems
// into ps, its records to emit. found is 1 for a plan sheet; ok is false
// when the workbook cannot be read further.
func readScannedSheet(file string, lim xlsx.Limits, book *xlsx.Book, s gridScan, m, gm *templates.Matcher, cat *pipeline.Catalog, memo *gridMemo, emit func(pipeline.Record), ps *pipeline.Problems) (found int, ok bool) {
	info, sheet := s.info, s.sheet
	book.NoteScanError(info, s.err)
	sheetOrigin := pipeline.Origin{File: file, Sheet: info.Name}
	if s.sign != "" && book.ScanErr == nil {
		sheetOrigin.Cell = s.sign
		ps.Errorf(sheetOrigin, "", "%v", xlsx.LimitErrorf("the file is oversized or damaged: this sheet is a grid plan sheet (it has a grid label or a plan's details, from this cell on), and it unpacks to %s, more than the %s a grid plan sheet may (a plan sheet of eepipe's export takes about 60 KiB)", xlsx.SizeText(s.size), xlsx.SizeText(lim.MaxGridSheetBytes())))
		return 0, false
	}
	if sheet != nil && sheet.tooMany {
		ps.Errorf(sheetOrigin, "", "%v", xlsx.LimitErrorf("the file is oversized or damaged: it has no flat table (no target_type header in the first %d rows of a sheet), and this sheet, read as a grid plan sheet (which is read whole), has more than %d cells; a grid plan sheet holds a few thousand", templates.FlatHeaderRows, MaxSheetCells))
		return 0, false
	}
	if sheet != nil && sheet.tooWide {
		ps.Errorf(sheetOrigin, "", "%v", xlsx.LimitErrorf("the file is oversized or damaged: the sheet's cells spread over more than %d cells of rows and columns (a grid plan sheet spans a few dozen of each)", MaxTextSlots))
		return 0, false
	}
	if book.ScanErr != nil {
		o := book.ScanErrAt
		o.File = file
		ps.Errorf(o, "", "the workbook cannot be read: %v", book.ScanErr)
		return 0, false
	}
	if sheet == nil || s.err != nil || sheet.text.hasFlatHeader() {
		return 0, true // a sheet the scan cannot walk is not a grid sheet
	}
	if !isGridSheet(sheet.text, m) {
		if at, why := gridLikeCause(sheet.text, m); why != "" {
			// A grid the reader cannot read is an error, never one
			// warning and no plan.
			ps.Errorf(pipeline.Origin{File: file, Sheet: info.Name, Cell: at}, "", "this sheet looks like a grid of targets, but no plan is read from it: %s", why)
			return 1, true
		}
		// A plan sheet without a grid (an export of a plan that has
		// no targets) is named, never skipped in silence.
		if labels := planDetailLabels(sheet.text); labels != nil {
			ps.Warnf(pipeline.Origin{File: file, Sheet: info.Name, Cell: labels[0]}, "",
				"this sheet has a plan's details but no grid of targets (a label such as %q above a header of races and genders), so it is not read: nothing is compared or applied for it",
				templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
			return 1, true
		}
		return 0, true
	}
	readGridStreamSheet(file, book, info, sheet, cat, gm, memo, emit, ps)
	return 1, true
}

// readGridStreamSheet reads a scanned grid sheet into records (emit) and
// problems (ps).
func readGridStreamSheet(file string, book *xlsx.Book, info xlsx.Sheet, sheet *gridStreamSheet, cat *pipeline.Catalog, m *templates.Matcher, memo *gridMemo, emit func(pipeline.Record), ps *pipeline.Problems) {
	name := info.Name
	src := gridSheetSource{
		text:  func() (sheetText, error) { return sheet.text, nil },
		cells: func(r, c int) pipeline.Cell { return sheet.cell(name, r, c) },
		merged: func() (map[[2]int][2]int, error) {
			if sheet.mergedDone {
				return sheet.merged, sheet.mergedErr
			}
			return mergedAway(book, info)
		},
		hidden: func(sheetText) map[int]bool { return book.HiddenColumns(info) },
	}
	recs, gps := readGridSheetFrom(src, file, name, cat, m, memo)
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
