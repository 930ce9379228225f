package templates

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// WritePlanSheetXML writes the worksheet part (SpreadsheetML) of the grid
// plan sheet of AddPlanSheet to w, in one pass and without excelize: the
// same cells, styles (ids registered by NewStyles on the workbook the part
// goes into), merged cells, column widths, frozen panes, validations, page
// setup (planPrint: A4 landscape, one page wide, the footer) and a page
// break before each financial year and each chart (ps.Charts). The sheet's print titles are a name of
// the workbook (PlanPrintTitles). drawingRID, when not "", is the
// relationship id (in the sheet's .rels part) of the sheet's drawing.
//
// It is how workbooks of thousands of plan sheets are written: excelize
// keeps every sheet it writes in memory until the whole workbook is saved.
func WritePlanSheetXML(w io.Writer, ps PlanSheet, cat *pipeline.Catalog, st *Styles, drawingRID string) error {
	l, err := layoutPlanSheet(ps, cat, st)
	if err != nil {
		return err
	}
	bw := planSheetBuffers.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		planSheetBuffers.Put(bw)
	}()
	x := &SheetXML{w: bw}
	x.raw(xml.Header[:len(xml.Header)-1] + "\n")
	x.raw(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`)
	x.raw(`<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>`)
	lastRow, lastCol := len(l.cells.rows), 0
	for _, r := range l.cells.rows {
		lastCol = max(lastCol, len(r))
	}
	if lastRow > 0 && lastCol > 0 {
		x.raw(`<dimension ref="A1:` + xlsx.CellName(lastCol, lastRow) + `"/>`)
	}
	// Panes: the label column frozen.
	p := l.panes
	x.raw(`<sheetViews><sheetView workbookViewId="0"><pane xSplit="` + strconv.Itoa(p.XSplit) + `" topLeftCell="` + p.TopLeftCell +
		`" activePane="` + p.ActivePane + `" state="frozen"/>`)
	for _, s := range p.Selection {
		x.raw(`<selection pane="` + s.Pane + `" activeCell="` + s.ActiveCell + `" sqref="` + s.SQRef + `"/>`)
	}
	x.raw(`</sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>`)
	if len(l.widths) > 0 {
		x.raw(`<cols>`)
		for _, cw := range l.widths {
			x.raw(`<col min="` + strconv.Itoa(cw.first) + `" max="` + strconv.Itoa(cw.last) + `" width="` +
				strconv.FormatFloat(cw.width, 'f', -1, 64) + `" customWidth="1"/>`)
		}
		x.raw(`</cols>`)
	}
	x.raw(`<sheetData>`)
	for i, r := range l.cells.rows {
		if len(r) == 0 {
			continue
		}
		if h, ok := l.cells.heights[i+1]; ok {
			x.startRowHeight(i+1, h)
		} else {
			x.StartRow(i + 1)
		}
		for j, c := range r {
			if c == nil {
				continue
			}
			if err := x.Cell(j+1, i+1, c.StyleID, c.Value); err != nil {
				return err
			}
		}
		x.EndRow()
	}
	x.raw(`</sheetData>`)
	if len(l.cells.merges) > 0 {
		x.raw(`<mergeCells count="` + strconv.Itoa(len(l.cells.merges)) + `">`)
		for _, m := range l.cells.merges {
			x.raw(`<mergeCell ref="` + m[0] + ":" + m[1] + `"/>`)
		}
		x.raw(`</mergeCells>`)
	}
	if len(l.validations) > 0 {
		x.raw(`<dataValidations count="` + strconv.Itoa(len(l.validations)) + `">`)
		for _, dv := range l.validations {
			x.validation(dv)
		}
		x.raw(`</dataValidations>`)
	}
	x.raw(PrintSetupXML(planPrint))
	if len(l.breaks) > 0 {
		n := strconv.Itoa(len(l.breaks))
		x.raw(`<rowBreaks count="` + n + `" manualBreakCount="` + n + `">`)
		for _, b := range l.breaks {
			x.raw(`<brk id="` + strconv.Itoa(b-1) + `" max="16383" man="1"/>`)
		}
		x.raw(`</rowBreaks>`)
	}
	if drawingRID != "" {
		x.raw(`<drawing r:id="`)
		x.text(drawingRID)
		x.raw(`"/>`)
	}
	x.raw(`</worksheet>`)
	return x.Flush()
}

// planSheetBuffers are WritePlanSheetXML's output buffers, reused from
// sheet to sheet (an export writes thousands).
var planSheetBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

// PrintSetupXML returns the page margins, page setup and footer elements
// of a worksheet part that SetPrintLayout gives a sheet (without the
// fitToPage sheet property, the column breaks and the print titles name).
func PrintSetupXML(p PrintSetup) string {
	orient := "landscape"
	if p.Portrait {
		orient = "portrait"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	scale := ""
	if p.Scale > 0 {
		scale = `" scale="` + strconv.Itoa(p.Scale)
	}
	return `<pageMargins left="` + f(printSide) + `" right="` + f(printSide) + `" top="` + f(printTop) + `" bottom="` + f(printTop) +
		`" header="` + f(printHF) + `" footer="` + f(printHF) + `"/>` +
		`<pageSetup paperSize="` + strconv.Itoa(printA4) + `" fitToWidth="` + strconv.Itoa(printOneWid) + `" fitToHeight="` + strconv.Itoa(printAnyHi) +
		scale + `" orientation="` + orient + `"/>` +
		`<headerFooter><oddFooter>&amp;L&amp;A&amp;RPage &amp;P of &amp;N</oddFooter></headerFooter>`
}

// PlanPrintTitles returns what the print titles name (_xlnm.Print_Titles,
// local to the sheet) of a plan sheet written by WritePlanSheetXML refers
// to: its title row, on every printed page.
func PlanPrintTitles(sheet string) string {
	return fmt.Sprintf("%s!$%d:$%d", xlsx.QuoteSheet(sheet), planPrint.TitleFirst, max(planPrint.TitleLast, planPrint.TitleFirst))
}

// PlanColumnWidths returns the widths of the columns of a plan sheet of
// the catalog (index: column - 1) in excelize's character units, up to
// the last column given a width; 0 = the default width.
func PlanColumnWidths(cat *pipeline.Catalog) []float64 {
	l, err := layoutPlanSheet(PlanSheet{}, cat, &Styles{})
	if err != nil {
		return nil
	}
	var out []float64
	for _, w := range l.widths {
		for len(out) < w.last {
			out = append(out, 0)
		}
		for c := w.first; c <= w.last; c++ {
			out[c-1] = w.width
		}
	}
	return out
}

// SheetXML writes the rows and cells of a worksheet part as excelize's
// StreamWriter writes them (inline strings, numbers, dates as serial
// numbers), for parts written without excelize.
type SheetXML struct {
	w   *bufio.Writer
	err error
	buf []byte
}

// NewSheetXML returns a writer of worksheet XML to w; call Flush at the end.
func NewSheetXML(w io.Writer) *SheetXML { return &SheetXML{w: bufio.NewWriterSize(w, 32<<10)} }

// Raw writes s as it is (markup).
func (x *SheetXML) Raw(s string) { x.raw(s) }

func (x *SheetXML) raw(s string) {
	if x.err == nil {
		_, x.err = x.w.WriteString(s)
	}
}

// text writes s escaped for XML text or an attribute value.
func (x *SheetXML) text(s string) {
	if x.err == nil {
		x.err = xml.EscapeText(x.w, []byte(s))
	}
}

// StartRow opens row r (1-based).
func (x *SheetXML) StartRow(r int) {
	x.raw(`<row r="`)
	x.buf = strconv.AppendInt(x.buf[:0], int64(r), 10)
	x.raw(string(x.buf))
	x.raw(`">`)
}

// startRowHeight opens row r (1-based) h points high.
func (x *SheetXML) startRowHeight(r int, h float64) {
	x.raw(`<row r="` + strconv.Itoa(r) + `" ht="` + strconv.FormatFloat(h, 'f', -1, 64) + `" customHeight="1">`)
}

// EndRow closes the row.
func (x *SheetXML) EndRow() { x.raw(`</row>`) }

// Cell writes the cell at col, row with style id style (0 = none) and
// value v: nil (a styled empty cell), a string (inline), an integer, a
// float64, or a time.Time (its day's serial number).
func (x *SheetXML) Cell(col, row, style int, v any) error {
	b := append(x.buf[:0], `<c r="`...)
	b = xlsx.AppendCellRef(b, col, row)
	b = append(b, '"')
	if style != 0 {
		b = append(b, ` s="`...)
		b = strconv.AppendInt(b, int64(style), 10)
		b = append(b, '"')
	}
	switch v := v.(type) {
	case nil:
		b = append(b, `/>`...)
	case string:
		s, preserve := inlineText(v)
		b = append(b, ` t="inlineStr"><is><t`...)
		if preserve {
			b = append(b, ` xml:space="preserve"`...)
		}
		b = append(b, '>')
		b = append(b, s...)
		b = append(b, `</t></is></c>`...)
	case int64:
		b = append(b, `><v>`...)
		b = strconv.AppendInt(b, v, 10)
		b = append(b, `</v></c>`...)
	case int:
		b = append(b, `><v>`...)
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, `</v></c>`...)
	case float64:
		b = append(b, `><v>`...)
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
		b = append(b, `</v></c>`...)
	case time.Time:
		b = append(b, `><v>`...)
		b = strconv.AppendFloat(b, xlsx.ExcelSerial(v, false), 'f', -1, 64)
		b = append(b, `</v></c>`...)
	default:
		return fmt.Errorf("cell %s: cannot write a %T", xlsx.CellName(col, row), v)
	}
	x.buf = b
	if x.err == nil {
		_, x.err = x.w.Write(b)
	}
	return x.err
}

// Flush writes what is buffered and returns the first error.
func (x *SheetXML) Flush() error {
	if x.err != nil {
		return x.err
	}
	return x.w.Flush()
}

// validation writes one dataValidation element.
func (x *SheetXML) validation(dv *excelize.DataValidation) {
	attr := func(name, v string) {
		if v != "" {
			x.raw(` ` + name + `="`)
			x.text(v)
			x.raw(`"`)
		}
	}
	boolAttr := func(name string, v bool) {
		if v {
			x.raw(` ` + name + `="1"`)
		}
	}
	x.raw(`<dataValidation`)
	attr("type", dv.Type)
	if dv.ErrorStyle != nil {
		attr("errorStyle", *dv.ErrorStyle)
	}
	attr("operator", dv.Operator)
	boolAttr("allowBlank", dv.AllowBlank)
	boolAttr("showInputMessage", dv.ShowInputMessage)
	boolAttr("showErrorMessage", dv.ShowErrorMessage)
	if dv.ErrorTitle != nil {
		attr("errorTitle", *dv.ErrorTitle)
	}
	if dv.Error != nil {
		attr("error", *dv.Error)
	}
	if dv.PromptTitle != nil {
		attr("promptTitle", *dv.PromptTitle)
	}
	if dv.Prompt != nil {
		attr("prompt", *dv.Prompt)
	}
	attr("sqref", dv.Sqref)
	x.raw(`>`)
	if dv.Formula1 != "" {
		x.raw(`<formula1>`)
		x.text(dv.Formula1)
		x.raw(`</formula1>`)
	}
	if dv.Formula2 != "" {
		x.raw(`<formula2>`)
		x.text(dv.Formula2)
		x.raw(`</formula2>`)
	}
	x.raw(`</dataValidation>`)
}

// bstrEscape finds what Office would read as an escaped character
// (_xHHHH_) in a cell's text.
var bstrEscape = regexp.MustCompile(`_x[a-fA-F\d]{4}_`)

// inlineText returns s as the text of an inline string the way Excel
// reads it: at most the 32,767 UTF-16 units a cell holds, XML-escaped
// (newlines kept), a literal _xHHHH_ escaped as _x005F_xHHHH_, a character
// XML cannot hold (a control character other than tab, newline and
// carriage return, U+FFFE, U+FFFF) and a carriage return (which
// LibreOffice drops on reading) written as its _xHHHH_ escape, as Excel
// writes them (XML escaping alone would turn the first into U+FFFD, and a
// re-import would then change the value), and whether leading or trailing white space needs
// xml:space="preserve".
func inlineText(s string) (string, bool) {
	if len(s) > excelize.TotalCellChars && len(utf16.Encode([]rune(s))) > excelize.TotalCellChars {
		u := utf16.Encode([]rune(s))[:excelize.TotalCellChars]
		s = string(utf16.Decode(u))
	}
	preserve := false
	if s != "" {
		for _, c := range []byte{9, 10, 13, 32} {
			if s[0] == c || s[len(s)-1] == c {
				preserve = true
				break
			}
		}
	}
	if !strings.ContainsAny(s, "<>&'\"\r\t\n_") && utf8.ValidString(s) && !hasControl(s) {
		return s, preserve
	}
	if strings.Contains(s, "_x") {
		s = bstrEscape.ReplaceAllStringFunc(s, func(m string) string { return "_x005F" + m })
	}
	if hasControl(s) {
		var e strings.Builder
		for _, r := range s {
			if r != '\t' && r != '\n' && (r < 0x20 || r == 0xFFFE || r == 0xFFFF) {
				fmt.Fprintf(&e, "_x%04X_", r)
				continue
			}
			e.WriteRune(r)
		}
		s = e.String()
	}
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return strings.ReplaceAll(b.String(), "&#xA;", "\n"), preserve
}

// hasControl says whether s has a character XML cannot hold as it is
// (xml.EscapeText replaces them).
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) {
			return true
		}
	}
	return false
}
