package reports

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// AnnotateSheet is the sheet AnnotateWorkbook adds with every problem of
// the workbook, each linked to its cell.
const AnnotateSheet = "eepipe problems"

// AnnotateWorkbook writes a copy of the workbook src to dst with each
// problem of src marked in place: the cell filled red (error) or amber
// (warning), keeping its number format, and a comment holding the messages;
// a problem about a whole row marks the row's first cell, and one about a
// range of cells (a grid sheet's company block, "A6:B8") fills each of its
// cells and comments on the first. A sheet listing
// every problem of the file, with links to the cells, is added at the end.
// It returns how many cells were marked.
func AnnotateWorkbook(src, dst string, ps pipeline.Problems) (marked int, err error) {
	limit, err := annotateCheckSize(src)
	if err != nil {
		return 0, fmt.Errorf("annotate %s: %w", src, err)
	}
	f, err := annotateOpen(src, limit)
	if err != nil {
		return 0, fmt.Errorf("annotate %s: %s", src, xlsx.ExcelizeError(err))
	}
	defer f.Close()

	notes, order, mine := annotateNotes(f, src, ps)

	styles := map[[2]int]int{} // (old style, severity) -> new style
	for _, s := range order {
		n := notes[s]
		old, err := f.GetCellStyle(s.sheet, s.cell)
		if err != nil {
			continue
		}
		id, ok := styles[[2]int{old, int(n.sev)}]
		if !ok {
			st := xlsx.ReusableStyle(f, old)
			color := templates.WarnFill
			if n.sev == pipeline.Error {
				color = templates.BadFill
			}
			st.Fill = templates.SolidFill(color)
			if id, err = annotateNewStyle(f, st); err != nil {
				return marked, fmt.Errorf("annotate %s: %w", src, err)
			}
			styles[[2]int{old, int(n.sev)}] = id
		}
		if err := f.SetCellStyle(s.sheet, s.cell, s.cell, id); err != nil {
			continue
		}
		if len(n.msgs) == 0 {
			marked++
			continue // marked by a range whose message is on its first cell
		}
		text := strings.Join(n.msgs, "\n")
		if existing := annotateCommentAt(f, s.sheet, s.cell); existing != "" {
			text = existing + "\n\n" + text
			_ = f.DeleteComment(s.sheet, s.cell)
		}
		lines := strings.Count(text, "\n") + 1 + len(text)/40
		if err := f.AddComment(s.sheet, excelize.Comment{
			Cell: s.cell, Author: "eepipe",
			Paragraph: []excelize.RichTextRun{
				{Text: "eepipe:\n", Font: &excelize.Font{Bold: true}},
				{Text: text},
			},
			Width: 360, Height: uint(min(20*lines+20, 600)),
		}); err != nil {
			return marked, fmt.Errorf("annotate %s: %w", src, err)
		}
		marked++
	}
	if err := annotateProblemSheet(f, mine); err != nil {
		return marked, fmt.Errorf("annotate %s: %w", src, err)
	}
	err = xlsx.WriteFileAtomic(dst, func(w io.Writer) error { return f.Write(w) })
	return marked, err
}

// annotateSpot is a cell of the workbook annotated.
type annotateSpot struct{ sheet, cell string }

// annotateNote is what a cell's note says: the worst severity of its
// problems and their messages.
type annotateNote struct {
	sev  pipeline.Severity
	msgs []string
}

// annotateNotes gathers the problems of src into notes, by cell in the
// order first met (a range marks each of its cells, its message on the
// first), and returns every problem of src (mine) for the problem sheet.
func annotateNotes(f *excelize.File, src string, ps pipeline.Problems) (notes map[annotateSpot]*annotateNote, order []annotateSpot, mine pipeline.Problems) {
	notes = map[annotateSpot]*annotateNote{}
	for _, p := range ps {
		if !annotateSameFile(p.Origin.File, src) {
			continue
		}
		mine = append(mine, p)
		o := p.Origin
		if o.Sheet == "" {
			continue
		}
		if idx, err := f.GetSheetIndex(o.Sheet); err != nil || idx < 0 {
			continue
		}
		cell := o.Cell
		if cell == "" && o.Row > 0 {
			cell, _ = excelize.CoordinatesToCellName(1, o.Row)
		}
		if cell == "" {
			continue
		}
		for i, c := range annotateCells(cell) {
			s := annotateSpot{o.Sheet, c}
			n := notes[s]
			if n == nil {
				n = &annotateNote{}
				notes[s] = n
				order = append(order, s)
			}
			n.sev = max(n.sev, p.Severity)
			if i == 0 { // a range's message goes on its first cell
				n.msgs = append(n.msgs, annotationText(p))
			}
		}
	}
	return notes, order, mine
}

// annotateMaxRange bounds the cells one problem's range marks.
const annotateMaxRange = 64

// annotateCells lists the cells a problem's cell reference names: the cell
// itself, or each cell of a range ("A6:B8", the first one first) of at
// most annotateMaxRange cells; a larger or unreadable range gives its
// first cell only.
func annotateCells(ref string) []string {
	from, to, isRange := strings.Cut(ref, ":")
	if !isRange {
		return []string{ref}
	}
	c0, r0, err0 := excelize.CellNameToCoordinates(from)
	c1, r1, err1 := excelize.CellNameToCoordinates(to)
	if err0 != nil || err1 != nil || c1 < c0 || r1 < r0 || (c1-c0+1)*(r1-r0+1) > annotateMaxRange {
		return []string{from}
	}
	var cells []string
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			name, _ := excelize.CoordinatesToCellName(c, r)
			cells = append(cells, name)
		}
	}
	return cells
}

func annotationText(p pipeline.Problem) string {
	s := p.Severity.String() + ": " + p.Message
	if len(p.Suggestions) > 0 {
		s += " (did you mean " + strings.Join(p.Suggestions, " or ") + "?)"
	}
	return s
}

func annotateCommentAt(f *excelize.File, sheet, cell string) string {
	comments, err := f.GetComments(sheet)
	if err != nil {
		return ""
	}
	for _, c := range comments {
		if strings.EqualFold(c.Cell, cell) {
			if c.Text != "" {
				return c.Text
			}
			var b strings.Builder
			for _, r := range c.Paragraph {
				b.WriteString(r.Text)
			}
			return b.String()
		}
	}
	return ""
}

func annotateSameFile(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// annotateProblemSheet adds (or replaces) the problem list sheet.
func annotateProblemSheet(f *excelize.File, ps pipeline.Problems) error {
	if idx, err := f.GetSheetIndex(AnnotateSheet); err == nil && idx >= 0 {
		if err := f.DeleteSheet(AnnotateSheet); err != nil {
			return err
		}
	}
	if _, err := f.NewSheet(AnnotateSheet); err != nil {
		return err
	}
	bold, err := annotateNewStyle(f, &excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	link, err := annotateNewStyle(f, &excelize.Style{Font: &excelize.Font{Color: templates.ProblemLinkColor, Underline: "single"}})
	if err != nil {
		return err
	}
	head := []any{"Severity", "Sheet", "Cell", "Row / line", "Column", "Value", "Message"}
	if err := f.SetSheetRow(AnnotateSheet, "A1", &head); err != nil {
		return err
	}
	if err := f.SetCellStyle(AnnotateSheet, "A1", "G1", bold); err != nil {
		return err
	}
	sorted := append(pipeline.Problems(nil), ps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Severity > sorted[j].Severity })
	for i, p := range sorted {
		r := i + 2
		msg := p.Message
		if len(p.Suggestions) > 0 {
			msg += " (did you mean " + strings.Join(p.Suggestions, " or ") + "?)"
		}
		row := []any{p.Severity.String(), p.Origin.Sheet, p.Origin.Cell, reportBlankZero(p.Origin.Row), p.Origin.Header, pipeline.Excerpt(p.Value), msg}
		ref, _ := excelize.CoordinatesToCellName(1, r)
		if err := f.SetSheetRow(AnnotateSheet, ref, &row); err != nil {
			return err
		}
		if p.Origin.Sheet != "" && p.Origin.Cell != "" {
			cref, _ := excelize.CoordinatesToCellName(3, r)
			target := fmt.Sprintf("'%s'!%s", strings.ReplaceAll(p.Origin.Sheet, "'", "''"), p.Origin.Cell)
			if err := f.SetCellHyperLink(AnnotateSheet, cref, target, "Location"); err == nil {
				_ = f.SetCellStyle(AnnotateSheet, cref, cref, link)
			}
		}
	}
	for col, w := range map[string]float64{"A": 10, "B": 14, "C": 8, "D": 10, "E": 36, "F": 20, "G": 100} {
		if err := f.SetColWidth(AnnotateSheet, col, col, w); err != nil {
			return err
		}
	}
	if err := templates.SetPrintLayout(f, AnnotateSheet, templates.WidePrint(3)); err != nil { // severity, sheet, cell on every page
		return err
	}
	if err := f.SetPanes(AnnotateSheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	// The copy opens on its problems: the list links to each marked cell.
	if idx, err := f.GetSheetIndex(AnnotateSheet); err == nil && idx >= 0 {
		f.SetActiveSheet(idx)
	}
	return nil
}

// annotateMaxUncompressed bounds a workbook annotated: excelize reads it
// whole into memory.
const annotateMaxUncompressed = 256 << 20

// annotateCheckSize checks, before excelize opens src, that it is a
// regular file whose zip archive is sound and unpacks to at most
// annotateMaxUncompressed; it returns the limit to give excelize.
func annotateCheckSize(src string) (int64, error) {
	st, err := os.Stat(src)
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%w: %s", ErrNotAnnotatable, xlsx.NotRegular(st.Mode()))
	}
	file, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	book, err := xlsx.Open(file, st.Size(), xlsx.Limits{MaxUncompressed: annotateMaxUncompressed})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNotAnnotatable, err)
	}
	// excelize parses the sheets it marks: each is scanned first within
	// the readers' bounds, so that an oversized row or a damaged sheet is
	// refused rather than parsed.
	for _, info := range book.Sheets {
		if info.Path == "" {
			continue
		}
		// excelize holds each row it touches densely, up to its last
		// cell: rows of one cell in column XFD take gigabytes.
		span := 0
		if err := book.ScanSheet(info, func(_ int, row []xlsx.RawCell) bool {
			if n := len(row); n > 0 {
				span += row[n-1].Col
			}
			return span <= grid.MaxTextSlots
		}); err != nil {
			return 0, fmt.Errorf("%w: sheet %s: %w", ErrNotAnnotatable, info.Name, err)
		}
		if span > grid.MaxTextSlots {
			return 0, fmt.Errorf("%w: sheet %s: the file is oversized or damaged: its rows spread over more than %d cells", ErrNotAnnotatable, info.Name, grid.MaxTextSlots)
		}
	}
	total, _ := book.PlausibleSize()
	return total + 1<<20, nil
}

// ErrNotAnnotatable is the class of AnnotateWorkbook's errors for an input
// that is not annotated because it cannot be read safely (oversized,
// damaged, not a regular file): errors.Is(err, ErrNotAnnotatable).
var ErrNotAnnotatable = errors.New("the workbook cannot be annotated")

// annotateNewStyle is f.NewStyle for a workbook that may lack parts of a
// style sheet: excelize v2.11.0 dereferences the style sheet's fill and
// border lists, which a workbook without xl/styles.xml (valid, and
// written by hand-made tools) does not have. Such a workbook is not
// annotated (ErrNotAnnotatable), rather than ending the run as a crash.
func annotateNewStyle(f *excelize.File, st *excelize.Style) (id int, err error) {
	defer func() {
		if r := recover(); r != nil {
			id, err = 0, fmt.Errorf("%w: the workbook's style sheet (xl/styles.xml) is missing or incomplete", ErrNotAnnotatable)
		}
	}()
	return f.NewStyle(st)
}

// annotateOpen opens the workbook at src to write a marked copy of it,
// within limit, with a minimal style sheet when it has none.
func annotateOpen(src string, limit int64) (*excelize.File, error) {
	opts := excelize.Options{UnzipSizeLimit: limit, UnzipXMLSizeLimit: limit}
	if styled, ok := annotateWithStyleSheet(src); ok {
		return excelize.OpenReader(bytes.NewReader(styled), opts)
	}
	return excelize.OpenFile(src, opts)
}

// annotateMinimalStyles is the style sheet given to a workbook that has
// none (the part is optional): one font, the two fills every style sheet
// starts with, one border, one cell format.
const annotateMinimalStyles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`

// annotateWithStyleSheet returns a copy of the workbook at src with a
// minimal style sheet (part, content type and relationship) when it has
// none, and false when it has one or is not a zip archive. The other
// parts are copied still compressed. excelize v2.11.0 cannot add a style
// to a workbook without a style sheet (it dereferences its missing fill
// and border lists).
func annotateWithStyleSheet(src string) ([]byte, bool) {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return nil, false
	}
	defer zr.Close()
	for _, e := range zr.File {
		if e.Name == "xl/styles.xml" {
			return nil, false
		}
	}
	readSmall := func(e *zip.File) ([]byte, bool) {
		if e.UncompressedSize64 > xlsx.MaxMetaPart {
			return nil, false
		}
		rc, err := e.Open()
		if err != nil {
			return nil, false
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, xlsx.MaxMetaPart))
		return b, err == nil
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range zr.File {
		var patched []byte
		switch e.Name {
		case "[Content_Types].xml":
			b, ok := readSmall(e)
			if !ok {
				return nil, false
			}
			patched = bytes.Replace(b, []byte("</Types>"), []byte(`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`), 1)
		case "xl/_rels/workbook.xml.rels":
			b, ok := readSmall(e)
			if !ok {
				return nil, false
			}
			patched = bytes.Replace(b, []byte("</Relationships>"), []byte(`<Relationship Id="rIdEepipeStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`), 1)
		}
		if patched != nil {
			w, err := zw.Create(e.Name)
			if err != nil {
				return nil, false
			}
			if _, err := w.Write(patched); err != nil {
				return nil, false
			}
			continue
		}
		if err := zw.Copy(e); err != nil {
			return nil, false
		}
	}
	w, err := zw.Create("xl/styles.xml")
	if err != nil {
		return nil, false
	}
	if _, err := io.WriteString(w, annotateMinimalStyles); err != nil {
		return nil, false
	}
	if err := zw.Close(); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}
