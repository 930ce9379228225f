package reports

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/xuri/excelize/v2"
)

// rewriteSheet streams one worksheet into the copy.
func (c *streamedCopy) rewriteSheet(create func(string) (io.Writer, error), name string, j *sheetJob) error {
	rc, err := c.book.Open(name)
	if err != nil {
		return fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, j.Info.Name, err)
	}
	defer rc.Close()
	zw, err := create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(zw, 64<<10)
	if err := c.streamSheet(w, rc, j); err != nil {
		if errors.Is(err, errLeftToExcelize) {
			return err
		}
		return fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, j.Info.Name, err)
	}
	return w.Flush()
}

// colStyle is the style of a range of columns.
type colStyle struct{ min, max, style int }

func (c *streamedCopy) streamSheet(w *bufio.Writer, r io.Reader, j *sheetJob) error {
	marked := len(j.Marks) > 0
	// A marked sheet prints like eepipe's plan sheets (landscape, one
	// page wide), as templates.SetPrintLayout sets it; a hidden one is
	// left as it is.
	setup := marked && !j.Info.Hidden
	s := sheetStream{
		c: c, w: w, sc: xlsx.NewScanner(r), j: j, marked: marked, setup: setup,
		printDone:   !setup,
		drawingDone: !marked,
		skipDepth:   -1,
		rPrefix:     "r",
	}
	sc := s.sc
	w.WriteString(xmlDecl)
	for {
		err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		raw := sc.Raw()
		switch sc.Kind {
		case xlsx.TokStart:
			if err := s.start(raw); err != nil {
				return err
			}
		case xlsx.TokEnd:
			if s.depth == 0 {
				return xlsx.ErrXML // an end tag with no element open
			}
			s.end(raw)
		default:
			if s.skipDepth >= 0 || !s.rootDecl {
				continue // text before the root (a byte order mark) would follow the declaration
			}
			w.Write(raw)
		}
	}
	if !s.rootDecl || s.depth != 0 {
		return xlsx.ErrXML
	}
	if s.mi < len(j.Marks) {
		return leftToExcelize() // a sheet without sheetData: left to excelize
	}
	return nil
}

// sheetStream is the state of streamSheet's rewriting of one sheet.
type sheetStream struct {
	c      *streamedCopy
	w      *bufio.Writer
	sc     *xlsx.Scanner
	j      *sheetJob
	marked bool
	setup  bool

	depth         int
	parents       [8]string // element names by depth, for the first levels
	sawSheetPr    bool
	inSheetPr     bool
	sawFitPr      bool
	printDone     bool
	drawingDone   bool
	keptSetup     []byte
	skipDepth     int // inside an element being dropped, from this depth (-1: none)
	cols          []colStyle
	row, col      int // the current row and cell
	rowStyle      int
	mi            int // next mark
	rPrefix       string
	rootDecl      bool
	sheetDataOpen bool
}

// newCell writes a mark whose cell does not exist.
func (s *sheetStream) newCell(m *cellMark, base int) {
	m.Style = s.c.Styles.markStyle(base, m.Note.Fill)
	fmt.Fprintf(s.w, `<c r="%s" s="%d"/>`, m.Ref, m.Style)
}

// flushRows writes the marked rows before row n (absent from the sheet).
func (s *sheetStream) flushRows(n int) {
	j := s.j
	for s.mi < len(j.Marks) && j.Marks[s.mi].Row < n {
		r := j.Marks[s.mi].Row
		fmt.Fprintf(s.w, `<row r="%d">`, r)
		for s.mi < len(j.Marks) && j.Marks[s.mi].Row == r {
			s.newCell(&j.Marks[s.mi], colStyleAt(s.cols, j.Marks[s.mi].Col))
			s.mi++
		}
		s.w.WriteString("</row>")
	}
}

// flushCells writes the marks of the current row before column n.
func (s *sheetStream) flushCells(n int) {
	j := s.j
	for s.mi < len(j.Marks) && j.Marks[s.mi].Row == s.row && j.Marks[s.mi].Col < n {
		base := s.rowStyle
		if base == 0 {
			base = colStyleAt(s.cols, j.Marks[s.mi].Col)
		}
		s.newCell(&j.Marks[s.mi], base)
		s.mi++
	}
}

// printBlock writes the print settings (once).
func (s *sheetStream) printBlock() {
	if s.printDone {
		return
	}
	s.printDone = true
	s.w.WriteString(pageMargins)
	if s.keptSetup != nil {
		s.w.Write(s.keptSetup)
	} else {
		s.w.WriteString(pageSetup)
	}
	s.w.WriteString(headerFoot)
}

// drawing writes the legacyDrawing of the notes (once).
func (s *sheetStream) drawing() {
	if s.drawingDone {
		return
	}
	s.drawingDone = true
	s.j.newVMLRID = newRID(s.j.rels, "rIdEepipeVml")
	fmt.Fprintf(s.w, `<legacyDrawing %s:id="%s"/>`, s.rPrefix, s.j.newVMLRID)
}

// start rewrites a start tag, by its depth: the root, a child of the
// root, a sheetPr, sheetView, col or row element, or a cell.
func (s *sheetStream) start(raw []byte) error {
	sc := s.sc
	name := string(sc.Name)
	d := s.depth + 1
	if !sc.Self {
		s.depth++
		if s.depth < len(s.parents) {
			s.parents[s.depth] = name
		}
	}
	if s.skipDepth >= 0 {
		return nil
	}
	var err error
	write := true
	switch d {
	case 1:
		if name != "worksheet" || !bytes.HasPrefix(raw, []byte("<worksheet")) || sc.Self {
			return leftToExcelize()
		}
		s.rootDecl = true
		if s.marked {
			if v, ok := getAttr(raw, "xmlns:r"); !ok {
				raw = setAttr(raw, "xmlns:r", nsRel)
			} else if v != nsRel {
				s.rPrefix = "eepipe_r"
				raw = setAttr(raw, "xmlns:eepipe_r", nsRel)
			}
		}
	case 2:
		raw, write, err = s.sheetChild(name, raw)
	case 3:
		raw, write, err = s.rowOrSetting(name, raw)
	case 4:
		raw, err = s.cell(name, raw)
	}
	if err != nil || !write {
		return err
	}
	s.w.Write(raw)
	return nil
}

// sheetChild rewrites the start tag of a child of the worksheet: the
// print settings and the drawing placed in the children's order, and
// sheetData opened. write false: the tag is dropped or already written.
func (s *sheetStream) sheetChild(name string, raw []byte) (_ []byte, write bool, _ error) {
	sc, j, w, setup := s.sc, s.j, s.w, s.setup
	if bytes.HasPrefix(raw, []byte("<")) && bytes.IndexByte(raw[:min(len(raw), len(name)+2)], ':') >= 0 && name != "AlternateContent" {
		return nil, false, leftToExcelize() // a prefixed child: the copy's own would be in another namespace
	}
	rank := sheetRank[name]
	if setup && name != "sheetPr" && !s.sawSheetPr {
		s.sawSheetPr = true
		w.WriteString(`<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>`)
	}
	if rank > sheetRank["headerFooter"] {
		s.printBlock()
	}
	if rank > sheetRank["legacyDrawing"] && j.legacyRID == "" {
		s.drawing()
	}
	switch name {
	case "sheetPr":
		s.sawSheetPr = true
		if setup {
			if sc.Self {
				w.Write(openTag(raw))
				w.WriteString(`<pageSetUpPr fitToPage="1"/></sheetPr>`)
				return raw, false, nil
			}
			s.inSheetPr = true
		}
	case "pageMargins", "headerFooter":
		if setup {
			if !sc.Self {
				s.skipDepth = s.depth
			}
			return raw, false, nil
		}
	case "pageSetup":
		if setup {
			t := openTag(raw)
			for _, kv := range [][2]string{{"paperSize", "9"}, {"orientation", "landscape"}, {"fitToWidth", "1"}, {"fitToHeight", "0"}} {
				t = setAttr(t, kv[0], kv[1])
			}
			s.keptSetup = slices.Concat(t[:len(t)-1], []byte("/>"))
			if !sc.Self {
				s.skipDepth = s.depth
			}
			return raw, false, nil
		}
	case "dimension":
		if s.marked {
			raw = widenDimension(raw, j.Marks)
		}
	case "legacyDrawing":
		if id, ok := sc.AttrLocal("id"); ok {
			j.legacyRID = id
			s.drawingDone = true
		}
	case "sheetData":
		if sc.Self {
			w.Write(openTag(raw))
			s.flushRows(1 << 21)
			w.WriteString("</sheetData>")
			return raw, false, nil
		}
		s.sheetDataOpen = true
	}
	return raw, true, nil
}

// rowOrSetting rewrites a start tag at the third level: sheetPr's
// pageSetUpPr, a sheetView, a col (its style noted) or a row (the marked
// rows before it written). write false: the tag is already written.
func (s *sheetStream) rowOrSetting(name string, raw []byte) (_ []byte, write bool, _ error) {
	sc, j := s.sc, s.j
	switch {
	case s.inSheetPr && name == "pageSetUpPr":
		s.sawFitPr = true
		raw = setAttr(raw, "fitToPage", "1")
	case s.parents[2] == "sheetViews" && name == "sheetView":
		raw = delAttr(raw, "tabSelected")
	case s.parents[2] == "cols" && name == "col":
		lo, _ := strconv.Atoi(string(sc.Attr("min")))
		hi, _ := strconv.Atoi(string(sc.Attr("max")))
		st, _ := strconv.Atoi(string(sc.Attr("style")))
		if st > 0 && lo > 0 && hi >= lo {
			s.cols = append(s.cols, colStyle{lo, hi, st})
		}
	case s.sheetDataOpen && name == "row":
		n := s.row + 1
		if v := sc.Attr("r"); v != nil {
			var ok bool
			if n, ok = xlsx.Atoi(v); !ok || n < 1 || n > 1<<20 {
				return nil, false, fmt.Errorf("row %q: not a row number", v)
			}
		}
		if n <= s.row && s.marked {
			// Rows out of order or repeated (the flat reader
			// refuses them, excelize's grid reader does not):
			// left to excelize, which sorts them.
			return nil, false, leftToExcelize()
		}
		s.flushRows(n)
		s.row, s.col, s.rowStyle = n, 0, 0
		if cf := string(sc.Attr("customFormat")); cf == "1" || cf == "true" {
			s.rowStyle, _ = strconv.Atoi(string(sc.Attr("s")))
		}
		has := s.mi < len(j.Marks) && j.Marks[s.mi].Row == s.row
		if has {
			raw = delAttr(raw, "spans")
			if sc.Self {
				s.w.Write(openTag(raw))
				s.flushCells(1 << 15)
				s.w.WriteString("</row>")
				return raw, false, nil
			}
		}
	}
	return raw, true, nil
}

// cell rewrites a cell's start tag: the marks before it written, and a
// marked cell given its mark's style.
func (s *sheetStream) cell(name string, raw []byte) ([]byte, error) {
	sc, j := s.sc, s.j
	// (A sheet rewritten for its tab selection alone keeps
	// its cells as they are.)
	if s.marked && s.sheetDataOpen && s.parents[3] == "row" && name == "c" {
		n := s.col + 1
		if v := sc.Attr("r"); v != nil {
			cc, rr := xlsx.CellRef(v)
			if cc == 0 || rr != s.row {
				return nil, leftToExcelize() // a cell of another row
			}
			n = cc
		}
		if n <= s.col {
			return nil, leftToExcelize() // cells out of order or repeated
		}
		s.col = n
		s.flushCells(n)
		if s.mi < len(j.Marks) && j.Marks[s.mi].Row == s.row && j.Marks[s.mi].Col == s.col {
			m := &j.Marks[s.mi]
			s.mi++
			base, _ := strconv.Atoi(string(sc.Attr("s")))
			if base == 0 {
				base = s.rowStyle
			}
			if base == 0 {
				base = colStyleAt(s.cols, s.col)
			}
			m.Style = s.c.Styles.markStyle(base, m.Note.Fill)
			raw = setAttr(raw, "s", strconv.Itoa(m.Style))
		}
	}
	return raw, nil
}

// end rewrites an end tag: what is written before the worksheet, sheetPr,
// sheetData or a row closes.
func (s *sheetStream) end(raw []byte) {
	name := string(s.sc.Name)
	d := s.depth
	s.depth--
	if s.skipDepth >= 0 {
		if d == s.skipDepth {
			s.skipDepth = -1
		}
		return
	}
	switch {
	case d == 1:
		if s.setup && !s.sawSheetPr {
			s.w.WriteString(`<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>`)
		}
		s.printBlock()
		if s.j.legacyRID == "" {
			s.drawing()
		}
	case d == 2 && name == "sheetPr" && s.inSheetPr:
		s.inSheetPr = false
		if !s.sawFitPr {
			s.w.WriteString(`<pageSetUpPr fitToPage="1"/>`)
		}
	case d == 2 && name == "sheetData":
		s.flushRows(1 << 21)
		s.sheetDataOpen = false
	case d == 3 && s.sheetDataOpen && name == "row":
		s.flushCells(1 << 15)
	}
	s.w.Write(raw)
}

// widenDimension returns the raw dimension tag with its range grown to
// hold the marks (the cells the copy may add): a reader that trusts the
// dimension (openpyxl's read-only mode) would miss a mark past it. A
// range it cannot read is left as it is.
func widenDimension(tag []byte, marks []cellMark) []byte {
	ref, ok := getAttr(tag, "ref")
	if !ok || len(marks) == 0 {
		return tag
	}
	a, b, one := strings.Cut(ref, ":")
	if !one {
		b = a
	}
	c0, r0 := xlsx.CellRef([]byte(a))
	c1, r1 := xlsx.CellRef([]byte(b))
	if c0 == 0 || c1 == 0 {
		return tag
	}
	c0, c1 = min(c0, c1), max(c0, c1)
	r0, r1 = min(r0, r1), max(r0, r1)
	n0, n1 := c0, c1
	m0, m1 := r0, r1
	for _, m := range marks {
		n0, n1 = min(n0, m.Col), max(n1, m.Col)
		m0, m1 = min(m0, m.Row), max(m1, m.Row)
	}
	if n0 == c0 && n1 == c1 && m0 == r0 && m1 == r1 {
		return tag
	}
	from, _ := excelize.CoordinatesToCellName(n0, m0)
	to, _ := excelize.CoordinatesToCellName(n1, m1)
	return setAttr(tag, "ref", from+":"+to)
}

func colStyleAt(cols []colStyle, col int) int {
	for _, c := range cols {
		if col >= c.min && col <= c.max {
			return c.style
		}
	}
	return 0
}
