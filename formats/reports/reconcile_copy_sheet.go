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
func (c *rrCopy) rewriteSheet(create func(string) (io.Writer, error), name string, j *rrSheetJob) error {
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
		if errors.Is(err, errRRFallback) {
			return err
		}
		return fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, j.Info.Name, err)
	}
	return w.Flush()
}

// rrColStyle is the style of a range of columns.
type rrColStyle struct{ min, max, style int }

func (c *rrCopy) streamSheet(w *bufio.Writer, r io.Reader, j *rrSheetJob) error {
	sc := xlsx.NewScanner(r)
	marked := len(j.Marks) > 0
	// A marked sheet prints like eepipe's plan sheets (landscape, one
	// page wide), as templates.SetPrintLayout sets it; a hidden one is
	// left as it is.
	setup := marked && !j.Info.Hidden
	var (
		depth         int
		parents       [8]string // element names by depth, for the first levels
		sawSheetPr    bool
		inSheetPr     bool
		sawFitPr      bool
		printDone     = !setup
		drawingDone   = !marked
		keptSetup     []byte
		skipDepth     = -1 // inside an element being dropped, from this depth
		cols          []rrColStyle
		row, col      int // the current row and cell
		rowStyle      int
		mi            int // next mark
		rPrefix       = "r"
		rootDecl      bool
		sheetDataOpen bool
	)
	w.WriteString(xmlDecl)
	// newCell writes a mark whose cell does not exist.
	newCell := func(m *rrCellMark, base int) {
		m.Style = c.Styles.markStyle(base, m.Note.Fill)
		fmt.Fprintf(w, `<c r="%s" s="%d"/>`, m.Ref, m.Style)
	}
	// flushRows writes the marked rows before row n (absent from the sheet).
	flushRows := func(n int) {
		for mi < len(j.Marks) && j.Marks[mi].Row < n {
			r := j.Marks[mi].Row
			fmt.Fprintf(w, `<row r="%d">`, r)
			for mi < len(j.Marks) && j.Marks[mi].Row == r {
				newCell(&j.Marks[mi], rrColStyleAt(cols, j.Marks[mi].Col))
				mi++
			}
			w.WriteString("</row>")
		}
	}
	// flushCells writes the marks of the current row before column n.
	flushCells := func(n int) {
		for mi < len(j.Marks) && j.Marks[mi].Row == row && j.Marks[mi].Col < n {
			base := rowStyle
			if base == 0 {
				base = rrColStyleAt(cols, j.Marks[mi].Col)
			}
			newCell(&j.Marks[mi], base)
			mi++
		}
	}
	printBlock := func() {
		if printDone {
			return
		}
		printDone = true
		w.WriteString(rrPageMargins)
		if keptSetup != nil {
			w.Write(keptSetup)
		} else {
			w.WriteString(rrPageSetup)
		}
		w.WriteString(rrHeaderFoot)
	}
	drawing := func() {
		if drawingDone {
			return
		}
		drawingDone = true
		j.newVMLRID = rrNewRID(j.rels, "rIdEepipeVml")
		fmt.Fprintf(w, `<legacyDrawing %s:id="%s"/>`, rPrefix, j.newVMLRID)
	}
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
			name := string(sc.Name)
			d := depth + 1
			if !sc.Self {
				depth++
				if depth < len(parents) {
					parents[depth] = name
				}
			}
			if skipDepth >= 0 {
				continue
			}
			switch d {
			case 1:
				if name != "worksheet" || !bytes.HasPrefix(raw, []byte("<worksheet")) || sc.Self {
					return rrFallback()
				}
				rootDecl = true
				if marked {
					if v, ok := rrGetAttr(raw, "xmlns:r"); !ok {
						raw = rrSetAttr(raw, "xmlns:r", nsRel)
					} else if v != nsRel {
						rPrefix = "eepipe_r"
						raw = rrSetAttr(raw, "xmlns:eepipe_r", nsRel)
					}
				}
				w.Write(raw)
				continue
			case 2:
				if bytes.HasPrefix(raw, []byte("<")) && bytes.IndexByte(raw[:min(len(raw), len(name)+2)], ':') >= 0 && name != "AlternateContent" {
					return rrFallback() // a prefixed child: the copy's own would be in another namespace
				}
				rank := rrSheetRank[name]
				if setup && name != "sheetPr" && !sawSheetPr {
					sawSheetPr = true
					w.WriteString(`<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>`)
				}
				if rank > rrSheetRank["headerFooter"] {
					printBlock()
				}
				if rank > rrSheetRank["legacyDrawing"] && j.legacyRID == "" {
					drawing()
				}
				switch name {
				case "sheetPr":
					sawSheetPr = true
					if setup {
						if sc.Self {
							w.Write(rrOpenTag(raw))
							w.WriteString(`<pageSetUpPr fitToPage="1"/></sheetPr>`)
							continue
						}
						inSheetPr = true
					}
				case "pageMargins", "headerFooter":
					if setup {
						if !sc.Self {
							skipDepth = depth
						}
						continue
					}
				case "pageSetup":
					if setup {
						t := rrOpenTag(raw)
						for _, kv := range [][2]string{{"paperSize", "9"}, {"orientation", "landscape"}, {"fitToWidth", "1"}, {"fitToHeight", "0"}} {
							t = rrSetAttr(t, kv[0], kv[1])
						}
						keptSetup = slices.Concat(t[:len(t)-1], []byte("/>"))
						if !sc.Self {
							skipDepth = depth
						}
						continue
					}
				case "dimension":
					if marked {
						raw = rrWidenDimension(raw, j.Marks)
					}
				case "legacyDrawing":
					if id, ok := sc.AttrLocal("id"); ok {
						j.legacyRID = id
						drawingDone = true
					}
				case "sheetData":
					if sc.Self {
						w.Write(rrOpenTag(raw))
						flushRows(1 << 21)
						w.WriteString("</sheetData>")
						continue
					}
					sheetDataOpen = true
				}
				w.Write(raw)
				continue
			case 3:
				switch {
				case inSheetPr && name == "pageSetUpPr":
					sawFitPr = true
					raw = rrSetAttr(raw, "fitToPage", "1")
				case parents[2] == "sheetViews" && name == "sheetView":
					raw = rrDelAttr(raw, "tabSelected")
				case parents[2] == "cols" && name == "col":
					lo, _ := strconv.Atoi(string(sc.Attr("min")))
					hi, _ := strconv.Atoi(string(sc.Attr("max")))
					s, _ := strconv.Atoi(string(sc.Attr("style")))
					if s > 0 && lo > 0 && hi >= lo {
						cols = append(cols, rrColStyle{lo, hi, s})
					}
				case sheetDataOpen && name == "row":
					n := row + 1
					if v := sc.Attr("r"); v != nil {
						var ok bool
						if n, ok = xlsx.Atoi(v); !ok || n < 1 || n > 1<<20 {
							return fmt.Errorf("row %q: not a row number", v)
						}
					}
					if n <= row && marked {
						// Rows out of order or repeated (the flat reader
						// refuses them, excelize's grid reader does not):
						// left to excelize, which sorts them.
						return rrFallback()
					}
					flushRows(n)
					row, col, rowStyle = n, 0, 0
					if cf := string(sc.Attr("customFormat")); cf == "1" || cf == "true" {
						rowStyle, _ = strconv.Atoi(string(sc.Attr("s")))
					}
					has := mi < len(j.Marks) && j.Marks[mi].Row == row
					if has {
						raw = rrDelAttr(raw, "spans")
						if sc.Self {
							w.Write(rrOpenTag(raw))
							flushCells(1 << 15)
							w.WriteString("</row>")
							continue
						}
					}
				}
			case 4:
				// (A sheet rewritten for its tab selection alone keeps
				// its cells as they are.)
				if marked && sheetDataOpen && parents[3] == "row" && name == "c" {
					n := col + 1
					if v := sc.Attr("r"); v != nil {
						cc, rr := xlsx.CellRef(v)
						if cc == 0 || rr != row {
							return rrFallback() // a cell of another row
						}
						n = cc
					}
					if n <= col {
						return rrFallback() // cells out of order or repeated
					}
					col = n
					flushCells(n)
					if mi < len(j.Marks) && j.Marks[mi].Row == row && j.Marks[mi].Col == col {
						m := &j.Marks[mi]
						mi++
						base, _ := strconv.Atoi(string(sc.Attr("s")))
						if base == 0 {
							base = rowStyle
						}
						if base == 0 {
							base = rrColStyleAt(cols, col)
						}
						m.Style = c.Styles.markStyle(base, m.Note.Fill)
						raw = rrSetAttr(raw, "s", strconv.Itoa(m.Style))
					}
				}
			}
			w.Write(raw)
		case xlsx.TokEnd:
			name := string(sc.Name)
			d := depth
			depth--
			if skipDepth >= 0 {
				if d == skipDepth {
					skipDepth = -1
				}
				continue
			}
			switch {
			case d == 1:
				if setup && !sawSheetPr {
					w.WriteString(`<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>`)
				}
				printBlock()
				if j.legacyRID == "" {
					drawing()
				}
			case d == 2 && name == "sheetPr" && inSheetPr:
				inSheetPr = false
				if !sawFitPr {
					w.WriteString(`<pageSetUpPr fitToPage="1"/>`)
				}
			case d == 2 && name == "sheetData":
				flushRows(1 << 21)
				sheetDataOpen = false
			case d == 3 && sheetDataOpen && name == "row":
				flushCells(1 << 15)
			}
			w.Write(raw)
		default:
			if skipDepth >= 0 || !rootDecl {
				continue // text before the root (a byte order mark) would follow the declaration
			}
			w.Write(raw)
		}
	}
	if !rootDecl || depth != 0 {
		return xlsx.ErrXML
	}
	if mi < len(j.Marks) {
		return rrFallback() // a sheet without sheetData: left to excelize
	}
	return nil
}

// rrWidenDimension returns the raw dimension tag with its range grown to
// hold the marks (the cells the copy may add): a reader that trusts the
// dimension (openpyxl's read-only mode) would miss a mark past it. A
// range it cannot read is left as it is.
func rrWidenDimension(tag []byte, marks []rrCellMark) []byte {
	ref, ok := rrGetAttr(tag, "ref")
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
	return rrSetAttr(tag, "ref", from+":"+to)
}

func rrColStyleAt(cols []rrColStyle, col int) int {
	for _, c := range cols {
		if col >= c.min && col <= c.max {
			return c.style
		}
	}
	return 0
}
