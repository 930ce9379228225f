package reports

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
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
	nsMain       = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	nsRel        = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	rrRelComment = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments"
	rrRelVML     = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/vmlDrawing"
	rrRelSheet   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
	rrCTSheet    = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
	rrCTComments = "application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"
	rrCTVML      = "application/vnd.openxmlformats-officedocument.vmlDrawing"
	xmlDecl      = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
)

// rrCellMark is one cell the copy marks.
type rrCellMark struct {
	Col, Row int
	Ref      string
	Note     *rrNote
	Style    int  // the new cell format, set while the sheet is streamed
	merged   bool // the cell had a comment, merged into ours
	existing string
}

// rrSheetJob is what the copy does to one worksheet.
type rrSheetJob struct {
	Info     xlsx.Sheet
	Marks    []rrCellMark // by row, then column
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
func rrStreamCopy(dst, src string, r *diff.Reconciliation, notes map[[2]string]*rrNote, order [][2]string, changes []rrChange) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotAnnotatable, xlsx.NotRegular(st.Mode()))
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
	Styles    *rrStyleBook
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

func rrPlanCopy(book *xlsx.Book, r *diff.Reconciliation, src string, notes map[[2]string]*rrNote, order [][2]string, changes []rrChange) (*rrCopy, error) {
	c := &rrCopy{book: book, jobs: map[string]*rrSheetJob{}, skip: map[string]bool{}, newParts: map[string]string{}, used: map[string]bool{}, ctPath: "[Content_Types].xml"}
	for name := range book.Files {
		c.used[strings.ToLower(name)] = true
	}
	if _, ok := book.Files[c.ctPath]; !ok {
		return nil, rrFallback()
	}
	if err := c.findParts(); err != nil {
		return nil, err
	}
	if err := c.placeMarks(order, notes); err != nil {
		return nil, err
	}
	if err := c.selectedTabs(); err != nil {
		return nil, err
	}
	if err := c.planJobs(); err != nil {
		return nil, err
	}
	if err := c.planSummary(r, src, changes); err != nil {
		return nil, err
	}
	return c, nil
}

// findParts finds the workbook part, its relationships and its styles
// (parsed), and the chart sheets whose tab is selected; a package that
// lacks one of them takes excelize's path (rrFallback).
func (c *rrCopy) findParts() error {
	c.wbPath = "xl/workbook.xml"
	if rels, err := c.book.Rels(""); err == nil {
		for _, rl := range rels {
			if strings.HasSuffix(rl.Type, "/officeDocument") {
				c.wbPath = xlsx.RelTarget("", rl.Target)
			}
		}
	}
	c.wbRels = path.Join(path.Dir(c.wbPath), "_rels", path.Base(c.wbPath)+".rels")
	if _, ok := c.book.Files[c.wbRels]; !ok {
		return rrFallback()
	}
	wbRels, err := c.book.Rels(c.wbPath)
	if err != nil {
		return rrFallback()
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
			if _, ok := c.book.Files[p]; !ok {
				continue
			}
			b, err := c.readMeta(p)
			if err != nil {
				return err
			}
			if rrTabSelectedAttr.Match(b) {
				c.chartSel[p] = true
			}
		}
	}
	if _, ok := c.book.Files[c.stylePath]; !ok || c.stylePath == "" {
		return rrFallback() // no style sheet: excelize's path adds one
	}
	raw, err := c.readMeta(c.stylePath)
	if err != nil {
		return err
	}
	if c.Styles, err = rrParseStyles(raw); err != nil {
		return err
	}
	return nil
}

// placeMarks places each mark, in order, on the job of its sheet.
func (c *rrCopy) placeMarks(order [][2]string, notes map[[2]string]*rrNote) error {
	byName := map[string]xlsx.Sheet{}
	for _, info := range c.book.Sheets {
		byName[info.Name] = info
	}
	for _, k := range order {
		info, ok := byName[k[0]]
		if !ok || info.Path == "" {
			return rrFallback() // excelize reports it, as before
		}
		col, row := xlsx.CellRef([]byte(k[1]))
		if col == 0 {
			return rrFallback()
		}
		j := c.jobs[info.Path]
		if j == nil {
			j = &rrSheetJob{Info: info}
			c.jobs[info.Path] = j
		}
		ref, _ := excelize.CoordinatesToCellName(col, row)
		j.Marks = append(j.Marks, rrCellMark{Col: col, Row: row, Ref: ref, Note: notes[k]})
	}
	return nil
}

// selectedTabs gives every sheet whose tab is selected a job: it loses the
// selection (the Summary is selected).
func (c *rrCopy) selectedTabs() error {
	for _, info := range c.book.Sheets {
		if info.Path == "" {
			continue
		}
		if _, ok := c.book.Files[info.Path]; !ok {
			return rrFallback()
		}
		if j := c.jobs[info.Path]; j != nil {
			j.selected = true // rewritten anyway: any selection is cleared
			continue
		}
		if tabSelected(c.book, info) {
			c.jobs[info.Path] = &rrSheetJob{Info: info, selected: true}
		}
	}
	return nil
}

// planJobs orders the jobs, merges the marks of one cell, and finds or
// names each marked sheet's relationships, comments and VML parts.
func (c *rrCopy) planJobs() error {
	var err error
	block := 1000
	for _, info := range c.book.Sheets {
		j := c.jobs[info.Path]
		if j == nil || info.Path == "" {
			continue
		}
		c.jobOrder = append(c.jobOrder, j)
		c.skip[info.Path] = true
		if len(j.Marks) == 0 {
			continue
		}
		slices.SortStableFunc(j.Marks, func(a, b rrCellMark) int {
			if a.Row != b.Row {
				return a.Row - b.Row
			}
			return a.Col - b.Col
		})
		// One mark per cell ("b2" and "B2" name the same one).
		marks := j.Marks[:1]
		for _, m := range j.Marks[1:] {
			last := &marks[len(marks)-1]
			if m.Row != last.Row || m.Col != last.Col {
				marks = append(marks, m)
				continue
			}
			n := &rrNote{Fill: last.Note.Fill, lines: slices.Concat(last.Note.lines, m.Note.lines)}
			if m.Note.Fill != templates.PlanFill {
				n.Fill = m.Note.Fill
			}
			last.Note = n
		}
		j.Marks = marks
		j.relsPath = path.Join(path.Dir(info.Path), "_rels", path.Base(info.Path)+".rels")
		if _, ok := c.book.Files[j.relsPath]; ok {
			j.hasRels = true
			if j.rels, err = c.book.Rels(info.Path); err != nil {
				return rrFallback()
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
			if _, ok := c.book.Files[j.commentsPath]; !ok {
				return rrFallback()
			}
			c.skip[j.commentsPath] = true
		} else {
			j.commentsPath = c.newPart("xl/comments%d.xml")
			c.newParts[j.commentsPath] = rrCTComments
			j.commentsRID = rrNewRID(j.rels, "rIdEepipeComments")
		}
		j.block = block
		block += len(j.Marks)/1000 + 1
	}
	return nil
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
func (c *rrCopy) planSummary(r *diff.Reconciliation, src string, changes []rrChange) error {
	own := make([]string, len(c.book.Sheets))
	for i, s := range c.book.Sheets {
		own[i] = s.Name
	}
	name, changesName := freeSheetName(own, SummarySheet), freeSheetName(own, ChangesSheet)
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
	xfBase, err := c.Styles.merge(scratchStyles)
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
	newWBRels, newWB, err := c.workbookParts()
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
			var b []byte
			if b, err = c.contentTypes(); err == nil {
				err = put(name, b)
			}
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
		if len(j.Marks) == 0 {
			continue
		}
		if err := c.writeNotes(put, func(name string) error { return zw.Copy(c.book.Files[name]) }, j); err != nil {
			return err
		}
	}
	if err := put(c.stylePath, c.Styles.bytes()); err != nil {
		return err
	}
	return zw.Close()
}

// workbookParts returns the workbook's relationships with the added
// sheets' (their ids chosen here) and the workbook part rewritten.
func (c *rrCopy) workbookParts() (newWBRels, newWB []byte, err error) {
	wbRels, err := c.readMeta(c.wbRels)
	if err != nil {
		return nil, nil, err
	}
	rels, err := c.book.Rels(c.wbPath)
	if err != nil {
		return nil, nil, rrFallback()
	}
	var addRels strings.Builder
	for i := range c.added {
		a := &c.added[i]
		a.rid = rrNewRID(rels, []string{"rIdEepipeSummary", "rIdEepipeChanges"}[min(i, 1)])
		rels = append(rels, xlsx.Rel{ID: a.rid})
		fmt.Fprintf(&addRels, `<Relationship Id="%s" Type="%s" Target="%s"/>`, rrXMLAttr(a.rid), rrRelSheet, rrXMLAttr(rrRelPath(c.wbPath, a.path)))
	}
	newWBRels, err = rrInsertBefore(wbRels, "</Relationships>", addRels.String())
	if err != nil {
		return nil, nil, err
	}
	wb, err := c.readMeta(c.wbPath)
	if err != nil {
		return nil, nil, err
	}
	newWB, err = c.rewriteWorkbook(wb)
	if err != nil {
		return nil, nil, err
	}
	return newWBRels, newWB, nil
}

// contentTypes returns the content types part with the new parts' (and
// the VML default, which the new notes need).
func (c *rrCopy) contentTypes() ([]byte, error) {
	b, err := c.readMeta(c.ctPath)
	if err != nil {
		return nil, err
	}
	var add strings.Builder
	if !rrHasVMLDefault.Match(b) {
		// New VML drawings are named below, after this part.
		add.WriteString(`<Default Extension="vml" ContentType="` + rrCTVML + `"/>`)
	}
	for _, p := range slices.Sorted(maps.Keys(c.newParts)) {
		fmt.Fprintf(&add, `<Override PartName="/%s" ContentType="%s"/>`, rrXMLAttr(p), c.newParts[p])
	}
	return rrInsertBefore(b, "</Types>", add.String())
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
