package reports

import (
	"fmt"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// rrSummaryColumns are the Summary sheet's columns; like the Overview's,
// they avoid the grid's metadata labels so the copy still reads as the
// consultant's workbook.
var rrSummaryColumns = []struct {
	Header string
	Width  float64
}{
	{"Finding", 18}, {"Account", 12}, {"Plan no.", 9}, {"Name", 30}, {"Starts", 11},
	{"Year", 6}, {"Financial year", 13}, {"Target", 18}, {"Counter or field", 44},
	{"Workbook value", 15}, {"Service value", 15}, {"Where", 26}, {"Note", 60},
}

// rrWriteReconcileSummary fills the Summary sheet: the counts, then one row
// per finding with a link to the annotated cell when it is in this copy.
func rrWriteReconcileSummary(f *excelize.File, sheet string, r *pipeline.Reconciliation, src *string) error {
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
func rrWriteReconcileSummaryCells(f *excelize.File, sheet string, r *pipeline.Reconciliation, src *string) error {
	st, err := xlsx.NewOverviewStyles(f)
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
		fit.min(i, c.Width)
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
				fit.see(i, v)
			}
		}
		f.SetCellStyle(sheet, fmt.Sprintf("A%d", row), fmt.Sprintf("%s%d", lastCol, row), st.Text)
		if src != nil && x.loc.Sheet != "" && x.loc.Cell != "" && rrSameSourceFile(x.loc.File, *src) {
			ref := fmt.Sprintf("L%d", row)
			f.SetCellHyperLink(sheet, ref, xlsx.QuoteSheet(x.loc.Sheet)+"!"+x.loc.Cell, "Location")
			f.SetCellStyle(sheet, ref, ref, st.Link)
		}
	}
	if row > header {
		if err := f.AutoFilter(sheet, fmt.Sprintf("A%d:%s%d", header, lastCol, row), nil); err != nil {
			return err
		}
	}
	if err := fit.apply(f, sheet, header+1, row, st.Text); err != nil {
		return err
	}
	// The note within the columns repeated on every printed page.
	widths := make([]float64, summaryTitleCols)
	for i := range widths {
		widths[i] = fit.width(i)
	}
	if err := xlsx.WrapNote(f, sheet, 2, widths); err != nil {
		return err
	}
	// Too wide for one page at a readable size: across pages, each
	// repeating the header row and the columns that name the plan.
	if err := templates.SetPrintLayout(f, sheet, templates.PrintSetup{TitleFirst: header, TitleLast: header,
		Scale: templates.WideScale, TitleCols: summaryTitleCols}); err != nil {
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
	vals = append(vals, x.name, rrNumberOrText(x.workbook), rrNumberOrText(x.server), rrLocationText(x.loc), "")
	if x.kind == "plan" {
		vals[12] = x.plan.Reason
	}
	if x.class != "" && x.class != pipeline.ClassNoHistory {
		vals[0] = x.class.Words(nil)
		if x.kind == "field" {
			vals[12] = fmt.Sprintf("eepipe last applied %q: %s", x.lastValue, x.class.Words(x.last))
		} else {
			vals[12] = fmt.Sprintf("eepipe last applied %s: %s", x.lastValue, x.class.Words(x.last))
		}
	}
	if x.class == pipeline.ClassNoHistory {
		vals[12] = "no history: eepipe never applied this " + map[bool]string{true: "field", false: "counter"}[x.kind == "field"]
	}
	return vals
}

// summaryTitleCols are the Summary's columns repeated on every printed
// page: finding, account, plan number and name.
const summaryTitleCols = 4

// rrWidths fits a report's columns to their values: each column as wide
// as its longest value (in characters, with a margin), no narrower than
// its minimum and no wider than rrMaxWidth; a longer value wraps.
type rrWidths struct {
	least, longest []float64
}

// rrMaxWidth is the widest a fitted column gets, in characters: wider
// values wrap within it.
const rrMaxWidth = 70

func newRRWidths(n int) *rrWidths {
	return &rrWidths{least: make([]float64, n), longest: make([]float64, n)}
}

// min sets column i's minimum width (its header's).
func (w *rrWidths) min(i int, width float64) { w.least[i] = max(w.least[i], width) }

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
	return max(w.least[i], min(w.longest[i]+2, rrMaxWidth))
}

// apply sets the columns' widths on sheet and, in a column whose longest
// value is wider than the column, wraps rows first to last (styled text).
func (w *rrWidths) apply(f *excelize.File, sheet string, first, last, text int) error {
	wrap := 0
	for i := range w.least {
		col, _ := excelize.ColumnNumberToName(i + 1)
		if err := f.SetColWidth(sheet, col, col, w.width(i)); err != nil {
			return err
		}
		if !w.wraps(i) || last < first {
			continue
		}
		if wrap == 0 {
			st, err := f.GetStyle(text)
			if err != nil {
				return err
			}
			st.Alignment = &excelize.Alignment{WrapText: true, Vertical: "top"}
			if wrap, err = f.NewStyle(st); err != nil {
				return err
			}
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

// rrChangesColumns are the Changes sheet's columns and minimum widths.
var rrChangesColumns = []struct {
	Header string
	Width  float64
}{
	{"Sheet", 10}, {"Cell", 6}, {"Plan", 12}, {"Financial year", 9}, {"Target", 10}, {"Counter or field", 16},
	{"File value", 10}, {"Service value", 10}, {"Class", 12}, {"Last applied by eepipe", 14}, {"Note (the cell's comment)", 30},
}

// rrWriteChangesSheet fills sheet with changes, one row each, in the
// order of the findings, the cell linked to the marked cell.
func rrWriteChangesSheet(f *excelize.File, sheet string, changes []rrChange) error {
	st, err := xlsx.NewOverviewStyles(f)
	if err != nil {
		return err
	}
	fit := newRRWidths(len(rrChangesColumns))
	header := make([]any, len(rrChangesColumns))
	for i, c := range rrChangesColumns {
		header[i] = c.Header
		fit.min(i, c.Width)
	}
	if err := f.SetSheetRow(sheet, "A1", &header); err != nil {
		return err
	}
	lastCol, _ := excelize.ColumnNumberToName(len(rrChangesColumns))
	if err := f.SetCellStyle(sheet, "A1", lastCol+"1", st.Header); err != nil {
		return err
	}
	if err := f.SetRowHeight(sheet, 1, 30); err != nil { // two lines of a wrapped header
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
			fit.see(i, v)
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
	if err := fit.apply(f, sheet, 2, row, st.Text); err != nil {
		return err
	}
	if err := f.SetSheetDimension(sheet, fmt.Sprintf("A1:%s%d", lastCol, max(row, 1))); err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, sheet, templates.WidePrint(3)); err != nil { // sheet, cell, plan on every page
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

func rrLocationText(l pipeline.Location) string {
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
