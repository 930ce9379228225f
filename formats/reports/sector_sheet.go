package reports

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// Columns of the Sector targets sheet: first what names a row (plan,
// year, level), repeated on every printed page, then the figures, the
// result, and the plan's details.
var sectorSheetHeader = []string{
	"Plan", "Year", "Financial year", "Level", "Headcount",
	"Designated male %", "Male target %", "Male gap (points)", "Male short (people)",
	"Designated female %", "Female target %", "Female gap (points)", "Female short (people)",
	"With disabilities %", "Disability target %", "Disability gap (points)", "Disability short (people)",
	"Result", "Reason / note", "Final year", "Plan ID", "Account / file", "Company", "Sector",
}

// Column letters of the sheet's key columns (1-based positions in sectorSheetHeader).
const (
	SectorFirstRow  = 6 // first data row; the header is on row 5
	sectorLastCol   = "X"
	sectorResultCol = "R"
	sectorNameCols  = 4  // plan, year, financial year, level: printed on every page
	SectorChartCol  = 27 // column AA: chart data blocks
	sectorChartAt   = "AK"
	sectorChartRows = 22 // rows between two plans' charts
)

// The figures' columns, E (headcount) to Q: plain text in the row of a
// plan with no years.
const sectorFigureFirst, sectorFigureLast = 5, 17

// AddSectorSheet adds the "Sector targets" worksheet to f: a note naming the
// notice, the file the figures came from (source, such as
// SectorTargets.SourceName()) and the advice to check them against the
// gazette; one row per plan, year and level (and a row per year for people
// with disabilities) with actual shares, targets and gaps, coloured green
// (met) or red (short) by conditional formatting; and a chart per plan of
// the designated-group shares per year against the target lines. It is used
// by `eepipe check --report x.xlsx` and by the export workbook.
func AddSectorSheet(f *excelize.File, plans []sector.SectorPlanCheck, source string) error {
	return AddSectorSheetWith(f, plans, source, SectorSheetOptions{})
}

// SectorSheetOptions tune AddSectorSheetWith.
type SectorSheetOptions struct {
	NoCharts bool // leave the sheet's charts out (export --no-charts)

	// streamRows leaves the data rows out of the File (the export writes
	// them into the sheet's part), and rows receives what that needs.
	StreamRows bool
	Rows       *SectorStreamRows
}

// AddSectorSheetWith is AddSectorSheet with options. Each of excelize's
// cell calls looks the sheet up among every sheet of the workbook, so an
// export adds this sheet before its plan sheets exist (see
// export.Options.BeforePlanSheets).
func AddSectorSheetWith(f *excelize.File, plans []sector.SectorPlanCheck, source string, opts SectorSheetOptions) error {
	const sheet = SectorSheetName
	if idx, _ := f.GetSheetIndex(sheet); idx >= 0 {
		return fmt.Errorf("the workbook already has a %q sheet", sheet)
	}
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	st, err := templates.NewStyles(f)
	if err != nil {
		return err
	}
	if !opts.NoCharts {
		// The charts first, while the sheet has no rows (see
		// AddSectorCharts). The chart data and chart columns get their
		// widths first: a chart spans columns by their widths, and an
		// application's default width (LibreOffice's is wider than
		// excelize's) would stretch it across a printed page's edge.
		for _, c := range []struct {
			from, to string
			w        float64
		}{{"AA", "AA", 30}, {"AB", "AJ", 9}, {sectorChartAt, "BA", 10}} {
			if err := f.SetColWidth(sheet, c.from, c.to, c.w); err != nil {
				return err
			}
		}
		if err := AddSectorCharts(f, sheet, plans, st, sectorChartObjects, nil); err != nil {
			return err
		}
	}
	styles, err := sectorSheetStyles(f)
	if err != nil {
		return err
	}
	if err := sectorSheetHead(f, sheet, source, st); err != nil {
		return err
	}

	// Values are written row by row as one slice; the styles, the same for
	// every data row of a column, are applied afterwards as one range per
	// run of columns, which is far cheaper than styling cell by cell. With
	// opts.streamRows the rows are left out: the export writes them into
	// the sheet's part (GridWorkbook).
	row := SectorFirstRow
	var noYearRows []int // rows of plans with no years: the figures' columns are plain text
	err = SectorEachRow(plans, func(vals []any, noYear bool) error {
		if noYear {
			noYearRows = append(noYearRows, row)
		}
		if opts.StreamRows {
			row++
			return nil
		}
		if err := sectorWriteRow(f, sheet, row, vals); err != nil {
			return err
		}
		row++
		return nil
	})
	if err != nil {
		return err
	}
	if opts.StreamRows && opts.Rows != nil {
		*opts.Rows = SectorStreamRows{Plans: plans, Styles: styles, Charts: !opts.NoCharts}
	}
	if row > SectorFirstRow && !opts.StreamRows {
		if err := sectorDataStyles(f, sheet, SectorFirstRow, row-1, noYearRows, styles); err != nil {
			return err
		}
	}
	last := row - 1
	if last >= SectorFirstRow {
		if err := sectorConditionalFormats(f, sheet, last); err != nil {
			return err
		}
		if err := f.AutoFilter(sheet, fmt.Sprintf("A5:%s%d", sectorLastCol, last), nil); err != nil {
			return err
		}
	}
	if err := sectorSheetLayout(f, sheet); err != nil {
		return err
	}
	// After the filter, which replaces the sheet's properties.
	if err := templates.SetPrintLayout(f, sheet, sectorPrint(!opts.NoCharts && sectorCharted(plans))); err != nil {
		return err
	}
	if opts.NoCharts {
		return nil
	}
	if opts.StreamRows {
		// The chart data cells go into the part with the rows; the page
		// breaks, which need the sheet's columns, go in now.
		if opts.Rows != nil {
			opts.Rows.Heading = st.Heading
		}
		return AddSectorCharts(f, sheet, plans, st, sectorChartBreaks, nil)
	}
	return AddSectorCharts(f, sheet, plans, st, sectorChartCells, nil)
}

// sectorSheetStyles registers the styles of the sheet's data columns:
// bordered text, integers, percentages and points.
func sectorSheetStyles(f *excelize.File) (sectorColumnStyles, error) {
	border := templates.ThinBorder(templates.BorderColor)
	pctFmt, ptsFmt := templates.PercentFormat, templates.PointsFormat
	pctStyle, err := f.NewStyle(&excelize.Style{Border: border, CustomNumFmt: &pctFmt})
	if err != nil {
		return sectorColumnStyles{}, err
	}
	ptsStyle, err := f.NewStyle(&excelize.Style{Border: border, CustomNumFmt: &ptsFmt})
	if err != nil {
		return sectorColumnStyles{}, err
	}
	intStyle, err := f.NewStyle(&excelize.Style{Border: border, NumFmt: 1})
	if err != nil {
		return sectorColumnStyles{}, err
	}
	textStyle, err := f.NewStyle(&excelize.Style{Border: border})
	if err != nil {
		return sectorColumnStyles{}, err
	}
	return sectorColumnStyles{text: textStyle, integer: intStyle, pct: pctStyle, points: ptsStyle}, nil
}

// sectorSheetHead writes the sheet's title, its notes (the notice, where
// the figures come from, the caveat) and the table's header row.
func sectorSheetHead(f *excelize.File, sheet, source string, st *templates.Styles) error {
	if source == "" {
		source = sector.EmbeddedSectorTargetsSource
	}
	notes := []struct {
		cell, text string
		style      int
	}{
		{"A1", "Sector targets: plans against the 2025 sectoral numerical targets", st.Title},
		{"A2", fmt.Sprintf("Notice: %s (sectoral numerical targets for 1 Sep 2025 - 31 Aug 2030). Figures from: %s. People with disabilities: 3%% of the whole workforce.", sector.SectorNotice, source), st.Subtitle},
		{"A3", sector.SectorCaveat, st.Subtitle},
		{"A4", "Shares are of the level's whole headcount (foreign nationals included). Green: met; red: short. The final year must meet the targets; earlier years show the trajectory.", st.Subtitle},
	}
	for _, n := range notes {
		if err := f.SetCellStr(sheet, n.cell, n.text); err != nil {
			return err
		}
		if err := f.SetCellStyle(sheet, n.cell, n.cell, n.style); err != nil {
			return err
		}
	}
	if err := f.SetSheetRow(sheet, "A5", &sectorSheetHeader); err != nil {
		return err
	}
	if err := f.SetCellStyle(sheet, "A5", sectorLastCol+"5", st.Header); err != nil {
		return err
	}
	return nil
}

// sectorWriteRow writes one data row's values from column A; cells
// without a value are left out (they get only a style).
func sectorWriteRow(f *excelize.File, sheet string, row int, vals []any) error {
	for start := 0; start < len(vals); {
		if vals[start] == nil {
			start++
			continue
		}
		end := start
		for end < len(vals) && vals[end] != nil {
			end++
		}
		cell, _ := excelize.CoordinatesToCellName(start+1, row)
		run := vals[start:end]
		if err := f.SetSheetRow(sheet, cell, &run); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// sectorSheetLayout sets the sheet's column widths, the header row's
// height, the notes wrapped over the columns and the frozen header.
func sectorSheetLayout(f *excelize.File, sheet string) error {
	widths := []struct {
		from, to string
		w        float64
	}{{"A", "A", 28}, {"B", "B", 6}, {"C", "C", 10}, {"D", "D", 34}, {"E", "Q", 11}, {"R", "R", 15}, {"S", "S", 60},
		{"T", "T", 10}, {"U", "U", 9}, {"V", "W", 18}, {"X", "X", 28}}
	for _, c := range widths {
		if err := f.SetColWidth(sheet, c.from, c.to, c.w); err != nil {
			return err
		}
	}
	if err := f.SetRowHeight(sheet, 5, 45); err != nil {
		return err
	}
	for _, row := range []int{2, 3, 4} {
		if err := templates.WrapNote(f, sheet, row, []float64{28, 6, 10, 34, 11, 11, 11, 11, 11, 11, 11, 11}); err != nil {
			return err
		}
	}
	if err := f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 5, TopLeftCell: "A6", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	return nil
}

// SectorPrintScale is the Sector targets sheet's print scale (percent):
// at it, the columns that name a row and one group's figures (headcount
// and designated males; designated females; people with disabilities and
// the result) fill an A4 landscape page in LibreOffice, which measures a
// column wider than Excel, and 11 pt prints at 7.5 pt.
const SectorPrintScale = 68

// sectorPrint is how the Sector targets sheet prints: too wide for one
// page at a readable size, it prints at SectorPrintScale across pages,
// across first (a set of rows' pages follow each other), each repeating
// the header row and the columns that name a row (plan, year, financial
// year, level), so that every figure prints on a page with its plan, year
// and level: a page per group of figures (column breaks before the
// designated females, the people with disabilities, the reason and the
// plan's details); with charts, the chart data (from SectorChartCol) and
// the charts (from sectorChartAt) start pages of their own, so that no
// table shares a page with a chart.
func sectorPrint(charts bool) templates.PrintSetup {
	p := templates.PrintSetup{TitleFirst: 5, TitleLast: 5, Scale: SectorPrintScale, TitleCols: sectorNameCols,
		AcrossFirst: true, ColBreaks: []int{10, 14, 19, 20}}
	if charts {
		at, _, _ := excelize.CellNameToCoordinates(sectorChartAt + "1")
		p.ColBreaks = append(p.ColBreaks, SectorChartCol, at)
	}
	return p
}

// sectorCharted reports whether any of plans gets a chart (see
// AddSectorCharts).
func sectorCharted(plans []sector.SectorPlanCheck) bool {
	for _, p := range plans {
		if len(p.Years) > 0 && p.Sector != "" {
			return true
		}
	}
	return false
}

// sectorColumnStyles are the cell styles of the Sector targets sheet's data rows.
type sectorColumnStyles struct{ text, integer, pct, points int }

// Columns returns the style of each column of a data row (plans with no
// years: noYear), as sectorDataStyles applies them.
func (st sectorColumnStyles) Columns(noYear bool) []int {
	share := []int{st.pct, st.pct, st.points, st.integer}
	cols := []int{st.text, st.integer, st.text, st.text, st.integer}
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, st.text, st.text, st.text, st.integer, st.text, st.text, st.text)
	if noYear {
		for c := sectorFigureFirst; c <= sectorFigureLast; c++ { // E-Q
			cols[c-1] = st.text
		}
	}
	return cols
}

// SectorEachRow lays out the data rows of the Sector targets sheet, from
// row SectorFirstRow on: emit gets each row's values by column (nil: no
// value; the slice is reused) and whether the row is a plan's with no
// years.
func SectorEachRow(plans []sector.SectorPlanCheck, emit func(vals []any, noYear bool) error) error {
	vals := make([]any, len(sectorSheetHeader))
	put := func(col int, v any) { vals[col-1] = v }
	flush := func(noYear bool) error {
		err := emit(vals, noYear)
		clear(vals)
		return err
	}
	putShare := func(col int, s *sector.ShareResult, target sector.Pct, hasTarget bool) {
		var actual, tgt, gap, short any
		if hasTarget {
			tgt = target.Float()
		}
		if s != nil {
			actual = s.ActualPct
			gap, short = 0.0, int64(0)
			if !s.Met {
				gap, short = s.ShortPoints, s.ShortPeople
			}
		}
		for i, v := range []any{actual, tgt, gap, short} {
			put(col+i, v)
		}
	}
	planCells := func(p sector.SectorPlanCheck, y *sector.SectorYearCheck, level string) {
		var id, year, fy, final any
		if p.PlanID != 0 {
			id = p.PlanID
		}
		if y != nil && y.Baseline {
			year = y.Label() // the current workforce
		} else if y != nil {
			year = y.YearNumber
			if y.FinancialYear != 0 {
				fy = y.FinancialYear.String()
			}
			if y.Final {
				final = "yes"
			}
		}
		where := p.Account
		if where == "" && p.Source != "" {
			where = filepath.Base(p.Source)
		}
		for i, v := range []any{p.Name, year, fy, level} {
			put(1+i, v)
		}
		for i, v := range []any{final, id, where, p.Company.String(), p.Sector} {
			put(20+i, v)
		}
	}
	for _, p := range plans {
		if len(p.Years) == 0 {
			planCells(p, nil, "")
			put(18, "not assessable")
			put(19, p.Reason)
			if err := flush(true); err != nil {
				return err
			}
			continue
		}
		for yi := range p.Years {
			y := &p.Years[yi]
			for _, l := range y.Levels {
				planCells(p, y, sectorLevelLabel(l.Level))
				if l.Headcount != nil {
					put(5, *l.Headcount)
				}
				putShare(6, l.Male, l.TargetMale, l.HasTarget)
				putShare(10, l.Female, l.TargetFemale, l.HasTarget)
				putShare(14, nil, 0, false)
				put(18, sectorStatusText(l.Status))
				put(19, sectorJoin("; ", l.Reason, l.Note))
				if err := flush(false); err != nil {
					return err
				}
			}
			d := y.Disability
			planCells(p, y, disabilityLabel)
			if d.Share != nil {
				put(5, d.Share.Of)
			}
			putShare(6, nil, 0, false)
			putShare(10, nil, 0, false)
			putShare(14, d.Share, d.TargetPct, true)
			put(18, sectorStatusText(d.Status))
			put(19, d.Reason)
			if err := flush(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// SectorStreamRows is what the export needs to write the Sector targets
// sheet's data rows into its part: the plans and the column styles.
type SectorStreamRows struct {
	Plans   []sector.SectorPlanCheck
	Styles  sectorColumnStyles
	Heading int  // the style of a chart data block's title
	Charts  bool // the sheet has charts, and their data cells
}

// sectorDataStyles styles the data rows first to last column by column, one
// range per run of columns with the same style, then gives the rows of
// plans without years plain text in the figures' columns (E-Q).
func sectorDataStyles(f *excelize.File, sheet string, first, last int, noYearRows []int, st sectorColumnStyles) error {
	cols := st.Columns(false)
	for start := 0; start < len(cols); {
		end := start
		for end+1 < len(cols) && cols[end+1] == cols[start] {
			end++
		}
		from, _ := excelize.CoordinatesToCellName(start+1, first)
		to, _ := excelize.CoordinatesToCellName(end+1, last)
		if err := f.SetCellStyle(sheet, from, to, cols[start]); err != nil {
			return err
		}
		start = end + 1
	}
	for _, r := range noYearRows {
		from, _ := excelize.CoordinatesToCellName(sectorFigureFirst, r)
		to, _ := excelize.CoordinatesToCellName(sectorFigureLast, r)
		if err := f.SetCellStyle(sheet, from, to, st.text); err != nil {
			return err
		}
	}
	return nil
}

func sectorStatusText(s sector.SectorStatus) string {
	switch s {
	case sector.SectorNotAssessable:
		return "not assessable"
	case sector.SectorPartlyMet:
		return "met where assessable"
	}
	return string(s)
}

// sectorConditionalFormats colours the result column and each actual share
// green (met) or red (short), from the exact short-people figures.
func sectorConditionalFormats(f *excelize.File, sheet string, last int) error {
	green, err := f.NewConditionalStyle(&excelize.Style{
		Font: &excelize.Font{Color: templates.GoodText}, Fill: templates.SolidFill(templates.GoodFill)})
	if err != nil {
		return err
	}
	red, err := f.NewConditionalStyle(&excelize.Style{
		Font: &excelize.Font{Color: templates.BadText}, Fill: templates.SolidFill(templates.BadFill)})
	if err != nil {
		return err
	}
	first := strconv.Itoa(SectorFirstRow)
	rng := func(col string) string { return fmt.Sprintf("%s%d:%s%d", col, SectorFirstRow, col, last) }
	if err := f.SetConditionalFormat(sheet, rng(sectorResultCol), []excelize.ConditionalFormatOptions{
		{Type: "formula", Criteria: fmt.Sprintf(`$%s%s="met"`, sectorResultCol, first), Format: &green},
		{Type: "formula", Criteria: fmt.Sprintf(`$%s%s="short"`, sectorResultCol, first), Format: &red},
	}); err != nil {
		return err
	}
	// Actual share columns and the short-people column that decides them.
	for _, c := range []struct{ actual, short string }{{"F", "I"}, {"J", "M"}, {"N", "Q"}} {
		if err := f.SetConditionalFormat(sheet, rng(c.actual), []excelize.ConditionalFormatOptions{
			{Type: "formula", Criteria: fmt.Sprintf(`AND(ISNUMBER($%s%s),$%s%s=0)`, c.short, first, c.short, first), Format: &green},
			{Type: "formula", Criteria: fmt.Sprintf(`AND(ISNUMBER($%s%s),$%s%s>0)`, c.short, first, c.short, first), Format: &red},
		}); err != nil {
			return err
		}
	}
	return nil
}
