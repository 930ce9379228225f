package templates

import (
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// Layouts of a template.
const (
	LayoutGrid = "grid"
	LayoutFlat = "flat"
)

// DefaultYears is the number of financial years of a template's plan: a
// plan from 1 September 2025 to 31 August 2030 has five.
const DefaultYears = 5

// MaxYears bounds a template's years.
const MaxYears = 50

// FlatSheet is the flat table's worksheet name.
const FlatSheet = "Targets"

// PlanSheetName is the grid template's plan sheet name.
const PlanSheetName = "Plan"

// flatTemplateRows is how many rows of the flat template carry validation.
const flatTemplateRows = 2000

// Options shape a template.
type Options struct {
	Layout  string            // LayoutGrid (default) or LayoutFlat
	Years   int               // financial years of the grid template; 0 = DefaultYears
	Catalog *pipeline.Catalog // nil = the default catalog
	// Start, when set, pre-fills the grid template's start and end dates
	// and shows each grid's financial year; in the flat template, the
	// start, end and financial year of the rows FlatYears pre-fills.
	Start pipeline.Date
	// FlatYears, when more than 0, pre-fills the flat template with the
	// rows of one plan over that many financial years: year_number and
	// target_type (both types per year), and with Start the dates and
	// financial years. 0 leaves the flat table empty below its header.
	FlatYears int
}

// New builds a template workbook. The caller writes it (through
// formats.WriteFileAtomic) and closes it.
func New(opts Options) (*excelize.File, error) {
	cat := opts.Catalog
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	years := opts.Years
	if years == 0 {
		years = DefaultYears
	}
	if years < 1 || years > MaxYears {
		return nil, fmt.Errorf("template: years must be between 1 and %d, not %d", MaxYears, years)
	}
	f := excelize.NewFile()
	first := f.GetSheetName(0)
	st, err := NewStyles(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	switch strings.ToLower(opts.Layout) {
	case "", LayoutGrid:
		err = buildGrid(f, cat, st, years, opts.Start)
	case LayoutFlat:
		err = buildFlat(f, cat, st)
		if err == nil && opts.FlatYears > 0 {
			err = fillFlatYears(f, cat, opts.FlatYears, opts.Start)
		}
	default:
		err = fmt.Errorf("template: unknown layout %q (grid or flat)", opts.Layout)
	}
	if err == nil {
		err = f.DeleteSheet(first)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	f.SetActiveSheet(0)
	ActivateFirstVisible(f)
	return f, nil
}

func buildGrid(f *excelize.File, cat *pipeline.Catalog, st *Styles, years int, start pipeline.Date) error {
	if err := AddInstructionsSheet(f, cat, st); err != nil {
		return err
	}
	ps := PlanSheet{}
	var firstFY pipeline.FinancialYear
	if !start.IsZero() {
		ps.StartDate = start
		firstFY = pipeline.FinancialYearOf(start)
		ps.EndDate = (firstFY + pipeline.FinancialYear(years-1)).End()
	}
	for y := 1; y <= years; y++ {
		var fy pipeline.FinancialYear
		if firstFY != 0 {
			fy = firstFY + pipeline.FinancialYear(y-1)
		}
		for _, tt := range pipeline.TargetTypes {
			ps.Grids = append(ps.Grids, Grid{YearNumber: y, FinancialYear: fy, TargetType: tt})
		}
	}
	return AddPlanSheet(f, PlanSheetName, ps, cat, st)
}

// fillFlatYears writes the rows of one plan over years financial years
// into the flat template: for each year both target types, with the
// year_number, and with start the plan's start and end dates and each
// row's financial year (as the grid template shows them).
func fillFlatYears(f *excelize.File, cat *pipeline.Catalog, years int, start pipeline.Date) error {
	if years > flatTemplateRows/len(pipeline.TargetTypes) {
		return fmt.Errorf("template: %d years do not fit the flat template's %d rows", years, flatTemplateRows)
	}
	col := map[string]int{}
	for i, h := range FlatHeader(cat) {
		col[h] = i + 1
	}
	var firstFY pipeline.FinancialYear
	var end pipeline.Date
	if !start.IsZero() {
		firstFY = pipeline.FinancialYearOf(start)
		end = (firstFY + pipeline.FinancialYear(years-1)).End()
	}
	w := &sheetWriter{f: f, sheet: FlatSheet}
	row := 2
	for y := 1; y <= years; y++ {
		for _, tt := range pipeline.TargetTypes {
			w.setErr(f.SetCellInt(FlatSheet, xlsx.CellName(col[pipeline.ColYearNumber], row), int64(y)))
			w.text(xlsx.CellName(col[pipeline.ColTargetType], row), tt)
			if firstFY != 0 {
				w.date(xlsx.CellName(col[pipeline.ColStartDate], row), start)
				w.date(xlsx.CellName(col[pipeline.ColEndDate], row), end)
				if c, ok := col[pipeline.ColFinancialYear]; ok {
					w.text(xlsx.CellName(c, row), (firstFY + pipeline.FinancialYear(y-1)).String())
				}
			}
			row++
		}
	}
	return w.err
}

// FlatHeaderRows is how far down a sheet or CSV file the flat table's
// header is looked for: a sheet with a flat header cell (IsFlatHeaderCell)
// in its first FlatHeaderRows rows is a flat table, not a grid.
const FlatHeaderRows = 20

// IsFlatHeaderCell reports whether a cell's text marks the flat table's
// header row: it reads target_type in any letter case, the spaces around
// it (and a CSV file's byte order mark before it) ignored, so that a
// header typed " Target_Type " is read as one. It is the one answer to
// "is this a flat table header?" for the flat reader (CSV and XLSX), the
// grid reader's test of a sheet, and the rejects file.
func IsFlatHeaderCell(text string) bool {
	return strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(text, "\ufeff")), pipeline.ColTargetType)
}

// CheckCounters refuses a plan with counters the catalog does not know:
// a writer of any layout (flat, long, grid) would silently drop them.
func CheckCounters(p *pipeline.InputPlan, cat *pipeline.Catalog) error {
	for _, t := range p.Targets {
		for name := range t.Counters.All() {
			if !cat.Has(name) {
				return fmt.Errorf("%s: counter %s is not in the counter catalog; use a catalog that has it (--catalog)", p.Key(), name)
			}
		}
	}
	return nil
}

// FlatHeader returns the flat table's header: the plan and year columns,
// then the catalog's counters in order.
func FlatHeader(cat *pipeline.Catalog) []string {
	return append(append([]string(nil), pipeline.FlatColumns...), cat.Names()...)
}

// FlatColumnKind says how the flat layout writes a column.
func FlatColumnKind(col string) MetaKind {
	switch col {
	case pipeline.ColPlanID, pipeline.ColYearNumber:
		return MetaInteger
	case pipeline.ColStartDate, pipeline.ColEndDate:
		return MetaDate
	case pipeline.ColCompanyVAT, pipeline.ColCompanyRegistration, pipeline.ColCompanyIDNumber, pipeline.ColScorecardID,
		pipeline.ColFinancialYear:
		return MetaIdentifier
	case pipeline.ColSector:
		return MetaSector
	}
	return MetaText
}

func buildFlat(f *excelize.File, cat *pipeline.Catalog, st *Styles) error {
	if _, err := f.NewSheet(FlatSheet); err != nil {
		return err
	}
	sectors, targetTypes, err := EnsureListsSheet(f)
	if err != nil {
		return err
	}
	w := &sheetWriter{f: f, sheet: FlatSheet}
	header := FlatHeader(cat)
	last := flatTemplateRows + 1
	colRange := func(c int) string { return xlsx.CellName(c, 2) + ":" + xlsx.CellName(c, last) }
	var counterRanges []string
	for i, h := range header {
		c := i + 1
		name, _ := excelize.ColumnNumberToName(c)
		w.str(c, 1, h, st.Header)
		if strings.HasPrefix(h, pipeline.CounterPrefix) {
			w.setErr(f.SetColWidth(FlatSheet, name, name, float64(min(max(len(h), 12), 40))))
			w.setErr(f.SetColStyle(FlatSheet, name, st.Counter))
			counterRanges = append(counterRanges, colRange(c))
			continue
		}
		width := FlatColumnWidth
		style := st.Text
		dv := excelize.NewDataValidation(true)
		dv.Sqref = colRange(c)
		switch FlatColumnKind(h) {
		case MetaInteger:
			style = st.Integer
			lo := 1
			w.setErr(dv.SetRange(lo, 2147483647, excelize.DataValidationTypeWhole, excelize.DataValidationOperatorBetween))
			dv.SetError(excelize.DataValidationErrorStyleStop, h, h+" is a whole number, 1 or more.")
		case MetaDate:
			style = st.Date
			w.setErr(dv.SetRange(xlsx.ExcelSerial(pipeline.EarliestStart.Time(), false), xlsx.ExcelSerial(pipeline.Date{Year: 2099, Month: 12, Day: 31}.Time(), false),
				excelize.DataValidationTypeDate, excelize.DataValidationOperatorBetween))
			dv.SetError(excelize.DataValidationErrorStyleStop, h, "Enter a date on or after 2025-09-01, as YYYY-MM-DD.")
		case MetaIdentifier:
			style = st.Identifier
			dv = nil
		case MetaSector:
			width = 40
			dv.SetSqrefDropList(sectors)
			dv.SetError(excelize.DataValidationErrorStyleStop, "Sector", "Pick one of the sectors in the list, or leave the cell blank.")
		default:
			if h == pipeline.ColTargetType {
				dv.SetSqrefDropList(targetTypes)
				dv.SetError(excelize.DataValidationErrorStyleStop, h, "all_employees or disabled_employees.")
			} else {
				dv = nil
			}
			if h == pipeline.ColPlanName {
				width = 30
			}
		}
		w.setErr(f.SetColWidth(FlatSheet, name, name, width))
		w.setErr(f.SetColStyle(FlatSheet, name, style))
		if dv != nil {
			w.setErr(f.AddDataValidation(FlatSheet, dv))
		}
	}
	// The header keeps its own style over the column styles.
	w.setErr(f.SetCellStyle(FlatSheet, "A1", xlsx.CellName(len(header), 1), st.Header))
	if len(counterRanges) > 0 {
		dv := excelize.NewDataValidation(true)
		first := xlsx.CellName(len(pipeline.FlatColumns)+1, 2)
		dv.Sqref = first + ":" + xlsx.CellName(len(header), last)
		w.setErr(dv.SetRange(0, 2147483647, excelize.DataValidationTypeWhole, excelize.DataValidationOperatorBetween))
		dv.SetError(excelize.DataValidationErrorStyleStop, "Counter", "A counter is a whole number of employees, 0 or more. Leave the cell blank to keep the value on the service.")
		w.setErr(f.AddDataValidation(FlatSheet, dv))
	}
	w.setErr(f.SetPanes(FlatSheet, &excelize.Panes{
		Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
	}))
	w.setErr(f.AutoFilter(FlatSheet, "A1:"+xlsx.CellName(len(header), 1), nil))
	// Hundreds of counter columns: across pages, each naming the plan.
	w.setErr(SetPrintLayout(f, FlatSheet, WidePrint(2)))
	return w.err
}
