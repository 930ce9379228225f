package reports

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// rrClassFill is the fill of a marked difference of class c: the service's
// colour when only the service changed it since eepipe last applied it,
// the conflict colour when both did, else fill.
func rrClassFill(fill string, c diff.ChangeClass) string {
	switch c {
	case diff.ClassService:
		return templates.ServiceFill
	case diff.ClassBoth:
		return templates.ConflictFill
	}
	return fill
}

// rrNote is what the annotated copy puts on one cell.
type rrNote struct {
	Fill  string
	lines []string
}

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
func rrCollectNotes(r *diff.Reconciliation, src, csvSheet string) (map[[2]string]*rrNote, [][2]string, []rrChange) {
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
			n = &rrNote{Fill: fill}
			notes[k] = n
			order = append(order, k)
		}
		if fill != templates.PlanFill {
			n.Fill = fill
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
		case diff.PresenceMissing:
			add(p.Origin, templates.PlanFill, "Missing on the service: "+p.Reason, rrChange{plan: plan, class: "missing on the service"})
		case diff.PresenceNotCompared:
			add(p.Origin, templates.PlanFill, "Not compared: "+p.Reason, rrChange{plan: plan, class: "not compared"})
		}
		for _, fd := range p.Fields {
			// The field's own cell (the grid's "Sector" value, the flat
			// row's sector column), kept by the reader, else the plan's
			// first cell.
			o := p.Origin
			if l := fd.Location; l != nil && rrSameSourceFile(l.File, src) {
				o = pipeline.Origin{File: l.File, Sheet: l.Sheet, Cell: l.Cell, Row: l.Line, Column: l.Column}
			}
			fill, line := rrClassFill(templates.PlanFill, fd.Class), fmt.Sprintf("%s: the service holds %q (workbook %q)", fd.Field, fd.Server, fd.Workbook)
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
				fill, line := rrClassFill(templates.DiffFill, c.Class), fmt.Sprintf("The service holds %d (this workbook: %d).", c.Server, c.Workbook)
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
func rrClassText(c diff.ChangeClass, last *pipeline.LastWrite) string {
	if w := c.Words(last); w != "" {
		return w
	}
	return "differs"
}

// writeAnnotatedCopy writes the annotated copy of src to dst (see
// WriteReconcileXLSX) and tells how: a workbook streamed, or left to
// excelize and why; a CSV is built with excelize.
func writeAnnotatedCopy(dst, src string, r *diff.Reconciliation) (ReconcileCopy, error) {
	var how ReconcileCopy
	if !strings.EqualFold(filepath.Ext(src), ".csv") {
		// A workbook is copied by streaming it (reconcile_copy.go);
		// what the stream does not handle is left to excelize below.
		notes, order, changes := rrCollectNotes(r, src, "")
		err := rrStreamCopy(dst, src, r, notes, order, changes)
		if !errors.Is(err, errRRFallback) {
			if err != nil {
				return how, fmt.Errorf("reconciliation report: open %s: %w", src, err)
			}
			how.Streamed = true
			return how, nil
		}
		how.Fallback = err
	}
	return how, writeAnnotatedCopyExcelize(dst, src, r)
}

// writeAnnotatedCopyExcelize writes the annotated copy of src to dst
// through excelize: a CSV, or a workbook the streamed copy does not
// handle.
func writeAnnotatedCopyExcelize(dst, src string, r *diff.Reconciliation) error {
	var (
		f        *excelize.File
		csvSheet string
		err      error
	)
	if strings.EqualFold(filepath.Ext(src), ".csv") {
		f, csvSheet, err = workbookFromCSV(src)
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
	sheet, changesSheet := freeSheetName(own, SummarySheet), freeSheetName(own, ChangesSheet)
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
