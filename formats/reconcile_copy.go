package formats

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// The annotated reconciliation copy of an XLSX workbook is written by
// streaming the source package into the copy (rrStreamCopy): the parts it
// does not change are copied still compressed; each marked worksheet is
// rewritten token by token, changing only the style of the marked cells
// (and adding the cells that do not exist yet), its print setup and its
// comment drawing; the style sheet gets the marked cells' formats, the
// comments and their VML drawings are written for the marked sheets, and
// the Summary sheet, built in a scratch workbook by excelize, is
// transplanted after the workbook's own sheets as the active sheet. The
// cost is one pass over the workbook plus the marks, where excelize
// decoded, restyled and encoded every marked sheet whole. A workbook the
// stream does not handle (no style sheet, prefixed or strict-namespace
// parts, a mark on a sheet that is not a worksheet) is left to excelize
// (errRRFallback).

// errRRFallback says the streamed copy cannot handle the workbook and the
// excelize path is to be taken; nothing has been written.
var errRRFallback = errors.New("annotated copy: workbook left to excelize")

// rrFallback is errRRFallback saying where it was decided.
func rrFallback() error {
	_, _, line, _ := runtime.Caller(1)
	return fmt.Errorf("%w (reconcile_copy.go:%d)", errRRFallback, line)
}

const (
	rrNSMain     = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	rrNSRel      = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	rrRelComment = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments"
	rrRelVML     = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/vmlDrawing"
	rrRelSheet   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
	rrCTSheet    = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
	rrCTComments = "application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"
	rrCTVML      = "application/vnd.openxmlformats-officedocument.vmlDrawing"
	rrXMLDecl    = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
)

// rrCellMark is one cell the copy marks.
type rrCellMark struct {
	col, row int
	ref      string
	note     *rrNote
	style    int  // the new cell format, set while the sheet is streamed
	merged   bool // the cell had a comment, merged into ours
	existing string
}

// rrSheetJob is what the copy does to one worksheet.
type rrSheetJob struct {
	info     xlsx.Sheet
	marks    []rrCellMark // by row, then column
	selected bool         // its tab is selected: the selection is cleared

	relsPath     string
	rels         []xlsx.Rel
	hasRels      bool
	commentsPath string // existing comments part, or the new one
	commentsOld  bool
	vmlPath      string // the VML drawing the notes go into
	vmlOld       bool
	vmlParts     []string // the VML drawings of the sheet's relationships
	legacyRID    string   // the sheet's legacyDrawing relationship, read while streaming
	commentsRID  string
	newVMLRID    string
	block        int // the VML shape id block of a new drawing
}

// rrStreamCopy writes the annotated copy of the XLSX workbook src to dst.
func rrStreamCopy(dst, src string, r *pipeline.Reconciliation, notes map[[2]string]*rrNote, order [][2]string, changes []rrChange) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotAnnotatable, readNotRegular(st.Mode()))
	}
	fh, err := os.Open(src)
	if err != nil {
		return err
	}
	defer fh.Close()
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{MaxUncompressed: annotateMaxUncompressed})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotAnnotatable, err)
	}
	c, err := rrPlanCopy(book, r, src, notes, order, changes)
	if err != nil {
		return err
	}
	return xlsx.WriteFileAtomic(dst, c.write)
}

// rrAddedSheet is a sheet the copy adds (built in a scratch workbook).
type rrAddedSheet struct {
	name, path, rid string
	sheet           []byte
}

// rrCopy is the plan of one streamed copy.
type rrCopy struct {
	book      *xlsx.Book
	wbPath    string
	wbRels    string
	ctPath    string
	stylePath string
	styles    *rrStyleBook
	jobs      map[string]*rrSheetJob // by worksheet part
	jobOrder  []*rrSheetJob
	skip      map[string]bool   // parts rewritten after the stream
	chartSel  map[string]bool   // chart sheets whose tab is selected
	newParts  map[string]string // new part -> content type
	// added are the sheets the copy puts first: the Summary, then the
	// Changes; addedNames their defined names.
	added      []rrAddedSheet
	addedNames []byte
	used       map[string]bool // part names taken
}

func rrPlanCopy(book *xlsx.Book, r *pipeline.Reconciliation, src string, notes map[[2]string]*rrNote, order [][2]string, changes []rrChange) (*rrCopy, error) {
	c := &rrCopy{book: book, jobs: map[string]*rrSheetJob{}, skip: map[string]bool{}, newParts: map[string]string{}, used: map[string]bool{}, ctPath: "[Content_Types].xml"}
	for name := range book.Files {
		c.used[strings.ToLower(name)] = true
	}
	if _, ok := book.Files[c.ctPath]; !ok {
		return nil, rrFallback()
	}
	c.wbPath = "xl/workbook.xml"
	if rels, err := book.Rels(""); err == nil {
		for _, rl := range rels {
			if strings.HasSuffix(rl.Type, "/officeDocument") {
				c.wbPath = xlsx.RelTarget("", rl.Target)
			}
		}
	}
	c.wbRels = path.Join(path.Dir(c.wbPath), "_rels", path.Base(c.wbPath)+".rels")
	if _, ok := book.Files[c.wbRels]; !ok {
		return nil, rrFallback()
	}
	wbRels, err := book.Rels(c.wbPath)
	if err != nil {
		return nil, rrFallback()
	}
	c.chartSel = map[string]bool{}
	for _, rl := range wbRels {
		switch {
		case strings.HasSuffix(rl.Type, "/styles"):
			c.stylePath = xlsx.RelTarget(c.wbPath, rl.Target)
		case strings.HasSuffix(rl.Type, "/chartsheet"):
			// A chart sheet whose tab is selected loses the selection
			// too: two selected tabs are a group.
			p := xlsx.RelTarget(c.wbPath, rl.Target)
			if _, ok := book.Files[p]; !ok {
				continue
			}
			b, err := c.readMeta(p)
			if err != nil {
				return nil, err
			}
			if rrTabSelectedAttr.Match(b) {
				c.chartSel[p] = true
			}
		}
	}
	if _, ok := book.Files[c.stylePath]; !ok || c.stylePath == "" {
		return nil, rrFallback() // no style sheet: excelize's path adds one
	}
	raw, err := c.readMeta(c.stylePath)
	if err != nil {
		return nil, err
	}
	if c.styles, err = rrParseStyles(raw); err != nil {
		return nil, err
	}
	// The sheets marked, each mark placed.
	byName := map[string]xlsx.Sheet{}
	for _, info := range book.Sheets {
		byName[info.Name] = info
	}
	for _, k := range order {
		info, ok := byName[k[0]]
		if !ok || info.Path == "" {
			return nil, rrFallback() // excelize reports it, as before
		}
		col, row := xlsx.CellRef([]byte(k[1]))
		if col == 0 {
			return nil, rrFallback()
		}
		j := c.jobs[info.Path]
		if j == nil {
			j = &rrSheetJob{info: info}
			c.jobs[info.Path] = j
		}
		ref, _ := excelize.CoordinatesToCellName(col, row)
		j.marks = append(j.marks, rrCellMark{col: col, row: row, ref: ref, note: notes[k]})
	}
	// Sheets whose tab is selected lose the selection: the Summary is.
	for _, info := range book.Sheets {
		if info.Path == "" {
			continue
		}
		if _, ok := book.Files[info.Path]; !ok {
			return nil, rrFallback()
		}
		if j := c.jobs[info.Path]; j != nil {
			j.selected = true // rewritten anyway: any selection is cleared
			continue
		}
		if rrTabSelected(book, info) {
			c.jobs[info.Path] = &rrSheetJob{info: info, selected: true}
		}
	}
	block := 1000
	for _, info := range book.Sheets {
		j := c.jobs[info.Path]
		if j == nil || info.Path == "" {
			continue
		}
		c.jobOrder = append(c.jobOrder, j)
		c.skip[info.Path] = true
		if len(j.marks) == 0 {
			continue
		}
		slices.SortStableFunc(j.marks, func(a, b rrCellMark) int {
			if a.row != b.row {
				return a.row - b.row
			}
			return a.col - b.col
		})
		// One mark per cell ("b2" and "B2" name the same one).
		marks := j.marks[:1]
		for _, m := range j.marks[1:] {
			last := &marks[len(marks)-1]
			if m.row != last.row || m.col != last.col {
				marks = append(marks, m)
				continue
			}
			n := &rrNote{fill: last.note.fill, lines: slices.Concat(last.note.lines, m.note.lines)}
			if m.note.fill != PlanFillColor {
				n.fill = m.note.fill
			}
			last.note = n
		}
		j.marks = marks
		j.relsPath = path.Join(path.Dir(info.Path), "_rels", path.Base(info.Path)+".rels")
		if _, ok := book.Files[j.relsPath]; ok {
			j.hasRels = true
			if j.rels, err = book.Rels(info.Path); err != nil {
				return nil, rrFallback()
			}
		}
		c.skip[j.relsPath] = true
		for _, rl := range j.rels {
			switch {
			case strings.HasSuffix(rl.Type, "/comments"):
				j.commentsPath, j.commentsOld = xlsx.RelTarget(info.Path, rl.Target), true
			case strings.HasSuffix(rl.Type, "/vmlDrawing"):
				// The notes may go into it (known once the sheet's
				// legacyDrawing is read): copied or rewritten after.
				if p := xlsx.RelTarget(info.Path, rl.Target); c.book.Files[p] != nil {
					j.vmlParts = append(j.vmlParts, p)
					c.skip[p] = true
				}
			}
		}
		if j.commentsOld {
			if _, ok := book.Files[j.commentsPath]; !ok {
				return nil, rrFallback()
			}
			c.skip[j.commentsPath] = true
		} else {
			j.commentsPath = c.newPart("xl/comments%d.xml")
			c.newParts[j.commentsPath] = rrCTComments
			j.commentsRID = rrNewRID(j.rels, "rIdEepipeComments")
		}
		j.block = block
		block += len(j.marks)/1000 + 1
	}
	if err := c.planSummary(r, src, changes); err != nil {
		return nil, err
	}
	return c, nil
}

// newPart returns a part name of the pattern not yet used.
func (c *rrCopy) newPart(pattern string) string {
	for i := 1; ; i++ {
		p := fmt.Sprintf(pattern, i)
		if !c.used[strings.ToLower(p)] {
			c.used[strings.ToLower(p)] = true
			return p
		}
	}
}

func rrNewRID(rels []xlsx.Rel, base string) string {
	for i := 1; ; i++ {
		id := fmt.Sprintf("%s%d", base, i)
		if !slices.ContainsFunc(rels, func(r xlsx.Rel) bool { return r.ID == id }) {
			return id
		}
	}
}

// readMeta reads a small part whole (workbook, relationships, styles,
// comments, drawings), within xlsx.MaxMetaPart.
func (c *rrCopy) readMeta(name string) ([]byte, error) {
	rc, err := c.book.OpenMeta(name)
	if err != nil {
		if errors.Is(err, xlsx.ErrOversized) {
			return nil, fmt.Errorf("%w: %w", ErrNotAnnotatable, err)
		}
		return nil, rrFallback()
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, xlsx.MaxMetaPart+1))
	if err != nil || len(b) > xlsx.MaxMetaPart {
		return nil, rrFallback()
	}
	return b, nil
}

// planSummary builds the Summary and Changes sheets in a scratch workbook
// and takes their sheets, styles and defined names for the copy.
func (c *rrCopy) planSummary(r *pipeline.Reconciliation, src string, changes []rrChange) error {
	own := make([]string, len(c.book.Sheets))
	for i, s := range c.book.Sheets {
		own[i] = s.Name
	}
	name, changesName := rrFreeSheetName(own, SummarySheet), rrFreeSheetName(own, ChangesSheet)
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName(f.GetSheetName(0), name); err != nil {
		return err
	}
	if err := rrWriteReconcileSummary(f, name, r, &src); err != nil {
		return err
	}
	if _, err := f.NewSheet(changesName); err != nil {
		return err
	}
	if err := rrWriteChangesSheet(f, changesName, changes); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return err
	}
	part := func(n string) []byte {
		for _, e := range zr.File {
			if e.Name == n {
				rc, err := e.Open()
				if err != nil {
					return nil
				}
				defer rc.Close()
				b, _ := io.ReadAll(rc)
				return b
			}
		}
		return nil
	}
	scratchStyles, err := rrParseStyles(part("xl/styles.xml"))
	if err != nil {
		return errors.New("annotated copy: the summary's style sheet")
	}
	xfBase, err := c.styles.merge(scratchStyles)
	if err != nil {
		return err
	}
	var sst []string
	if b := part("xl/sharedStrings.xml"); b != nil {
		if sst, err = xlsx.ReadSST(bytes.NewReader(b)); err != nil {
			return err
		}
	}
	for i, n := range []string{name, changesName} {
		sheet, err := rrTransplantSheet(part(fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)), sst, xfBase)
		if err != nil {
			return err
		}
		p := c.newPart(path.Join(path.Dir(c.wbPath), "worksheets/sheet%d.xml"))
		c.newParts[p] = rrCTSheet
		c.added = append(c.added, rrAddedSheet{name: n, path: p, sheet: sheet})
	}
	// The added sheets come first: their names keep the scratch
	// workbook's sheet indexes.
	var dn bytes.Buffer
	if wb := f.WorkBook; wb != nil && wb.DefinedNames != nil {
		for _, d := range wb.DefinedNames.DefinedName {
			dn.WriteString(`<definedName name="` + rrXMLAttr(d.Name) + `"`)
			if d.LocalSheetID != nil {
				fmt.Fprintf(&dn, ` localSheetId="%d"`, *d.LocalSheetID)
			}
			if d.Hidden {
				dn.WriteString(` hidden="1"`)
			}
			dn.WriteString(">" + rrXMLText(d.Data) + "</definedName>")
		}
	}
	c.addedNames = dn.Bytes()
	return nil
}

// write streams the copy to w.
func (c *rrCopy) write(w io.Writer) error {
	zw := xlsx.NewZipWriter(w)
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	}
	put := func(name string, b []byte) error {
		w, err := create(name)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	// The workbook part and its relationships first: the Summary's
	// relationship id is chosen there.
	wbRels, err := c.readMeta(c.wbRels)
	if err != nil {
		return err
	}
	rels, err := c.book.Rels(c.wbPath)
	if err != nil {
		return rrFallback()
	}
	var addRels strings.Builder
	for i := range c.added {
		a := &c.added[i]
		a.rid = rrNewRID(rels, []string{"rIdEepipeSummary", "rIdEepipeChanges"}[min(i, 1)])
		rels = append(rels, xlsx.Rel{ID: a.rid})
		fmt.Fprintf(&addRels, `<Relationship Id="%s" Type="%s" Target="%s"/>`, rrXMLAttr(a.rid), rrRelSheet, rrXMLAttr(rrRelPath(c.wbPath, a.path)))
	}
	newWBRels, err := rrInsertBefore(wbRels, "</Relationships>", addRels.String())
	if err != nil {
		return err
	}
	wb, err := c.readMeta(c.wbPath)
	if err != nil {
		return err
	}
	newWB, err := c.rewriteWorkbook(wb)
	if err != nil {
		return err
	}
	for _, e := range c.book.Zip.File {
		name := strings.TrimPrefix(strings.ReplaceAll(e.Name, "\\", "/"), "/")
		if c.book.Files[name] != e {
			continue // a duplicate entry: the reader sees the last one only
		}
		switch {
		case name == c.ctPath:
			b, err := c.readMeta(name)
			if err != nil {
				return err
			}
			var add strings.Builder
			if !rrHasVMLDefault.Match(b) {
				// New VML drawings are named below, after this part.
				add.WriteString(`<Default Extension="vml" ContentType="` + rrCTVML + `"/>`)
			}
			for _, p := range slices.Sorted(maps.Keys(c.newParts)) {
				fmt.Fprintf(&add, `<Override PartName="/%s" ContentType="%s"/>`, rrXMLAttr(p), c.newParts[p])
			}
			if b, err = rrInsertBefore(b, "</Types>", add.String()); err != nil {
				return err
			}
			err = put(name, b)
		case name == c.wbPath:
			err = put(name, newWB)
		case name == c.wbRels:
			err = put(name, newWBRels)
		case name == c.stylePath:
			// written last, with the marked cells' formats
		case c.jobs[name] != nil:
			err = c.rewriteSheet(create, name, c.jobs[name])
		case c.chartSel[name]:
			var b []byte
			if b, err = c.readMeta(name); err == nil {
				err = put(name, rrTabSelectedAttr.ReplaceAll(b, []byte("$1")))
			}
		case c.skip[name]:
			// rewritten below
		default:
			err = zw.Copy(e)
		}
		if err != nil {
			return err
		}
	}
	for _, a := range c.added {
		if err := put(a.path, a.sheet); err != nil {
			return err
		}
	}
	for _, j := range c.jobOrder {
		if len(j.marks) == 0 {
			continue
		}
		if err := c.writeNotes(put, func(name string) error { return zw.Copy(c.book.Files[name]) }, j); err != nil {
			return err
		}
	}
	if err := put(c.stylePath, c.styles.bytes()); err != nil {
		return err
	}
	return zw.Close()
}

// rrInsertBefore inserts add before the last occurrence of end.
func rrInsertBefore(b []byte, end, add string) ([]byte, error) {
	i := bytes.LastIndex(b, []byte(end))
	if i < 0 {
		return nil, rrFallback()
	}
	out := make([]byte, 0, len(b)+len(add))
	out = append(out, b[:i]...)
	out = append(out, add...)
	return append(out, b[i:]...), nil
}

// rrRelPath is the relationship target of part to from a part beside from.
func rrRelPath(from, to string) string {
	fd := strings.Split(path.Dir(from), "/")
	td := strings.Split(to, "/")
	i := 0
	for i < len(fd) && i < len(td)-1 && fd[i] == td[i] && fd[i] != "." {
		i++
	}
	var parts []string
	for k := i; k < len(fd); k++ {
		if fd[k] != "." && fd[k] != "" {
			parts = append(parts, "..")
		}
	}
	return strings.Join(append(parts, td[i:]...), "/")
}

// rewriteWorkbook adds the Summary and Changes sheets before the
// workbook's own, makes the Summary the active tab, adds their defined
// names and moves the workbook's sheet-scoped names (print areas and
// titles, filters) with their sheets.
func (c *rrCopy) rewriteWorkbook(b []byte) ([]byte, error) {
	if bytes.Contains(b, []byte("purl.oclc.org")) {
		return nil, rrFallback() // strict OOXML
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	var (
		depth                                     int
		cur                                       string
		rootEnd, sheetsStart, sheetsEnd, namesEnd = -1, -1, -1, -1
		afterNames, viewStart, viewEnd, rootClose = -1, -1, -1, -1
		maxID                                     int
		sawSheet, sawBookViews                    bool
		namesStart, namesTagEnd                   = -1, -1
		sheetsTagEnd                              = -1
		scoped                                    [][2]int // definedName start tags with a localSheetId
	)
	late := map[string]bool{"calcPr": true, "oleSize": true, "customWorkbookViews": true, "pivotCaches": true, "smartTagPr": true,
		"smartTagTypes": true, "webPublishing": true, "fileRecoveryPr": true, "webPublishObjects": true, "extLst": true}
	for {
		before := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, rrFallback()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			// A prefixed element of SpreadsheetML (x:sheets) is not
			// handled; those of other namespaces Excel writes among the
			// workbook's children (mc:AlternateContent holding the
			// file's path, xr:revisionPtr) are kept as they are.
			if t.Name.Space != "" && depth <= 3 && (depth == 1 || rrWorkbookNames[t.Name.Local] || late[t.Name.Local]) {
				return nil, rrFallback()
			}
			switch depth {
			case 1:
				rootEnd = int(d.InputOffset())
			case 2:
				cur = t.Name.Local
				switch cur {
				case "sheets":
					sheetsStart, sheetsTagEnd = before, int(d.InputOffset())
				case "bookViews":
					sawBookViews = true
				case "definedNames":
					namesStart, namesTagEnd = before, int(d.InputOffset())
				}
				if late[cur] && afterNames < 0 {
					afterNames = before
				}
			case 3:
				if cur == "bookViews" && t.Name.Local == "workbookView" && viewStart < 0 {
					viewStart, viewEnd = before, int(d.InputOffset())
				}
				if cur == "definedNames" && t.Name.Local == "definedName" {
					for _, a := range t.Attr {
						if a.Name.Local == "localSheetId" {
							scoped = append(scoped, [2]int{before, int(d.InputOffset())})
						}
					}
				}
				if cur == "sheets" && t.Name.Local == "sheet" {
					sawSheet = true
					for _, a := range t.Attr {
						switch a.Name.Local {
						case "sheetId":
							if n, err := strconv.Atoi(a.Value); err == nil {
								maxID = max(maxID, n)
							}
						}
					}
				}
			}
		case xml.EndElement:
			if depth == 2 {
				switch t.Name.Local {
				case "sheets":
					sheetsEnd = before
				case "definedNames":
					namesEnd = before
				}
			}
			if depth == 1 {
				rootClose = before
			}
			depth--
		}
	}
	if rootEnd < 0 || sheetsEnd < 0 || !sawSheet || rootClose < 0 || bytes.HasSuffix(b[:rootEnd], []byte("/>")) || (sawBookViews && viewStart < 0) ||
		sheetsTagEnd < 0 || bytes.HasSuffix(b[sheetsStart:sheetsTagEnd], []byte("/>")) {
		return nil, rrFallback()
	}
	type edit struct {
		at, end int
		text    []byte
	}
	var edits []edit
	// The Summary, first, is the active tab and the first tab shown.
	if viewStart >= 0 {
		tag := rrDelAttr(rrSetAttr(b[viewStart:viewEnd], "activeTab", "0"), "firstSheet")
		edits = append(edits, edit{viewStart, viewEnd, tag})
	} else {
		edits = append(edits, edit{sheetsStart, sheetsStart, []byte(`<bookViews><workbookView activeTab="0"/></bookViews>`)})
	}
	// The workbook's sheet-scoped names follow their sheets.
	for _, sp := range scoped {
		tag := b[sp[0]:sp[1]]
		v, _ := rrGetAttr(tag, "localSheetId")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, rrFallback()
		}
		edits = append(edits, edit{sp[0], sp[1], rrSetAttr(tag, "localSheetId", strconv.Itoa(n+len(c.added)))})
	}
	// The relationship prefix is declared on the element: openpyxl
	// declares it on each sheet element, not on the workbook.
	var sheets bytes.Buffer
	for i, a := range c.added {
		fmt.Fprintf(&sheets, `<sheet name="%s" sheetId="%d" xmlns:r="%s" r:id="%s"/>`, rrXMLAttr(a.name), maxID+1+i, rrNSRel, rrXMLAttr(a.rid))
	}
	edits = append(edits, edit{sheetsTagEnd, sheetsTagEnd, sheets.Bytes()})
	if len(c.addedNames) > 0 {
		switch {
		case namesEnd >= 0 && namesEnd == namesTagEnd && bytes.HasSuffix(b[namesStart:namesTagEnd], []byte("/>")):
			edits = append(edits, edit{namesStart, namesTagEnd, slices.Concat([]byte("<definedNames>"), c.addedNames, []byte("</definedNames>"))})
		case namesEnd >= 0:
			edits = append(edits, edit{namesEnd, namesEnd, c.addedNames})
		default:
			at := rootClose
			if afterNames >= 0 {
				at = afterNames
			}
			edits = append(edits, edit{at, at, slices.Concat([]byte("<definedNames>"), c.addedNames, []byte("</definedNames>"))})
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(b[pos:e.at])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(b[pos:])
	return out.Bytes(), nil
}

// rrWorkbookNames are the workbook's elements the copy reads or edits.
var rrWorkbookNames = map[string]bool{"workbook": true, "sheets": true, "sheet": true, "bookViews": true, "workbookView": true,
	"definedNames": true, "definedName": true}

// rrAttrSpan locates one attribute in a raw start tag.
type rrAttrSpan struct {
	name             string
	start, end       int // the attribute with its leading space
	valStart, valEnd int
}

// rrTagAttrs lists the attributes of a raw start tag (<name a="1" ...>),
// which may be followed by the element's content, and returns the index
// of the tag's end ("/>" or ">").
func rrTagAttrs(tag []byte) ([]rrAttrSpan, int) {
	var out []rrAttrSpan
	i := 1
	for i < len(tag) && !xlsx.IsXMLSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	for i < len(tag) {
		start := i
		for i < len(tag) && xlsx.IsXMLSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] == '>' || tag[i] == '/' {
			return out, i
		}
		ns := i
		for i < len(tag) && tag[i] != '=' && !xlsx.IsXMLSpace(tag[i]) {
			i++
		}
		name := string(tag[ns:i])
		for i < len(tag) && tag[i] != '"' && tag[i] != '\'' {
			i++
		}
		if i >= len(tag) {
			return out, len(tag)
		}
		q := tag[i]
		vs := i + 1
		k := bytes.IndexByte(tag[vs:], q)
		if k < 0 {
			return out, len(tag)
		}
		out = append(out, rrAttrSpan{name: name, start: start, end: vs + k + 1, valStart: vs, valEnd: vs + k})
		i = vs + k + 1
	}
	return out, len(tag)
}

func rrGetAttr(tag []byte, name string) (string, bool) {
	attrs, _ := rrTagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return string(tag[a.valStart:a.valEnd]), true
		}
	}
	return "", false
}

// rrSetAttr returns the raw start tag with the attribute set (added
// before the tag's end when absent); value is written as is.
func rrSetAttr(tag []byte, name, value string) []byte {
	attrs, end := rrTagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return slices.Concat(tag[:a.valStart], []byte(value), tag[a.valEnd:])
		}
	}
	return slices.Concat(tag[:end], []byte(" "+name+`="`+value+`"`), tag[end:])
}

func rrDelAttr(tag []byte, name string) []byte {
	attrs, _ := rrTagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return slices.Concat(tag[:a.start], tag[a.end:])
		}
	}
	return tag
}

// rrOpenTag turns a raw self-closing start tag into an opening one.
func rrOpenTag(tag []byte) []byte {
	if bytes.HasSuffix(tag, []byte("/>")) {
		return slices.Concat(bytes.TrimRight(tag[:len(tag)-2], " \t\r\n"), []byte(">"))
	}
	return tag
}

var rrXMLTextEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#13;")
var rrXMLAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;")

// rrXMLClean drops the characters XML 1.0 cannot hold.
func rrXMLClean(s string) string {
	ok := true
	for _, r := range s {
		if !rrXMLChar(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !rrXMLChar(r) {
			return -1
		}
		return r
	}, s)
}

func rrXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

func rrXMLText(s string) string { return rrXMLTextEscaper.Replace(rrXMLClean(s)) }
func rrXMLAttr(s string) string { return rrXMLAttrEscaper.Replace(rrXMLClean(s)) }

// Worksheet children in schema order, for placing the elements the copy
// adds: the print setup goes before the first child ranked after
// headerFooter, the legacy drawing before the first ranked after it.
var rrSheetRank = map[string]int{
	"sheetPr": 1, "dimension": 2, "sheetViews": 3, "sheetFormatPr": 4, "cols": 5, "sheetData": 6, "sheetCalcPr": 7,
	"sheetProtection": 8, "protectedRanges": 9, "scenarios": 10, "autoFilter": 11, "sortState": 12, "dataConsolidate": 13,
	"customSheetViews": 14, "mergeCells": 15, "phoneticPr": 16, "conditionalFormatting": 17, "dataValidations": 18,
	"hyperlinks": 19, "printOptions": 20, "pageMargins": 21, "pageSetup": 22, "headerFooter": 23, "rowBreaks": 24,
	"colBreaks": 25, "customProperties": 26, "cellWatches": 27, "ignoredErrors": 28, "smartTags": 29, "drawing": 30,
	"legacyDrawing": 31, "legacyDrawingHF": 32, "drawingHF": 33, "picture": 34, "oleObjects": 35, "controls": 36,
	"webPublishItems": 37, "tableParts": 38, "extLst": 39, "AlternateContent": 35,
}

// The print setup of a marked sheet, as templates.SetPrintLayout makes it.
const (
	rrPageMargins = `<pageMargins left="0.4" right="0.4" top="0.55" bottom="0.55" header="0.3" footer="0.3"/>`
	rrPageSetup   = `<pageSetup paperSize="9" orientation="landscape" fitToWidth="1" fitToHeight="0"/>`
	rrHeaderFoot  = `<headerFooter><oddFooter>&amp;L&amp;A&amp;RPage &amp;P of &amp;N</oddFooter></headerFooter>`
)

// rewriteSheet streams one worksheet into the copy.
func (c *rrCopy) rewriteSheet(create func(string) (io.Writer, error), name string, j *rrSheetJob) error {
	rc, err := c.book.Open(name)
	if err != nil {
		return fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, j.info.Name, err)
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
		return fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, j.info.Name, err)
	}
	return w.Flush()
}

// rrColStyle is the style of a range of columns.
type rrColStyle struct{ min, max, style int }

func (c *rrCopy) streamSheet(w *bufio.Writer, r io.Reader, j *rrSheetJob) error {
	sc := xlsx.NewScanner(r)
	marked := len(j.marks) > 0
	// A marked sheet prints like eepipe's plan sheets (landscape, one
	// page wide), as templates.SetPrintLayout sets it; a hidden one is
	// left as it is.
	setup := marked && !j.info.Hidden
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
	w.WriteString(rrXMLDecl)
	// newCell writes a mark whose cell does not exist.
	newCell := func(m *rrCellMark, base int) {
		m.style = c.styles.markStyle(base, m.note.fill)
		fmt.Fprintf(w, `<c r="%s" s="%d"/>`, m.ref, m.style)
	}
	// flushRows writes the marked rows before row n (absent from the sheet).
	flushRows := func(n int) {
		for mi < len(j.marks) && j.marks[mi].row < n {
			r := j.marks[mi].row
			fmt.Fprintf(w, `<row r="%d">`, r)
			for mi < len(j.marks) && j.marks[mi].row == r {
				newCell(&j.marks[mi], rrColStyleAt(cols, j.marks[mi].col))
				mi++
			}
			w.WriteString("</row>")
		}
	}
	// flushCells writes the marks of the current row before column n.
	flushCells := func(n int) {
		for mi < len(j.marks) && j.marks[mi].row == row && j.marks[mi].col < n {
			base := rowStyle
			if base == 0 {
				base = rrColStyleAt(cols, j.marks[mi].col)
			}
			newCell(&j.marks[mi], base)
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
						raw = rrSetAttr(raw, "xmlns:r", rrNSRel)
					} else if v != rrNSRel {
						rPrefix = "eepipe_r"
						raw = rrSetAttr(raw, "xmlns:eepipe_r", rrNSRel)
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
						raw = rrWidenDimension(raw, j.marks)
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
					has := mi < len(j.marks) && j.marks[mi].row == row
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
					if mi < len(j.marks) && j.marks[mi].row == row && j.marks[mi].col == col {
						m := &j.marks[mi]
						mi++
						base, _ := strconv.Atoi(string(sc.Attr("s")))
						if base == 0 {
							base = rowStyle
						}
						if base == 0 {
							base = rrColStyleAt(cols, col)
						}
						m.style = c.styles.markStyle(base, m.note.fill)
						raw = rrSetAttr(raw, "s", strconv.Itoa(m.style))
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
	if mi < len(j.marks) {
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
		n0, n1 = min(n0, m.col), max(n1, m.col)
		m0, m1 = min(m0, m.row), max(m1, m.row)
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

// writeNotes writes a marked sheet's relationships, comments and VML
// drawing.
func (c *rrCopy) writeNotes(put func(string, []byte) error, copyPart func(string) error, j *rrSheetJob) error {
	vmlRID := j.legacyRID
	if vmlRID != "" {
		for _, rl := range j.rels {
			if rl.ID == vmlRID && strings.HasSuffix(rl.Type, "/vmlDrawing") {
				j.vmlPath, j.vmlOld = xlsx.RelTarget(j.info.Path, rl.Target), true
			}
		}
		if !j.vmlOld {
			return rrFallback()
		}
	} else {
		vmlRID = j.newVMLRID
		j.vmlPath = c.newPart("xl/drawings/vmlDrawing%d.vml")
	}
	// Comments: the workbook's own kept, ours for the marked cells (a
	// comment the cell had goes below ours).
	var old *rrComments
	if j.commentsOld {
		b, err := c.readMeta(j.commentsPath)
		if err != nil {
			return err
		}
		if old, err = rrParseComments(b); err != nil {
			return err
		}
	}
	var cb bytes.Buffer
	cb.WriteString(rrXMLDecl)
	authors := []string{commentAuthor}
	if old != nil {
		cb.Write(old.root)
		authors = old.authors
		if !slices.Contains(authors, commentAuthor) {
			authors = append(authors, commentAuthor)
		}
	} else {
		cb.WriteString(`<comments xmlns="` + rrNSMain + `">`)
	}
	me := slices.Index(authors, commentAuthor)
	cb.WriteString("<authors>")
	for _, a := range authors {
		cb.WriteString("<author>" + rrXMLText(a) + "</author>")
	}
	cb.WriteString("</authors><commentList>")
	byRef := map[string]*rrCellMark{}
	for i := range j.marks {
		byRef[j.marks[i].ref] = &j.marks[i]
	}
	if old != nil {
		for _, oc := range old.list {
			if m := byRef[strings.ToUpper(oc.ref)]; m != nil {
				m.merged, m.existing = true, oc.text
				continue
			}
			cb.Write(oc.raw)
		}
	}
	for i := range j.marks {
		m := &j.marks[i]
		text := strings.Join(m.note.lines, "\n")
		if m.existing != "" {
			text += "\n---\n" + m.existing
		}
		run := `<rPr><sz val="9"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr>`
		fmt.Fprintf(&cb, `<comment ref="%s" authorId="%d"><text><r><rPr><b/><sz val="9"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr><t xml:space="preserve">%s</t></r><r>%s<t xml:space="preserve">%s</t></r></text></comment>`,
			m.ref, me, rrXMLText(commentAuthor+":\n"), run, rrXMLText(text))
	}
	cb.WriteString("</commentList></comments>")
	if err := put(j.commentsPath, cb.Bytes()); err != nil {
		return err
	}
	// The VML drawing: the cells that had no comment get a note shape.
	var shapes bytes.Buffer
	nsDecl := ""
	id := j.block * 1024
	var vml []byte
	if j.vmlOld {
		b, err := c.readMeta(j.vmlPath)
		if err != nil {
			return err
		}
		// The drawing's root may not declare the v, o and x prefixes
		// (openpyxl declares its own on each element): the shapes added
		// declare them.
		nsDecl = ` xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:x="urn:schemas-microsoft-com:office:excel"`
		for _, m := range rrShapeID.FindAllSubmatch(b, -1) {
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				id = max(id, n)
			}
		}
		if !bytes.Contains(b, []byte(`id="_x0000_t202"`)) {
			shapes.WriteString(strings.Replace(rrVMLShapeType, "<v:shapetype", "<v:shapetype"+nsDecl, 1))
		}
		vml = b
	}
	firstID := id + 1
	for i := range j.marks {
		m := &j.marks[i]
		if m.merged {
			continue
		}
		id++
		lines := strings.Count(strings.Join(m.note.lines, "\n"), "\n") + 2
		r0 := max(m.row-2, 0)
		fmt.Fprintf(&shapes, `<v:shape%s id="_x0000_s%d" type="#_x0000_t202" style="position:absolute;margin-left:59.25pt;margin-top:1.5pt;width:195pt;height:%dpt;z-index:%d;visibility:hidden" fillcolor="#ffffe1" o:insetmode="auto"><v:fill color2="#ffffe1"/><v:shadow on="t" color="black" obscured="t"/><v:path o:connecttype="none"/><v:textbox style="mso-direction-alt:auto"><div style="text-align:left"></div></v:textbox><x:ClientData ObjectType="Note"><x:MoveWithCells/><x:SizeWithCells/><x:Anchor>%d, 15, %d, 2, %d, 15, %d, 16</x:Anchor><x:AutoFill>False</x:AutoFill><x:Row>%d</x:Row><x:Column>%d</x:Column></x:ClientData></v:shape>`,
			nsDecl, id, 45+12*lines, i+1, m.col, r0, m.col+3, r0+lines+2, m.row-1, m.col-1)
	}
	if j.vmlOld {
		var err error
		if vml, err = rrInsertBefore(vml, "</xml>", shapes.String()); err != nil {
			return err
		}
		if id >= firstID {
			vml = rrAddIDBlocks(vml, firstID/1024, id/1024)
		}
	} else {
		var blocks []string
		for b := j.block; b*1024 <= id; b++ {
			blocks = append(blocks, strconv.Itoa(b))
		}
		vml = slices.Concat([]byte(`<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit"><o:idmap v:ext="edit" data="`+strings.Join(blocks, ",")+`"/></o:shapelayout>`+rrVMLShapeType),
			shapes.Bytes(), []byte("</xml>"))
	}
	if err := put(j.vmlPath, vml); err != nil {
		return err
	}
	for _, p := range j.vmlParts {
		if p != j.vmlPath {
			if err := copyPart(p); err != nil {
				return err
			}
		}
	}
	// The relationships.
	var add strings.Builder
	if !j.commentsOld {
		fmt.Fprintf(&add, `<Relationship Id="%s" Type="%s" Target="%s"/>`, j.commentsRID, rrRelComment, rrXMLAttr(rrRelPath(j.info.Path, j.commentsPath)))
	}
	if !j.vmlOld {
		fmt.Fprintf(&add, `<Relationship Id="%s" Type="%s" Target="%s"/>`, vmlRID, rrRelVML, rrXMLAttr(rrRelPath(j.info.Path, j.vmlPath)))
	}
	var rels []byte
	if j.hasRels {
		b, err := c.readMeta(j.relsPath)
		if err != nil {
			return err
		}
		if rels, err = rrInsertBefore(b, "</Relationships>", add.String()); err != nil {
			return err
		}
	} else {
		rels = []byte(rrXMLDecl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + add.String() + `</Relationships>`)
	}
	return put(j.relsPath, rels)
}

// rrTabSelectedAttr matches a sheet view start tag's tabSelected="1"
// (group 1: the tag before it).
var rrTabSelectedAttr = regexp.MustCompile(`(<(?:[A-Za-z_][\w.-]*:)?sheetView\b[^>]*?)\s+tabSelected\s*=\s*(?:"(?:1|true)"|'(?:1|true)')`)

var rrHasVMLDefault = regexp.MustCompile(`(?i)<Default[^>]*Extension="vml"`)

// rrIDMap matches the data attribute of a VML drawing's shape id map
// (o:idmap, whatever its prefix), the blocks of 1,024 shape ids the
// drawing uses.
var rrIDMap = regexp.MustCompile(`(<(?:[A-Za-z_][\w.-]*:)?idmap\b[^>]*?\bdata=")([0-9, ]*)"`)

// rrAddIDBlocks adds the shape id blocks from..to to an existing
// drawing's id map, for the note shapes added to it.
func rrAddIDBlocks(vml []byte, from, to int) []byte {
	loc := rrIDMap.FindSubmatchIndex(vml)
	if loc == nil {
		return vml
	}
	have := string(vml[loc[4]:loc[5]])
	list := strings.FieldsFunc(have, func(r rune) bool { return r == ',' || r == ' ' })
	for b := from; b <= to; b++ {
		if !slices.Contains(list, strconv.Itoa(b)) {
			list = append(list, strconv.Itoa(b))
		}
	}
	return slices.Concat(vml[:loc[4]], []byte(strings.Join(list, ",")), vml[loc[5]:])
}

var rrShapeID = regexp.MustCompile(`_x0000_s(\d{1,9})\b`)

const rrVMLShapeType = `<v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/><v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>`

// rrComments is a comments part read for merging.
type rrComments struct {
	root    []byte // the root start tag as written (its namespaces)
	authors []string
	list    []struct {
		ref, text string
		raw       []byte
	}
}

func rrParseComments(b []byte) (*rrComments, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	out := &rrComments{}
	depth := 0
	var (
		cur       string
		start     int
		ref, text strings.Builder
		inT       bool
		inRPh     bool
	)
	for {
		before := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, rrFallback()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if t.Name.Space != "" && depth <= 3 {
				return nil, rrFallback()
			}
			switch {
			case depth == 1:
				if t.Name.Local != "comments" {
					return nil, rrFallback()
				}
				out.root = rrOpenTag(b[before:d.InputOffset()])
			case depth == 2:
				cur = t.Name.Local
			case depth == 3 && cur == "authors" && t.Name.Local == "author":
				text.Reset()
				inT = true
			case depth == 3 && cur == "commentList" && t.Name.Local == "comment":
				start = before
				ref.Reset()
				text.Reset()
				for _, a := range t.Attr {
					if a.Name.Local == "ref" {
						ref.WriteString(a.Value)
					}
				}
			case depth > 3 && cur == "commentList":
				switch t.Name.Local {
				case "t":
					inT = !inRPh
				case "rPh":
					inRPh = true
				}
			}
		case xml.CharData:
			if inT {
				text.Write(t)
			}
		case xml.EndElement:
			switch {
			case depth == 3 && cur == "authors":
				out.authors = append(out.authors, text.String())
				inT = false
			case depth == 3 && cur == "commentList":
				out.list = append(out.list, struct {
					ref, text string
					raw       []byte
				}{ref.String(), text.String(), b[start:d.InputOffset()]})
			case depth > 3 && t.Name.Local == "t":
				inT = false
			case depth > 3 && t.Name.Local == "rPh":
				inRPh = false
			}
			depth--
		}
	}
	if out.root == nil {
		return nil, rrFallback()
	}
	return out, nil
}

// rrTransplantSheet turns the scratch workbook's Summary sheet into a
// sheet of the copy: its cell formats shifted by xfBase, its shared
// strings written inline.
func rrTransplantSheet(b []byte, sst []string, xfBase int) ([]byte, error) {
	if b == nil {
		return nil, errors.New("annotated copy: the summary sheet is missing")
	}
	var out bytes.Buffer
	out.WriteString(rrXMLDecl)
	sc := xlsx.NewScanner(bytes.NewReader(b))
	shift := func(raw []byte, attr string) []byte {
		if v, ok := rrGetAttr(raw, attr); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return rrSetAttr(raw, attr, strconv.Itoa(n+xfBase))
			}
		}
		return raw
	}
	var pending []byte // a shared-string cell's start tag, until its value
	var value []byte
	inV := false
	lastCol, lastRow := 0, 0
	for {
		err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		raw := sc.Raw()
		switch sc.Kind {
		case xlsx.TokStart:
			switch string(sc.Name) {
			case "c":
				if c, r := xlsx.CellRef(sc.Attr("r")); c > 0 {
					lastCol, lastRow = max(lastCol, c), max(lastRow, r)
				}
				raw = shift(raw, "s")
				if string(sc.Attr("t")) == "s" && !sc.Self {
					pending = rrSetAttr(raw, "t", "inlineStr")
					value = value[:0]
					continue
				}
			case "row":
				raw = shift(raw, "s")
			case "col":
				raw = shift(raw, "style")
			case "v":
				if pending != nil {
					inV = true
					continue
				}
			}
			if pending != nil {
				continue
			}
		case xlsx.TokText:
			if pending != nil {
				if inV {
					value = append(value, sc.Text...)
				}
				continue
			}
		case xlsx.TokEnd:
			if pending != nil {
				switch string(sc.Name) {
				case "v":
					inV = false
				case "c":
					i, err := strconv.Atoi(strings.TrimSpace(string(value)))
					text := ""
					if err == nil && i >= 0 && i < len(sst) {
						text = sst[i]
					}
					out.Write(pending)
					out.WriteString(`<is><t xml:space="preserve">` + rrXMLText(text) + `</t></is></c>`)
					pending = nil
				}
				continue
			}
		}
		out.Write(raw)
	}
	// excelize leaves the dimension at A1; a reader that trusts it
	// (openpyxl's read-only mode) would see the Summary's first cell only.
	b = out.Bytes()
	if i := bytes.Index(b, []byte("<dimension ")); i >= 0 && lastCol > 0 {
		if k := bytes.IndexByte(b[i:], '>'); k > 0 {
			to, _ := excelize.CoordinatesToCellName(lastCol, lastRow)
			b = slices.Concat(b[:i], rrSetAttr(b[i:i+k+1], "ref", "A1:"+to), b[i+k+1:])
		}
	}
	return b, nil
}

// rrStyleContainer is one list of the style sheet (numFmts, fonts,
// fills, borders, cellXfs) as written: its start tag, where its end tag
// starts, and its children.
type rrStyleContainer struct {
	start, tagEnd, endStart int
	self                    bool // written <numFmts count="0"/>
	children                [][]byte
}

// rrStyleBook is a style sheet with the formats the copy adds appended
// to its lists.
type rrStyleBook struct {
	raw      []byte
	rootEnd  int
	cont     map[string]*rrStyleContainer
	add      map[string][][]byte
	markXf   map[[2]any]int
	markFill map[string]int
}

var rrStyleLists = []string{"numFmts", "fonts", "fills", "borders", "cellXfs"}

func rrParseStyles(b []byte) (*rrStyleBook, error) {
	if b == nil {
		return nil, rrFallback()
	}
	s := &rrStyleBook{raw: b, rootEnd: -1, cont: map[string]*rrStyleContainer{}, add: map[string][][]byte{}, markXf: map[[2]any]int{}, markFill: map[string]int{}}
	d := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	var cur *rrStyleContainer
	childStart := 0
	for {
		before := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, rrFallback()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if t.Name.Space != "" && depth <= 3 {
				return nil, rrFallback()
			}
			switch depth {
			case 1:
				if t.Name.Local != "styleSheet" {
					return nil, rrFallback()
				}
				s.rootEnd = int(d.InputOffset())
			case 2:
				cur = nil
				if slices.Contains(rrStyleLists, t.Name.Local) {
					if s.cont[t.Name.Local] != nil {
						return nil, rrFallback()
					}
					cur = &rrStyleContainer{start: before, tagEnd: int(d.InputOffset())}
					s.cont[t.Name.Local] = cur
				}
			case 3:
				childStart = before
			}
		case xml.EndElement:
			switch depth {
			case 2:
				if cur != nil {
					cur.endStart = before
					cur.self = cur.endStart == cur.tagEnd && bytes.HasSuffix(b[cur.start:cur.tagEnd], []byte("/>"))
				}
				cur = nil
			case 3:
				if cur != nil {
					cur.children = append(cur.children, b[childStart:d.InputOffset()])
				}
			}
			depth--
		}
	}
	if s.rootEnd < 0 || bytes.HasSuffix(b[:s.rootEnd], []byte("/>")) {
		return nil, rrFallback()
	}
	for _, n := range rrStyleLists[1:] {
		if s.cont[n] == nil {
			return nil, rrFallback()
		}
	}
	return s, nil
}

// count returns how many entries a list has with those added.
func (s *rrStyleBook) count(list string) int {
	n := len(s.add[list])
	if c := s.cont[list]; c != nil {
		n += len(c.children)
	}
	return n
}

// merge appends the lists of another style sheet (the scratch Summary's)
// and returns the id of its first cell format in this one.
func (s *rrStyleBook) merge(o *rrStyleBook) (int, error) {
	maxFmt := 163
	if c := s.cont["numFmts"]; c != nil {
		for _, f := range c.children {
			if v, ok := rrGetAttr(f, "numFmtId"); ok {
				if n, err := strconv.Atoi(v); err == nil {
					maxFmt = max(maxFmt, n)
				}
			}
		}
	}
	fmtMap := map[int]int{}
	if c := o.cont["numFmts"]; c != nil {
		for _, f := range c.children {
			v, _ := rrGetAttr(f, "numFmtId")
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, errors.New("annotated copy: the summary's number formats")
			}
			maxFmt++
			fmtMap[n] = maxFmt
			s.add["numFmts"] = append(s.add["numFmts"], rrSetAttr(f, "numFmtId", strconv.Itoa(maxFmt)))
		}
	}
	base := map[string]int{}
	for _, l := range []string{"fonts", "fills", "borders"} {
		base[l] = s.count(l)
		s.add[l] = append(s.add[l], o.cont[l].children...)
	}
	xfBase := s.count("cellXfs")
	for _, x := range o.cont["cellXfs"].children {
		for attr, l := range map[string]string{"fontId": "fonts", "fillId": "fills", "borderId": "borders"} {
			if v, ok := rrGetAttr(x, attr); ok {
				n, _ := strconv.Atoi(v)
				x = rrSetAttr(x, attr, strconv.Itoa(n+base[l]))
			}
		}
		if v, ok := rrGetAttr(x, "numFmtId"); ok {
			if n, err := strconv.Atoi(v); err == nil && fmtMap[n] != 0 {
				x = rrSetAttr(x, "numFmtId", strconv.Itoa(fmtMap[n]))
			}
		}
		x = rrSetAttr(x, "xfId", "0")
		s.add["cellXfs"] = append(s.add["cellXfs"], x)
	}
	return xfBase, nil
}

// markStyle returns the cell format of a marked cell: its old format
// with the mark's fill, one per (old format, fill).
func (s *rrStyleBook) markStyle(old int, fill string) int {
	xfs := s.cont["cellXfs"].children
	if old < 0 || old >= len(xfs) {
		old = 0
	}
	key := [2]any{old, fill}
	if id, ok := s.markXf[key]; ok {
		return id
	}
	fid, ok := s.markFill[fill]
	if !ok {
		fid = s.count("fills")
		s.add["fills"] = append(s.add["fills"], []byte(`<fill><patternFill patternType="solid"><fgColor rgb="FF`+fill+`"/><bgColor indexed="64"/></patternFill></fill>`))
		s.markFill[fill] = fid
	}
	x := []byte(`<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>`)
	if old < len(xfs) {
		x = xfs[old]
	}
	x = rrSetAttr(rrSetAttr(x, "fillId", strconv.Itoa(fid)), "applyFill", "1")
	id := s.count("cellXfs")
	s.add["cellXfs"] = append(s.add["cellXfs"], x)
	s.markXf[key] = id
	return id
}

// bytes returns the style sheet with the added entries.
func (s *rrStyleBook) bytes() []byte {
	type edit struct {
		at, end int
		text    []byte
	}
	var edits []edit
	for _, l := range rrStyleLists {
		add := s.add[l]
		c := s.cont[l]
		if c == nil {
			if len(add) > 0 {
				edits = append(edits, edit{s.rootEnd, s.rootEnd, slices.Concat([]byte(fmt.Sprintf(`<%s count="%d">`, l, len(add))), bytes.Join(add, nil), []byte("</"+l+">"))})
			}
			continue
		}
		tag := rrSetAttr(s.raw[c.start:c.tagEnd], "count", strconv.Itoa(s.count(l)))
		if c.self {
			if len(add) > 0 {
				tag = slices.Concat(rrOpenTag(tag), bytes.Join(add, nil), []byte("</"+l+">"))
			}
			edits = append(edits, edit{c.start, c.tagEnd, tag})
			continue
		}
		edits = append(edits, edit{c.start, c.tagEnd, tag})
		if len(add) > 0 {
			edits = append(edits, edit{c.endStart, c.endStart, bytes.Join(add, nil)})
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(s.raw[pos:e.at])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(s.raw[pos:])
	return out.Bytes()
}
