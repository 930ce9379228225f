package reports

import (
	"fmt"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// rrColumn is a column of a findings table: its header, its narrowest
// and its widest width in characters (a longer value wraps; 0: rrMaxWidth).
type rrColumn struct {
	Header     string
	Width, Max float64
}

// rrSummaryColumns are the Summary sheet's columns; like the Overview's,
// they avoid the grid's metadata labels so the copy still reads as the
// consultant's workbook. The columns up to the note print (rrSummaryPrinted)
// fitted to one A4 landscape page wide, where their widths, at most 158
// characters, print at about 70% in LibreOffice (11 pt at 7.7 pt), each
// finding whole on its row; the location, a link to the marked cell for
// the screen, does not print (the Changes sheet names each marked cell).
var rrSummaryColumns = []rrColumn{
	{"Finding", 12, 16}, {"Account", 8, 10}, {"Plan no.", 8, 8}, {"Name", 12, 16}, {"Starts", 11, 11},
	{"Year", 5, 5}, {"Financial year", 9, 9}, {"Target", 12, 13}, {"Counter or field", 20, 26},
	{"Workbook value", 10, 10}, {"Service value", 10, 10}, {"Note", 20, 24}, {"Where", 26, 0},
}

// rrSummaryPrinted is how many of rrSummaryColumns print: up to the note.
const rrSummaryPrinted = 12

// rrWriteReconcileSummary fills the Summary sheet: the counts, then one row
// per finding with a link to the annotated cell when it is in this copy.
func rrWriteReconcileSummary(f *excelize.File, sheet string, r *diff.Reconciliation, src *string) error {
	if err := rrWriteReconcileSummaryCells(f, sheet, r, src); err != nil {
		return err
	}
	// excelize leaves the sheet's dimension at A1, and a reader that
	// trusts it (openpyxl's read-only mode) reads no further.
	rows, err := f.GetRows(sheet)
	if err != nil || len(rows) == 0 {
		return err
	}
	cols := 1
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	last, _ := excelize.CoordinatesToCellName(cols, len(rows))
	return f.SetSheetDimension(sheet, "A1:"+last)
}

// rrWriteReconcileSummaryCells writes the Summary sheet's cells.
func rrWriteReconcileSummaryCells(f *excelize.File, sheet string, r *diff.Reconciliation, src *string) error {
	st, err := templates.NewOverviewStyles(f)
	if err != nil {
		return err
	}
	set := func(ref string, v any, style int) {
		f.SetCellValue(sheet, ref, v)
		if style != 0 {
			f.SetCellStyle(sheet, ref, ref, style)
		}
	}
	title := "Reconciliation: the workbook matches the service"
	if !r.InSync {
		title = "Reconciliation: the workbook and the service differ"
	}
	set("A1", title, st.Title)
	sub := fmt.Sprintf("Compared %s UTC. Cells whose value differs from the service are filled orange (changed in the file, or no history), blue when changed on the service since eepipe last wrote them, red when changed in both; each carries a comment with the service's value; plan notes are yellow.",
		r.GeneratedAt.UTC().Format("2006-01-02 15:04"))
	if !r.Complete {
		sub += " INCOMPLETE: " + r.Stopped
	}
	set("A2", sub, st.Note)
	s := r.Summary
	counts := []struct {
		label string
		n     int
	}{
		{"Plans in sync", s.PlansInSync}, {"Plans that differ", s.PlansDiffering},
		{"Plans missing on the service", s.PlansMissingOnServer}, {"Plans only on the service", s.PlansOnlyOnServer},
		{"Plans not compared", s.PlansNotCompared}, {"Plan fields that differ", s.FieldsDiffering},
		{"Targets that differ", s.TargetsDiffering}, {"Counters that differ", s.CountersDiffering},
	}
	for i, c := range counts {
		row := 4 + i
		set(fmt.Sprintf("A%d", row), c.label, st.Text)
		set(fmt.Sprintf("D%d", row), c.n, st.Number)
	}
	header := 4 + len(counts) + 1
	fit := newRRWidths(len(rrSummaryColumns))
	for i, c := range rrSummaryColumns {
		col, _ := excelize.ColumnNumberToName(i + 1)
		f.SetCellStr(sheet, fmt.Sprintf("%s%d", col, header), c.Header)
		fit.bounds(i, c.Width, c.Max)
		if i < rrSummaryPrinted {
			fit.header(header, i, c.Header)
		}
	}
	lastCol, _ := excelize.ColumnNumberToName(len(rrSummaryColumns))
	f.SetCellStyle(sheet, fmt.Sprintf("A%d", header), fmt.Sprintf("%s%d", lastCol, header), st.Header)
	row := header
	for _, x := range rrReconcileRows(r) {
		row++
		vals := rrSummaryFindingValues(x)
		for i, v := range vals {
			col, _ := excelize.ColumnNumberToName(i + 1)
			ref := fmt.Sprintf("%s%d", col, row)
			if v != nil {
				f.SetCellValue(sheet, ref, v)
				if i < rrSummaryPrinted {
					fit.seeAt(row, i, v)
				} else {
					fit.see(i, v) // not printed: on the screen, it runs on
				}
			}
		}
		f.SetCellStyle(sheet, fmt.Sprintf("A%d", row), fmt.Sprintf("%s%d", lastCol, row), st.Text)
		if src != nil && x.loc.Sheet != "" && x.loc.Cell != "" && rrSameSourceFile(x.loc.File, *src) {
			ref := fmt.Sprintf("M%d", row)
			f.SetCellHyperLink(sheet, ref, xlsx.QuoteSheet(x.loc.Sheet)+"!"+x.loc.Cell, "Location")
			f.SetCellStyle(sheet, ref, ref, st.Link)
		}
	}
	if row > header {
		if err := f.AutoFilter(sheet, fmt.Sprintf("A%d:%s%d", header, lastCol, row), nil); err != nil {
			return err
		}
	}
	if err := fit.apply(f, sheet, header+1, row, st.Wrap); err != nil {
		return err
	}
	// The note within the printed columns.
	widths := make([]float64, rrSummaryPrinted)
	for i := range widths {
		widths[i] = fit.width(i)
	}
	if err := templates.WrapNote(f, sheet, 2, widths); err != nil {
		return err
	}
	// One page wide, each finding whole on its row, the header row on
	// every page.
	lastPrinted, _ := excelize.CoordinatesToCellName(rrSummaryPrinted, row)
	if err := templates.SetPrintLayout(f, sheet, templates.PrintSetup{TitleFirst: header, TitleLast: header,
		Area: "A1:" + lastPrinted}); err != nil {
		return err
	}
	return f.SetPanes(sheet, &excelize.Panes{
		Freeze: true, YSplit: header, TopLeftCell: fmt.Sprintf("A%d", header+1), ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: fmt.Sprintf("A%d", header+1), ActiveCell: fmt.Sprintf("A%d", header+1), Pane: "bottomLeft"}},
	})
}

// rrSummaryFindingValues are the cells of one finding's row of the
// Summary, in the order of rrSummaryColumns: the finding (or its class),
// where it is, the workbook's and the service's values, its location and
// the note.
func rrSummaryFindingValues(x rrReconcileRow) []any {
	finding := map[string]string{"plan": string(x.plan.Presence), "field": "field differs", "counter": "counter differs"}[x.kind]
	vals := make([]any, 0, len(rrSummaryColumns))
	vals = append(vals, finding, x.plan.Account, rrNilIfZero(x.plan.PlanID), x.plan.PlanName, x.plan.StartDate)
	if t := x.target; t != nil {
		vals = append(vals, t.YearNumber, t.FinancialYear, t.TargetType)
	} else {
		vals = append(vals, nil, nil, nil)
	}
	const note = 11
	vals = append(vals, x.name, rrNumberOrText(x.workbook), rrNumberOrText(x.server), "", rrLocationText(x.loc))
	if x.kind == "plan" {
		vals[note] = x.plan.Reason
	}
	if x.class != "" && x.class != diff.ClassNoHistory {
		vals[0] = x.class.Words(nil)
		if x.kind == "field" {
			vals[note] = fmt.Sprintf("eepipe last applied %q: %s", x.lastValue, x.class.Words(x.last))
		} else {
			vals[note] = fmt.Sprintf("eepipe last applied %s: %s", x.lastValue, x.class.Words(x.last))
		}
	}
	if x.class == diff.ClassNoHistory {
		vals[note] = "no history: eepipe never applied this " + map[bool]string{true: "field", false: "counter"}[x.kind == "field"]
	}
	return vals
}

// rrWidths fits a report's columns to their values: each column as wide
// as its longest value (in characters, with a margin), no narrower than
// its minimum and no wider than its maximum (rrMaxWidth unless set); a
// longer value wraps.
type rrWidths struct {
	least, longest, most []float64
	texts                []rrText // the text cells seen, for their rows' heights
}

// rrText is a text cell a report's row holds: where and how long.
type rrText struct {
	row, col int // col 0-based
	text     string
	bold     bool
}

// rrMaxWidth is the widest a fitted column gets, in characters: wider
// values wrap within it.
const rrMaxWidth = 70

func newRRWidths(n int) *rrWidths {
	return &rrWidths{least: make([]float64, n), longest: make([]float64, n), most: make([]float64, n)}
}

// min sets column i's minimum width (its header's).
func (w *rrWidths) min(i int, width float64) { w.least[i] = max(w.least[i], width) }

// bounds sets column i's minimum width and its maximum (0: rrMaxWidth).
func (w *rrWidths) bounds(i int, least, most float64) {
	w.min(i, least)
	w.most[i] = most
}

// seeAt takes the value v of column i in row into account: its width,
// and, when it is text, the height of its row if it wraps.
func (w *rrWidths) seeAt(row, i int, v any) {
	w.see(i, v)
	if s, ok := v.(string); ok {
		w.texts = append(w.texts, rrText{row: row, col: i, text: s})
	}
}

// header takes column i's header (bold, wrapped) in row into account:
// the row is made as high as the header's lines.
func (w *rrWidths) header(row, i int, text string) {
	w.texts = append(w.texts, rrText{row: row, col: i, text: text, bold: true})
}

// see takes a value of column i into account.
func (w *rrWidths) see(i int, v any) {
	n := 0
	switch v := v.(type) {
	case string:
		n = utf8.RuneCountInString(v)
	default:
		n = len(fmt.Sprint(v))
	}
	w.longest[i] = max(w.longest[i], float64(n))
}

// wraps reports whether column i has a value longer than it is wide.
func (w *rrWidths) wraps(i int) bool { return w.width(i) < w.longest[i]+2 }

// width returns column i's width.
func (w *rrWidths) width(i int) float64 {
	most := float64(rrMaxWidth)
	if w.most[i] > 0 {
		most = w.most[i]
	}
	return max(w.least[i], min(w.longest[i]+2, most))
}

// apply sets the columns' widths on sheet and, in a column whose longest
// value is wider than the column, gives rows first to last the style wrap;
// a row with a text (seeAt, header) that wraps is made as high as its
// lines (neither Excel nor LibreOffice does so on opening the file).
func (w *rrWidths) apply(f *excelize.File, sheet string, first, last, wrap int) error {
	heights := map[int]float64{}
	for _, t := range w.texts {
		width := w.width(t.col)
		if t.bold {
			width *= 0.9 // bold runs wider
		}
		if float64(utf8.RuneCountInString(t.text))+1 > width {
			heights[t.row] = max(heights[t.row], templates.ParagraphHeight(t.text, width))
		}
	}
	for row, h := range heights {
		if err := f.SetRowHeight(sheet, row, h); err != nil {
			return err
		}
	}
	for i := range w.least {
		col, _ := excelize.ColumnNumberToName(i + 1)
		if err := f.SetColWidth(sheet, col, col, w.width(i)); err != nil {
			return err
		}
		if !w.wraps(i) || last < first {
			continue
		}
		if err := f.SetCellStyle(sheet, fmt.Sprintf("%s%d", col, first), fmt.Sprintf("%s%d", col, last), wrap); err != nil {
			return err
		}
	}
	return nil
}

// ChangesSheet is the sheet of the reconcile report's annotated copy that
// lists every marked cell: where it is, the file's and the service's
// values, the class and the run, and the comment the cell carries, so
// that a printed report holds everything the comments say.
const ChangesSheet = "Changes"

// rrChangesColumns are the Changes sheet's columns and their narrowest
// and widest widths: at most 158 characters in all, printed fitted to one
// A4 landscape page wide (see rrSummaryColumns), each change whole on its
// row.
var rrChangesColumns = []rrColumn{
	{"Sheet", 8, 12}, {"Cell", 6, 6}, {"Plan", 10, 16}, {"Financial year", 9, 9}, {"Target", 10, 13}, {"Counter or field", 16, 26},
	{"File value", 10, 10}, {"Service value", 10, 10}, {"Class", 12, 16}, {"Last applied by eepipe", 12, 14}, {"Note (the cell's comment)", 20, 26},
}

// rrWriteChangesSheet fills sheet with changes, one row each, in the
// order of the findings, the cell linked to the marked cell.
func rrWriteChangesSheet(f *excelize.File, sheet string, changes []rrChange) error {
	st, err := templates.NewOverviewStyles(f)
	if err != nil {
		return err
	}
	fit := newRRWidths(len(rrChangesColumns))
	header := make([]any, len(rrChangesColumns))
	for i, c := range rrChangesColumns {
		header[i] = c.Header
		fit.bounds(i, c.Width, c.Max)
		fit.header(1, i, c.Header)
	}
	if err := f.SetSheetRow(sheet, "A1", &header); err != nil {
		return err
	}
	lastCol, _ := excelize.ColumnNumberToName(len(rrChangesColumns))
	if err := f.SetCellStyle(sheet, "A1", lastCol+"1", st.Header); err != nil {
		return err
	}
	row := 1
	for _, c := range changes {
		row++
		vals := []any{c.sheet, c.cell, c.plan, c.year, c.target, c.what, c.file, c.service, c.class, c.run, c.note}
		for i, v := range vals {
			if v == nil || v == "" {
				vals[i] = nil
				continue
			}
			fit.seeAt(row, i, v)
		}
		ref := fmt.Sprintf("A%d", row)
		if err := f.SetSheetRow(sheet, ref, &vals); err != nil {
			return err
		}
		link := fmt.Sprintf("B%d", row)
		if err := f.SetCellHyperLink(sheet, link, xlsx.QuoteSheet(c.sheet)+"!"+c.cell, "Location"); err != nil {
			return err
		}
	}
	if row > 1 {
		if err := f.SetCellStyle(sheet, "A2", fmt.Sprintf("%s%d", lastCol, row), st.Text); err != nil {
			return err
		}
		if err := f.SetCellStyle(sheet, "B2", fmt.Sprintf("B%d", row), st.Link); err != nil {
			return err
		}
		if err := f.AutoFilter(sheet, fmt.Sprintf("A1:%s%d", lastCol, row), nil); err != nil {
			return err
		}
	}
	if err := fit.apply(f, sheet, 2, row, st.Wrap); err != nil {
		return err
	}
	if err := f.SetSheetDimension(sheet, fmt.Sprintf("A1:%s%d", lastCol, max(row, 1))); err != nil {
		return err
	}
	// One page wide, the header row on every page.
	if err := templates.SetPrintLayout(f, sheet, templates.PrintSetup{TitleFirst: 1, TitleLast: 1}); err != nil {
		return err
	}
	return f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}})
}

func rrNilIfZero(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func rrNumberOrText(s string) any {
	if s == "" {
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

func rrLocationText(l diff.Location) string {
	switch {
	case l.Sheet != "" && l.Cell != "":
		return fmt.Sprintf("%s %s!%s", filepath.Base(l.File), l.Sheet, l.Cell)
	case l.Line > 0 && l.Column > 0:
		return fmt.Sprintf("%s line %d, column %d", filepath.Base(l.File), l.Line, l.Column)
	case l.Line > 0:
		return fmt.Sprintf("%s line %d", filepath.Base(l.File), l.Line)
	case l.File != "":
		return filepath.Base(l.File)
	}
	return ""
}
