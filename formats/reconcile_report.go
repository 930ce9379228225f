package formats

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// Colours of the annotated reconciliation copy.
const (
	DiffFillColor = "F4B183" // a counter whose workbook value differs from the service's
	PlanFillColor = "FFE699" // a plan-level note: missing on the server, metadata differs, not compared
	// ServiceFillColor marks a counter changed on the service since eepipe
	// last wrote it (the workbook still holds what eepipe wrote), and
	// ConflictFillColor one changed in both; DiffFillColor is then a
	// counter changed in the file, or without history.
	ServiceFillColor  = "9DC3E6"
	ConflictFillColor = "FF7C80"
)

// SummarySheet is the name of the sheet the annotated copy adds, unless the
// workbook already has a sheet of that name.
const SummarySheet = "Summary"

// commentAuthor signs the comments of the annotated copy.
const commentAuthor = "eepipe"

// WriteReconcileJSON writes the reconciliation as indented JSON (schema
// pipeline.ReconcileSchema, documented in docs/export-and-reconcile.md).
func WriteReconcileJSON(path string, r *pipeline.Reconciliation) error {
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// ReconcileCSVHeader is the header of the CSV reconciliation report: one
// row per differing counter, per differing plan field, and per plan that is
// missing on the server, only on the server or not compared.
var ReconcileCSVHeader = []string{
	"presence", "in_sync", "account", "company_id", "plan_id", "plan_name", "start_date",
	"kind", "year_number", "financial_year", "target_type", "milestone_id", "target_id",
	"name", "workbook_value", "server_value", "file", "sheet", "cell", "line", "column", "reason",
	"class", "last_applied_value", "last_applied_run", "last_applied_at",
}

// WriteReconcileCSV writes the reconciliation as a CSV table with
// ReconcileCSVHeader. Plans in sync get no row.
func WriteReconcileCSV(path string, r *pipeline.Reconciliation) error {
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		cw := table.NewCSVWriter(w)
		if err := cw.Write(ReconcileCSVHeader); err != nil {
			return err
		}
		for _, row := range rrReconcileRows(r) {
			if err := cw.Write(row.csv()); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// rrReconcileRow is one line of the CSV report and of the Summary sheet.
type rrReconcileRow struct {
	plan     *pipeline.ReconciledPlan
	kind     string // plan, field, counter
	target   *pipeline.TargetDifference
	name     string
	workbook string
	server   string
	loc      pipeline.Location
	class    pipeline.ChangeClass // counters and fields: the three-way classification
	last     *pipeline.LastWrite
	// lastValue is the value last applied (a counter's number, a field's
	// text); last names its run.
	lastValue string
}

func (r rrReconcileRow) csv() []string {
	p := r.plan
	out := []string{
		string(p.Presence), strconv.FormatBool(p.InSync), p.Account, p.CompanyID, rrIdText(p.PlanID), p.PlanName, p.StartDate,
		r.kind, "", "", "", "", "",
		r.name, r.workbook, r.server, r.loc.File, r.loc.Sheet, r.loc.Cell, rrIntText(r.loc.Line), rrIntText(r.loc.Column), "",
		string(r.class), "", "", "",
	}
	if l := r.last; l != nil {
		out[23], out[24], out[25] = r.lastValue, strconv.FormatInt(l.RunID, 10), l.At.UTC().Format(time.RFC3339)
	}
	if t := r.target; t != nil {
		out[8], out[9], out[10], out[11], out[12] = strconv.Itoa(t.YearNumber), t.FinancialYear, t.TargetType, rrIdText(t.MilestoneID), rrIdText(t.TargetID)
	}
	if r.kind == "plan" {
		out[21] = p.Reason
	}
	return out
}

func rrIdText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func rrIntText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func rrReconcileRows(r *pipeline.Reconciliation) []rrReconcileRow {
	var rows []rrReconcileRow
	for i := range r.Plans {
		p := &r.Plans[i]
		if p.Presence != pipeline.PresencePresent {
			row := rrReconcileRow{plan: p, kind: "plan"}
			if p.Location != nil {
				row.loc = *p.Location
			}
			rows = append(rows, row)
		}
		for _, f := range p.Fields {
			row := rrReconcileRow{plan: p, kind: "field", name: f.Field, workbook: f.Workbook, server: f.Server, class: f.Class, last: f.LastRun()}
			if f.LastApplied != nil {
				row.lastValue = f.LastApplied.Value
			}
			if f.Location != nil {
				row.loc = *f.Location
			}
			rows = append(rows, row)
		}
		for j := range p.Targets {
			t := &p.Targets[j]
			for _, c := range t.Counters {
				row := rrReconcileRow{
					plan: p, kind: "counter", target: t, name: c.Counter,
					workbook: strconv.FormatInt(c.Workbook, 10), server: strconv.FormatInt(c.Server, 10), loc: c.Location,
					class: c.Class, last: c.LastApplied,
				}
				if c.LastApplied != nil {
					row.lastValue = strconv.FormatInt(c.LastApplied.Value, 10)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// ReconcileXLSXPaths returns where WriteReconcileXLSX writes the annotated
// copies of sources for a report path: the path itself for one source, and
// path-<source name>.xlsx for each of several.
func ReconcileXLSXPaths(report string, sources []string) []string {
	if len(sources) <= 1 {
		return []string{report}
	}
	ext := filepath.Ext(report)
	stem := strings.TrimSuffix(report, ext)
	out := make([]string, len(sources))
	used := map[string]int{}
	for i, s := range sources {
		name := strings.TrimSuffix(filepath.Base(s), filepath.Ext(s))
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		out[i] = stem + "-" + name + ext
	}
	return out
}

// WriteReconcileXLSX writes to dst the consultant's annotated copy of the
// source workbook src (XLSX as it is; a CSV turned into a worksheet, row n
// being line n): every counter whose value differs from the service's is
// filled in colour (DiffFillColor) and carries a comment with the
// service's value; plan-level findings (missing on the server, metadata
// differences, not compared) mark the plan's first cell (PlanFillColor);
// a Summary sheet, after the workbook's own sheets and the active one,
// counts and lists every finding of r. An XLSX source is copied by
// streaming it (reconcile_copy.go). With src "" the workbook holds only the Summary sheet. Several
// sources get one copy each (ReconcileXLSXPaths names them).
func WriteReconcileXLSX(dst, src string, r *pipeline.Reconciliation) error {
	if src == "" {
		f := excelize.NewFile()
		defer f.Close()
		if err := f.SetSheetName(f.GetSheetName(0), SummarySheet); err != nil {
			return err
		}
		if err := rrWriteReconcileSummary(f, SummarySheet, r, nil); err != nil {
			return err
		}
		return xlsx.WriteWorkbook(dst, f)
	}
	return rrWriteAnnotatedCopy(dst, src, r)
}

// rrClassFill is the fill of a marked difference of class c: the service's
// colour when only the service changed it since eepipe last applied it,
// the conflict colour when both did, else fill.
func rrClassFill(fill string, c pipeline.ChangeClass) string {
	switch c {
	case pipeline.ClassService:
		return ServiceFillColor
	case pipeline.ClassBoth:
		return ConflictFillColor
	}
	return fill
}

// rrNote is what the annotated copy puts on one cell.
type rrNote struct {
	fill  string
	lines []string
}

// rrOnFallback, when set (by tests), hears of each workbook the streamed
// copy leaves to excelize.
var rrOnFallback func(src string, err error)

// rrChange is one row of the Changes sheet: one finding marked on a cell
// of the copy.
type rrChange struct {
	sheet, cell   string
	plan          string // the plan's name and number
	year, target  any    // financial year (or year number) and target type, for a counter
	what          string // the counter or field; "" for a plan finding
	file, service any
	class         string // the finding's class in words
	run           string // the run that last applied the value, if any
	note          string // the comment on the cell
}

// rrCollectNotes gathers what the copy puts on each cell of src, in the
// order the findings come (csvSheet names the sheet of a CSV source), and
// the findings one by one for the Changes sheet.
func rrCollectNotes(r *pipeline.Reconciliation, src, csvSheet string) (map[[2]string]*rrNote, [][2]string, []rrChange) {
	notes := map[[2]string]*rrNote{}
	var order [][2]string
	var changes []rrChange
	add := func(o pipeline.Origin, fill, line string, ch rrChange) {
		sheet, cell := o.Sheet, o.Cell
		if csvSheet != "" {
			sheet = csvSheet
		}
		if cell == "" {
			// A whole row marks its first cell; a whole sheet its A1.
			col, row := max(o.Column, 1), max(o.Row, 1)
			cell, _ = excelize.CoordinatesToCellName(col, row)
		}
		if sheet == "" || cell == "" {
			return
		}
		ch.sheet, ch.cell, ch.note = sheet, cell, line
		changes = append(changes, ch)
		k := [2]string{sheet, cell}
		n := notes[k]
		if n == nil {
			n = &rrNote{fill: fill}
			notes[k] = n
			order = append(order, k)
		}
		if fill != PlanFillColor {
			n.fill = fill
		}
		n.lines = append(n.lines, line)
	}
	for i := range r.Plans {
		p := &r.Plans[i]
		if !rrSameSourceFile(p.Origin.File, src) {
			continue
		}
		plan := p.PlanName
		if p.PlanID != 0 {
			plan = fmt.Sprintf("%s (plan %d)", p.PlanName, p.PlanID)
		}
		switch p.Presence {
		case pipeline.PresenceMissing:
			add(p.Origin, PlanFillColor, "Missing on the service: "+p.Reason, rrChange{plan: plan, class: "missing on the service"})
		case pipeline.PresenceNotCompared:
			add(p.Origin, PlanFillColor, "Not compared: "+p.Reason, rrChange{plan: plan, class: "not compared"})
		}
		for _, fd := range p.Fields {
			// The field's own cell (the grid's "Sector" value, the flat
			// row's sector column), kept by the reader, else the plan's
			// first cell.
			o := p.Origin
			if l := fd.Location; l != nil && rrSameSourceFile(l.File, src) {
				o = pipeline.Origin{File: l.File, Sheet: l.Sheet, Cell: l.Cell, Row: l.Line, Column: l.Column}
			}
			fill, line := rrClassFill(PlanFillColor, fd.Class), fmt.Sprintf("%s: the service holds %q (workbook %q)", fd.Field, fd.Server, fd.Workbook)
			ch := rrChange{plan: plan, what: fd.Field, file: fd.Workbook, service: fd.Server, class: rrClassText(fd.Class, fd.LastRun())}
			if fd.LastApplied != nil {
				line += fmt.Sprintf("; eepipe last applied %q (%s): %s", fd.LastApplied.Value, fd.LastApplied, fd.Class.Words(fd.LastRun()))
				ch.run = fmt.Sprintf("%s: %q", fd.LastApplied, fd.LastApplied.Value)
			}
			add(o, fill, line, ch)
		}
		for _, t := range p.Targets {
			for _, c := range t.Counters {
				if !rrSameSourceFile(c.Origin.File, src) {
					continue
				}
				fill, line := rrClassFill(DiffFillColor, c.Class), fmt.Sprintf("The service holds %d (this workbook: %d).", c.Server, c.Workbook)
				var year any = t.FinancialYear
				if t.FinancialYear == "" {
					year = rrNilIfZero(int64(t.YearNumber))
				}
				ch := rrChange{plan: plan, year: year, target: t.TargetType, what: c.Counter, file: c.Workbook, service: c.Server,
					class: rrClassText(c.Class, c.LastApplied)}
				if c.LastApplied != nil {
					line += fmt.Sprintf(" eepipe last applied %d (%s): %s.", c.LastApplied.Value, c.LastApplied, c.Class.Words(c.LastApplied))
					ch.run = fmt.Sprintf("%s: %d", c.LastApplied, c.LastApplied.Value)
				}
				add(c.Origin, fill, line, ch)
			}
		}
	}
	return notes, order, changes
}

// rrClassText is a finding's class in words for the Changes sheet; a
// difference without a class (no state store) "differs".
func rrClassText(c pipeline.ChangeClass, last *pipeline.LastWrite) string {
	if w := c.Words(last); w != "" {
		return w
	}
	return "differs"
}

func rrWriteAnnotatedCopy(dst, src string, r *pipeline.Reconciliation) error {
	if !strings.EqualFold(filepath.Ext(src), ".csv") {
		// A workbook is copied by streaming it (reconcile_copy.go);
		// what the stream does not handle is left to excelize below.
		notes, order, changes := rrCollectNotes(r, src, "")
		err := rrStreamCopy(dst, src, r, notes, order, changes)
		if rrOnFallback != nil && errors.Is(err, errRRFallback) {
			rrOnFallback(src, err)
		}
		if !errors.Is(err, errRRFallback) {
			if err != nil {
				return fmt.Errorf("reconciliation report: open %s: %w", src, err)
			}
			return nil
		}
	}
	var (
		f        *excelize.File
		csvSheet string
		err      error
	)
	if strings.EqualFold(filepath.Ext(src), ".csv") {
		f, csvSheet, err = rrWorkbookFromCSV(src)
	} else {
		var limit int64
		if limit, err = annotateCheckSize(src); err == nil {
			f, err = annotateOpen(src, limit)
		}
	}
	if err != nil {
		return fmt.Errorf("reconciliation report: open %s: %w", src, err)
	}
	defer f.Close()
	notes, order, changes := rrCollectNotes(r, src, csvSheet)
	styles := map[[2]any]int{}
	comments := map[string]map[string]excelize.Comment{}
	// excelize's comments read the default font's name, and crash on a
	// style sheet whose first font has none (<font/>, which other
	// programs write): it is named while the comments are added, and
	// unnamed again before the copy is written.
	unname, err := rrNameDefaultFont(f)
	if err != nil {
		return fmt.Errorf("reconciliation report: %s: %w: %w", src, ErrNotAnnotatable, err)
	}
	for _, k := range order {
		n := notes[k]
		if err := rrAnnotateCell(f, k[0], k[1], n, styles, comments); err != nil {
			return fmt.Errorf("reconciliation report: %s %s!%s: %w", src, k[0], k[1], err)
		}
	}
	unname()
	own := f.GetSheetList()
	sheet, changesSheet := rrFreeSheetName(own, SummarySheet), rrFreeSheetName(own, ChangesSheet)
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	if err := rrWriteReconcileSummary(f, sheet, r, &src); err != nil {
		return err
	}
	if _, err := f.NewSheet(changesSheet); err != nil {
		return err
	}
	if err := rrWriteChangesSheet(f, changesSheet, changes); err != nil {
		return err
	}
	//
	// The sheets the copy marks print like the plan sheets eepipe writes:
	// landscape, one page wide. (Only those: they are decoded to be
	// marked anyway, and setting up every sheet would decode all of them;
	// the others print as they did.)
	marked := map[string]bool{}
	for _, k := range order {
		marked[k[0]] = true
	}
	for _, s := range f.GetSheetList() {
		if s == sheet || s == changesSheet || !marked[s] {
			continue
		}
		if v, err := f.GetSheetVisible(s); err == nil && v {
			// A chart sheet has no page setup to change: nothing lost. A
			// CSV's table (a flat table has hundreds of columns) prints
			// across pages, its header and first two columns on each.
			setup := templates.PrintSetup{}
			if s == csvSheet {
				setup = templates.WidePrint(2)
			}
			_ = templates.SetPrintLayout(f, s, setup)
		}
	}
	// The Summary and the Changes open and print first, the Summary the
	// active sheet.
	if err := rrSheetsFirst(f, sheet, changesSheet); err != nil {
		return err
	}
	if csvSheet != "" || !rrActivateSheet(f, src, sheet, 0) {
		f.SetActiveSheet(0)
	}
	return xlsx.WriteWorkbook(dst, f)
}

// rrFreeSheetName returns name, or "name (2)", "name (3)" ..., the first
// not among the workbook's sheets (compared as Excel does, ignoring case).
func rrFreeSheetName(sheets []string, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(sheets, func(s string) bool { return strings.EqualFold(s, n) })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s (%d)", name, i)
	}
	return out
}

// rrSheetsFirst moves the named sheets, in order, to the front of f's
// sheets, renumbering the sheet-scoped defined names (print titles,
// filters) with their sheets; excelize's MoveSheet leaves them on the
// sheet that takes the old position, and walks every worksheet.
func rrSheetsFirst(f *excelize.File, names ...string) error {
	wb := f.WorkBook
	if wb == nil || wb.Sheets.Sheet == nil {
		return errors.New("reconciliation report: the workbook has no sheet list")
	}
	old := wb.Sheets.Sheet
	moved := make([]int, 0, len(old)) // new position -> old index
	for _, n := range names {
		i := -1
		for k := range old {
			if old[k].Name == n {
				i = k
			}
		}
		if i < 0 {
			return fmt.Errorf("reconciliation report: no sheet %q", n)
		}
		moved = append(moved, i)
	}
	for i := range old {
		if !slices.Contains(moved, i) {
			moved = append(moved, i)
		}
	}
	newIdx := make([]int, len(old))
	sheets := slices.Clone(old)
	for to, from := range moved {
		sheets[to] = old[from]
		newIdx[from] = to
	}
	wb.Sheets.Sheet = sheets
	if wb.DefinedNames != nil {
		for i, d := range wb.DefinedNames.DefinedName {
			if d.LocalSheetID != nil && *d.LocalSheetID >= 0 && *d.LocalSheetID < len(newIdx) {
				n := newIdx[*d.LocalSheetID]
				wb.DefinedNames.DefinedName[i].LocalSheetID = &n
			}
		}
	}
	if wb.BookViews != nil {
		for i := range wb.BookViews.WorkBookView {
			wb.BookViews.WorkBookView[i].FirstSheet = 0
		}
	}
	return nil
}

// rrActivateSheet makes sheet (at idx) the workbook's active sheet
// touching only the worksheets whose tab is selected: excelize's
// SetActiveSheet decodes every worksheet of the workbook to clear their
// selection. The selected tabs are found by scanning the head of each
// sheet of src (its sheet views come before its cells). It reports false
// when it cannot, for SetActiveSheet to do it.
func rrActivateSheet(f *excelize.File, src, sheet string, idx int) bool {
	wb := f.WorkBook
	if wb == nil || wb.BookViews == nil || len(wb.BookViews.WorkBookView) == 0 {
		return false
	}
	fh, err := os.Open(src)
	if err != nil {
		return false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return false
	}
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
	if err != nil {
		return false
	}
	for _, info := range book.Sheets {
		if info.Path == "" || !rrTabSelected(book, info) {
			continue
		}
		if !rrClearTabSelected(f, info.Name, info.Path) {
			return false
		}
	}
	wb.BookViews.WorkBookView[0].ActiveTab = idx
	return true
}

// rrNameDefaultFont gives the workbook's first font a name when it has
// none, and returns the function that takes it away again. It fails when
// the style sheet has no font at all.
func rrNameDefaultFont(f *excelize.File) (undo func(), err error) {
	undo = func() {}
	defer func() {
		if recover() != nil {
			undo, err = func() {}, errors.New("the style sheet's first font cannot be read")
		}
	}()
	if _, err := f.GetStyle(0); err != nil { // reads the style sheet
		return undo, err
	}
	if f.Styles == nil || f.Styles.Fonts == nil || len(f.Styles.Fonts.Font) == 0 || f.Styles.Fonts.Font[0] == nil {
		return undo, errors.New("the style sheet has no font")
	}
	font := f.Styles.Fonts.Font[0]
	if font.Name != nil && font.Name.Val != nil {
		return undo, nil
	}
	field := reflect.ValueOf(font).Elem().FieldByName("Name")
	old := reflect.ValueOf(font.Name)
	name := reflect.New(field.Type().Elem())
	calibri := "Calibri"
	name.Elem().FieldByName("Val").Set(reflect.ValueOf(&calibri))
	field.Set(name)
	return func() { field.Set(old) }, nil
}

// rrClearTabSelected clears the tab selection of one worksheet (at path
// in the package): excelize v2.11 has no option for it but
// SetActiveSheet's walk over every sheet, so the decoded worksheet's
// sheet view is set through reflection. It reports false when the
// worksheet is not as expected.
func rrClearTabSelected(f *excelize.File, name, path string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if _, err := f.GetSheetView(name, 0); err != nil { // decodes the worksheet
		return false
	}
	ws, loaded := f.Sheet.Load(path)
	if !loaded {
		return false
	}
	v := reflect.ValueOf(ws)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	views := v.Elem().FieldByName("SheetViews")
	if !views.IsValid() || views.Kind() != reflect.Pointer || views.IsNil() {
		return true // no sheet view: nothing selected
	}
	list := views.Elem().FieldByName("SheetView")
	for i := 0; list.IsValid() && i < list.Len(); i++ {
		sel := list.Index(i).FieldByName("TabSelected")
		if !sel.IsValid() || sel.Kind() != reflect.Bool || !sel.CanSet() {
			return false
		}
		sel.SetBool(false)
	}
	return list.IsValid()
}

// rrTabSelected reports whether a worksheet's first sheet view has its
// tab selected, reading the sheet's XML only up to its cells.
func rrTabSelected(book *xlsx.Book, info xlsx.Sheet) bool {
	if info.Path == "" {
		return false // a chart sheet (the streamed copy clears it: rrChartSheetsSelected)
	}
	rc, err := book.Open(info.Path)
	if err != nil {
		return true // let SetSheetView clear it, to be sure
	}
	defer rc.Close()
	sc := xlsx.NewScanner(rc)
	for sc.Next() == nil {
		if sc.Kind != xlsx.TokStart {
			continue
		}
		switch string(sc.Name) {
		case "sheetView":
			v := string(sc.Attr("tabSelected"))
			return v == "1" || v == "true"
		case "sheetData":
			return false
		}
	}
	return false
}

// rrAnnotateCell fills the cell keeping the rest of its style (number
// format, font, borders) and adds a comment.
func rrAnnotateCell(f *excelize.File, sheet, cell string, n *rrNote, styles map[[2]any]int, comments map[string]map[string]excelize.Comment) error {
	old, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		return err
	}
	key := [2]any{old, n.fill}
	id, ok := styles[key]
	if !ok {
		st := xlsx.ReusableStyle(f, old)
		st.Fill = excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{n.fill}}
		id, err = f.NewStyle(st)
		if err != nil {
			return err
		}
		styles[key] = id
	}
	if err := f.SetCellStyle(sheet, cell, cell, id); err != nil {
		return err
	}
	text := strings.Join(n.lines, "\n")
	// A comment the workbook already has on the cell is kept below ours.
	// The sheet's comments are read once (each cell is annotated once).
	byCell, read := comments[sheet]
	if !read {
		byCell = map[string]excelize.Comment{}
		if existing, err := f.GetComments(sheet); err == nil {
			for _, c := range existing {
				byCell[strings.ToUpper(c.Cell)] = c
			}
		}
		comments[sheet] = byCell
	}
	if c, ok := byCell[strings.ToUpper(cell)]; ok {
		{
			{
				prev := c.Text
				if prev == "" {
					for _, p := range c.Paragraph {
						prev += p.Text
					}
				}
				if prev != "" {
					text += "\n---\n" + prev
				}
				if err := f.DeleteComment(sheet, cell); err != nil {
					return err
				}
			}
		}
	}
	return f.AddComment(sheet, excelize.Comment{
		Cell: cell, Author: commentAuthor,
		Paragraph: []excelize.RichTextRun{
			{Text: commentAuthor + ":\n", Font: &excelize.Font{Bold: true}},
			{Text: text},
		},
		Width: 260, Height: uint(60 + 16*strings.Count(text, "\n")),
	})
}

func rrSameSourceFile(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// CommentText returns the plain text of a comment written by the annotated
// copy (or any comment), for tests and tools that read the report back.
func CommentText(c excelize.Comment) string {
	if len(c.Paragraph) == 0 {
		return c.Text
	}
	var b strings.Builder
	for _, p := range c.Paragraph {
		b.WriteString(p.Text)
	}
	return b.String()
}

// rrWorkbookFromCSV turns a CSV file into a one-sheet workbook, cell for
// cell (line n is row n, field m is column m), so that report cells match
// CSV line and column numbers. Counter fields and ids become numbers;
// everything else stays text, so identifiers keep their leading zeros.
func rrWorkbookFromCSV(path string) (*excelize.File, string, error) {
	// The copy is made in memory: only a regular file of a bounded size.
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, "", errors.New(readNotRegular(st.Mode()))
	}
	if st.Size() > annotateMaxUncompressed {
		return nil, "", xlsx.LimitErrorf("the file is oversized: %s, more than the %s a copy is made of", xlsx.SizeText(st.Size()), xlsx.SizeText(annotateMaxUncompressed))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(raw) {
		return nil, "", errors.New("the file is not UTF-8 text")
	}
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.Comma = rrSniffDelimiter(raw)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	f := excelize.NewFile()
	sheet := rrSheetNameFor(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		f.Close()
		return nil, "", err
	}
	var numeric []bool
	line := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, "", fmt.Errorf("line %d: %w", line+1, err)
		}
		line++
		// csv.Reader skips empty lines; keep row numbers equal to line numbers.
		if pl, _ := cr.FieldPos(0); pl > line {
			line = pl
		}
		if numeric == nil {
			numeric = make([]bool, len(rec))
			for i, h := range rec {
				h = strings.ToLower(strings.TrimSpace(h))
				numeric[i] = strings.HasPrefix(h, pipeline.CounterPrefix) || h == "plan_id" || h == "year_number"
			}
			if !slices.Contains(numeric, true) {
				numeric = nil // not the header row yet: keep looking
			}
		}
		row := make([]any, len(rec))
		for i, v := range rec {
			row[i] = table.CSVUnsafeField(v)
			if i < len(numeric) && numeric[i] {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					row[i] = n
				}
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, line)
		// Not the StreamWriter: the copy is annotated cell by cell afterwards.
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			f.Close()
			return nil, "", err
		}
	}
	return f, sheet, nil
}

// rrSniffDelimiter picks the delimiter of the first line among , ; and tab.
func rrSniffDelimiter(raw []byte) rune {
	first, _, _ := bufio.NewReader(bytes.NewReader(raw)).ReadLine()
	return pipeline.HeaderDelimiter(string(first))
}

// rrSheetNameFor makes a valid worksheet name from s.
func rrSheetNameFor(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '_'
		}
		return r
	}, s)
	s = strings.Trim(s, "'")
	if s == "" {
		s = "Data"
	}
	if utf8.RuneCountInString(s) > 31 {
		s = string([]rune(s)[:31])
	}
	return s
}

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
		finding := map[string]string{"plan": string(x.plan.Presence), "field": "field differs", "counter": "counter differs"}[x.kind]
		vals := []any{finding, x.plan.Account, rrNilIfZero(x.plan.PlanID), x.plan.PlanName, x.plan.StartDate}
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
