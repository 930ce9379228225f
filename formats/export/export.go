package export

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
)

// OverviewSheet and ChartDataSheet are the sheets the XLSX export adds
// beside the plan sheets.
const (
	OverviewSheet  = "Overview"
	ChartDataSheet = "Chart data"
)

// Plan is one plan of an export: the file model written to its plan
// sheet (from pipeline.FromServer, so with the plan id, the company
// identifiers and every counter) and what only the server knows, for the
// Overview sheet.
type Plan struct {
	Plan        *pipeline.InputPlan
	Account     string // configured account name; "" with a single account
	CompanyName string // trading name from the company lookup
	Era         string // pre_2025 or post_2025
	Milestones  int    // financial years the server holds
	UpdatedAt   string // the server's updated_at
}

// Options shape the XLSX export.
type Options struct {
	Catalog     *pipeline.Catalog // nil = default catalog
	GeneratedAt time.Time         // shown on the Overview sheet; zero = now
	Source      string            // where the plans came from (the service URL), shown on the Overview sheet
	NoCharts    bool              // leave the per-plan charts out
	// NotExported says what the export should hold but does not (the
	// plans of an account whose key pair was refused), on the Overview.
	NotExported []string

	// BeforePlanSheets, when set, adds sheets (the Sector targets sheet)
	// right after the Overview, while the workbook has no plan sheet yet:
	// excelize looks a sheet up among all of them on every cell call, and
	// AddChart walks every part, so such sheets are cheap to write only
	// then.
	BeforePlanSheets func(f *excelize.File) error

	// Sector, when set, adds the Sector targets sheet (AddSectorSheet)
	// right after the Overview, with its charts unless NoCharts; its data
	// rows are written into the sheet's part when the workbook is written
	// (see GridWorkbook), never held as excelize cells.
	Sector *Sector
}

// Sector is the Sector targets sheet of an export: the sectoral
// check of each plan and where the targets came from.
type Sector struct {
	Plans  []sector.SectorPlanCheck
	Source string
}

func (o Options) catalog() *pipeline.Catalog {
	if o.Catalog != nil {
		return o.Catalog
	}
	return pipeline.DefaultCatalog()
}

// NewWorkbook builds the XLSX export: an Overview sheet listing the
// plans, one grid sheet per plan (as grid.NewBuild lays them out, so the
// file re-imports onto the same plans), and on each plan sheet two charts
// of the targets by race and gender across the plan's financial years,
// for all employees and for employees with disabilities. Callers may add
// sheets (AddSectorSheet on its File) before writing it with
// WriteWorkbook. The plan sheets, their charts and the chart data are
// written part by part when the workbook is written (see GridWorkbook).
func NewWorkbook(plans []Plan, opts Options) (*GridWorkbook, error) {
	cat := opts.catalog()
	f := excelize.NewFile()
	fail := func(err error) (*GridWorkbook, error) {
		f.Close()
		return nil, err
	}
	first := f.GetSheetName(0)
	if err := f.SetSheetName(first, OverviewSheet); err != nil {
		return fail(err)
	}
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	var charts *exCharts
	if !opts.NoCharts && len(plans) > 0 {
		charts = planCharts(plans, cat)
	}
	// The sheets after the plan sheets: Sector targets, then the hidden
	// Chart data (and Lists, which create adds last).
	var taken, after []string
	if opts.BeforePlanSheets != nil || opts.Sector != nil {
		// The Sector targets sheet, which BeforePlanSheets adds: no plan
		// sheet may take its name.
		taken = append(taken, reports.SectorSheetName)
	}
	if charts != nil {
		taken = append(taken, ChartDataSheet)
		after = append(after, ChartDataSheet)
	}
	// The grid styles first, then the Overview (written while it is the
	// only sheet, so each cell write finds it at once), then the sheets in
	// their final order, the active and hidden sheets, and last the
	// streamed plan sheets with their charts.
	g, err := grid.NewBuild(f, inputs, cat, grid.Options{}, taken)
	if err != nil {
		return fail(err)
	}
	if err := exWriteOverview(f, plans, g.Names, opts); err != nil {
		return fail(err)
	}
	var sector *reports.SectorStreamRows
	if opts.Sector != nil {
		sector = &reports.SectorStreamRows{}
		if err := reports.AddSectorSheetWith(f, opts.Sector.Plans, opts.Sector.Source,
			reports.SectorSheetOptions{NoCharts: opts.NoCharts, StreamRows: true, Rows: sector}); err != nil {
			return fail(fmt.Errorf("sector targets sheet: %w", err))
		}
	}
	if opts.BeforePlanSheets != nil {
		if err := opts.BeforePlanSheets(f); err != nil {
			return fail(err)
		}
	}
	if err := g.Create(after...); err != nil {
		return fail(err)
	}
	if charts != nil {
		if err := f.SetSheetVisible(ChartDataSheet, false); err != nil {
			return fail(err)
		}
	}
	f.SetActiveSheet(0)
	if err := g.PrintTitles(); err != nil {
		return fail(err)
	}
	return &GridWorkbook{File: f, grid: g, charts: charts, sector: sector}, nil
}

// WriteFlatXLSX writes the flat XLSX export to path (atomically): the
// Overview sheet and the flat table on the sheet Targets, written with the
// StreamWriter so that large exports stay small in memory.
func WriteFlatXLSX(path string, plans []Plan, opts Options) error {
	cat := opts.catalog()
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	rows, err := table.PlanRows(inputs, cat)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	f := excelize.NewFile()
	defer f.Close()
	// The Overview first and active, then the streamed table: after
	// streaming, excelize must not walk the sheets again (SetActiveSheet,
	// MoveSheet), which would re-read the whole table.
	if err := f.SetSheetName(f.GetSheetName(0), OverviewSheet); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if _, err := templates.NewStyles(f); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := exWriteOverview(f, plans, nil, opts); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if _, err := f.NewSheet(templates.FlatSheet); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	f.SetActiveSheet(0)
	if err := table.WriteSheet(f, templates.FlatSheet, rows, cat); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return xlsx.WriteWorkbook(path, f)
}

// exOverviewColumns are the Overview sheet's columns: header, width, kind.
// The headers are deliberately not the grid's metadata labels ("Plan ID",
// "Start date", ...), so that the readers never take the Overview for a
// plan sheet.
var exOverviewColumns = []struct {
	Header string
	Width  float64
	Kind   byte // 't' text, 'i' identifier (text format), 'n' integer, 'd' date, 'l' link
}{
	{"Sheet", 22, 'l'},
	{"Plan no.", 10, 'n'},
	{"Configured account", 18, 't'},
	{"Company", 30, 't'},
	{"Company VAT", 14, 'i'},
	{"Company reg.", 20, 'i'},
	{"Company ID no.", 16, 'i'},
	{"Name", 36, 't'},
	{"Starts", 12, 'd'},
	{"Ends", 12, 'd'},
	{"Sector", 34, 't'},
	{"Scorecard linked", 26, 'i'},
	{"Era", 11, 't'},
	{"Financial years", 15, 'n'},
	{"Milestones", 11, 'n'},
	{"Targets", 9, 'n'},
	{"Counters above zero", 19, 'n'},
	{"Last updated (UTC)", 20, 'T'},
}

// exEraText says in words which rules a plan follows: the service's era
// values are API jargon.
func exEraText(era string) string {
	switch era {
	case pipeline.EraPost2025:
		return "2025 onwards"
	case "pre_2025":
		return "before 2025"
	}
	return era
}

// exEraNote explains the Era column under the Overview's title.
const exEraNote = `Era: "2025 onwards" plans (the service's post_2025) follow the 2025 rules: they end by 31 August 2030 and the 2025 sectoral targets apply; "before 2025" plans (pre_2025) were made under the earlier rules.`

// exUpdatedValue returns the service's updated_at as a time for a
// date-time cell (UTC), or the text as it came when it is not a time.
func exUpdatedValue(s string) any {
	if s == "" {
		return nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	return s
}

// overviewHeaderRow is the row of the Overview table's header.
const overviewHeaderRow = 4

func exWriteOverview(f *excelize.File, plans []Plan, sheets []string, opts Options) error {
	sh := OverviewSheet
	st, err := templates.NewOverviewStyles(f)
	if err != nil {
		return err
	}
	at := opts.GeneratedAt
	if at.IsZero() {
		at = time.Now()
	}
	if err := f.SetCellStr(sh, "A1", "Employment Equity plans"); err != nil {
		return err
	}
	f.SetCellStyle(sh, "A1", "A1", st.Title)
	sub := fmt.Sprintf("%s exported %s UTC", pipeline.Plural(len(plans), "plan"), at.UTC().Format("2006-01-02 15:04"))
	if opts.Source != "" {
		sub += " from " + opts.Source
	}
	sub += ". Each plan has its own sheet; edit the counters there and apply the file to update the service."
	if len(opts.NotExported) > 0 {
		sub += " NOT IN THIS FILE: " + strings.Join(opts.NotExported, "; ") + "."
	}
	f.SetCellStr(sh, "A2", sub)
	f.SetCellStyle(sh, "A2", "A2", st.Note)
	f.SetCellStr(sh, "A3", exEraNote)
	f.SetCellStyle(sh, "A3", "A3", st.Note)

	widths := exOverviewWidths(sheets)
	for i, c := range exOverviewColumns {
		col, _ := excelize.ColumnNumberToName(i + 1)
		ref := fmt.Sprintf("%s%d", col, overviewHeaderRow)
		f.SetCellStr(sh, ref, c.Header)
		f.SetColWidth(sh, col, col, widths[i])
	}
	lastCol, _ := excelize.ColumnNumberToName(len(exOverviewColumns))
	f.SetCellStyle(sh, fmt.Sprintf("A%d", overviewHeaderRow), fmt.Sprintf("%s%d", lastCol, overviewHeaderRow), st.Header)

	for i, p := range plans {
		sheet := ""
		if sheets != nil {
			sheet = sheets[i]
		}
		if err := exWriteOverviewRow(f, st, overviewHeaderRow+1+i, p, sheet); err != nil {
			return err
		}
	}
	last := overviewHeaderRow + len(plans)
	if len(plans) > 0 {
		if err := f.AutoFilter(sh, fmt.Sprintf("A%d:%s%d", overviewHeaderRow, lastCol, last), nil); err != nil {
			return err
		}
	}
	for _, row := range []int{2, 3} {
		if err := templates.WrapNote(f, sh, row, exFirstPage(widths)); err != nil {
			return err
		}
	}
	// Too wide for one page at a readable size: across pages, each
	// repeating the sheet column and the header row.
	if err := templates.SetPrintLayout(f, sh, templates.PrintSetup{TitleFirst: overviewHeaderRow, TitleLast: overviewHeaderRow,
		Scale: templates.WideScale, TitleCols: 1}); err != nil {
		return err
	}
	return f.SetPanes(sh, &excelize.Panes{
		Freeze: true, XSplit: 1, YSplit: overviewHeaderRow,
		TopLeftCell: fmt.Sprintf("B%d", overviewHeaderRow+1), ActivePane: "bottomRight",
		Selection: []excelize.Selection{{SQRef: fmt.Sprintf("B%d", overviewHeaderRow+1), ActiveCell: fmt.Sprintf("B%d", overviewHeaderRow+1), Pane: "bottomRight"}},
	})
}

// exOverviewWidths are the Overview's column widths: exOverviewColumns',
// the Sheet column widened to its longest sheet name (at most 31
// characters, Excel's limit), so that no link to a sheet is cut short on
// the screen or the printed page: the next column is never empty, so a
// longer name would not spill over it.
func exOverviewWidths(sheets []string) []float64 {
	widths := make([]float64, len(exOverviewColumns))
	for i, c := range exOverviewColumns {
		widths[i] = c.Width
	}
	longest := 0
	for _, s := range sheets {
		longest = max(longest, utf8.RuneCountInString(s))
	}
	// A character of the link's font takes about 1.1 width units (wider
	// than the default font's), and the cell's padding one more.
	widths[0] = max(widths[0], float64(longest)*1.1+1)
	return widths
}

// exFirstPageWidth is the width, in characters, of the columns the
// Overview's first printed page holds at templates.WideScale (A to G with
// the columns' own widths): the notes above the table wrap within it, not
// across a page's edge, however wide the Sheet column is.
const exFirstPageWidth = 130

// exFirstPage returns the widths of the columns, from A, that fit
// exFirstPageWidth (at least one).
func exFirstPage(widths []float64) []float64 {
	total := 0.0
	for i, w := range widths {
		if total += w; i > 0 && total > exFirstPageWidth {
			return widths[:i]
		}
	}
	return widths
}

// exWriteOverviewRow writes plan p's row of the Overview: its identifiers,
// dates and counts, each cell styled by its column's kind, and a link to
// its sheet (sheet, "" when it has none).
func exWriteOverviewRow(f *excelize.File, st templates.OverviewStyles, row int, p Plan, sheet string) error {
	sh := OverviewSheet
	in := p.Plan
	years := len(pipeline.PlanYears(in.StartDate, in.EndDate))
	nonZero := 0
	for _, t := range in.Targets {
		for _, v := range t.Counters.All() {
			if v != 0 {
				nonZero++
			}
		}
	}
	values := []any{
		sheet, in.PlanID, p.Account, p.CompanyName,
		in.Company.VAT, in.Company.Registration, in.Company.IDNumber,
		in.Name, exDateValue(in.StartDate), exDateValue(in.EndDate), in.Sector, in.ScorecardID, exEraText(p.Era),
		years, p.Milestones, len(in.Targets), nonZero, exUpdatedValue(p.UpdatedAt),
	}
	for j, c := range exOverviewColumns {
		col, _ := excelize.ColumnNumberToName(j + 1)
		ref := fmt.Sprintf("%s%d", col, row)
		v := values[j]
		switch c.Kind {
		case 'i', 't', 'l':
			if s := v.(string); s != "" {
				if err := f.SetCellStr(sh, ref, s); err != nil {
					return err
				}
			}
		case 'd', 'T':
			if v != nil {
				f.SetCellValue(sh, ref, v)
			}
		default:
			f.SetCellValue(sh, ref, v)
		}
		style := st.Text
		switch c.Kind {
		case 'i':
			style = st.Ident
		case 'n':
			style = st.Number
		case 'd':
			style = st.Date
		case 'T':
			style = st.Datetime
		case 'l':
			if sheet != "" {
				f.SetCellHyperLink(sh, ref, xlsx.QuoteSheet(sheet)+"!A1", "Location",
					excelize.HyperlinkOpts{Tooltip: xlsx.StrPtr("Go to the plan's sheet")})
				style = st.Link
			}
		}
		f.SetCellStyle(sh, ref, ref, style)
	}
	return nil
}

func exDateValue(d pipeline.Date) any {
	if d.IsZero() {
		return nil
	}
	return d.Time()
}

// exChartLevels returns the levels a chart sums per race and gender: the six
// occupational levels that partition the permanent workforce, or every
// level of a catalog that has none of them.
func exChartLevels(cat *pipeline.Catalog) []string {
	levels := cat.Levels()
	var occ []string
	for _, l := range levels {
		if slices.Contains(pipeline.OccupationalLevels, l) {
			occ = append(occ, l)
		}
	}
	if len(occ) > 0 {
		return occ
	}
	return levels
}

// exChartRowPixels is a row of the default height in pixels, as
// drawingXML spans a chart over rows.
const exChartRowPixels = 18

// exChartGroup is one category of a chart: a race and gender.
type exChartGroup struct{ race, gender string }

func (g exChartGroup) label() string { return exTitleWord(g.race) + " " + g.gender }

func exTitleWord(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// exCharts are the charts of an export, laid out plan by plan when they
// are written (chart): the rows of the hidden Chart data sheet and, per
// plan, the charts for its sheet.
type exCharts struct {
	plans       []Plan
	cat         *pipeline.Catalog
	groups      []exChartGroup
	levels      []string
	lastCol     string // the Chart data sheet's last column
	chartWidth  uint   // a chart's width in pixels: the grids' width
	chartHeight uint
	start       []int // each plan's first row on the Chart data sheet
}

// exDataRow is one row of the Chart data sheet.
type exDataRow struct {
	row    int
	values []any
}

// exChart is one chart and the cell of the plan sheet it is anchored to.
type exChart struct {
	Cell  string
	Chart *excelize.Chart
}

// planCharts lays out each plan's totals by race and gender per financial
// year on the hidden Chart data sheet and, for each plan sheet, a clustered
// column chart per target type, below the plan's grids, each on a printed
// page of its own (templates.ChartRows): race and gender along the axis, one series per financial year. It returns nil when
// the catalog has no races and genders to chart.
func planCharts(plans []Plan, cat *pipeline.Catalog) *exCharts {
	var groups []exChartGroup
	for _, r := range cat.Races() {
		for _, g := range cat.Genders() {
			groups = append(groups, exChartGroup{r, g})
		}
	}
	if len(groups) == 0 {
		return nil
	}
	lastCol, _ := excelize.ColumnNumberToName(len(groups) + 1)
	// The charts go below the grids, each on a printed page of its own
	// (templates.ChartRows), as wide as the grids (the sheet prints
	// fitted to that width) and nearly a page high.
	var width uint
	for _, w := range templates.PlanColumnWidths(cat) {
		width += uint(exColPixels(w))
	}
	// A pixel short of the grids' last column's end: a chart ending on
	// the next column's edge is anchored in that column, which the
	// printed width then takes in (and the page prints smaller).
	width--
	out := &exCharts{plans: plans, cat: cat, groups: groups, levels: exChartLevels(cat), lastCol: lastCol,
		chartWidth: width, chartHeight: uint((templates.ChartPageRows - 2) * exChartRowPixels), start: make([]int, len(plans))}
	row := 1
	for i, p := range plans {
		out.start[i] = row
		// Per target type: a title row, a header row, a row per year and a
		// blank row.
		row += len(pipeline.TargetTypes) * (len(exPlanYears(p.Plan)) + 3)
	}
	return out
}

// chart returns the Chart data rows and the charts of the i-th plan.
func (c *exCharts) Chart(i int) ([]exDataRow, []exChart) {
	qd := xlsx.QuoteSheet(ChartDataSheet)
	in := c.plans[i].Plan
	years := exPlanYears(in)
	chartRows := templates.ChartRows(grid.PlanSheetOf(in), c.cat, c.Count(i))
	var data []exDataRow
	var charts []exChart
	row := c.start[i]
	for _, tt := range pipeline.TargetTypes {
		title := fmt.Sprintf("%s: %s by race and gender", in.Name, templates.TargetTypeWords(tt))
		data = append(data, exDataRow{row, []any{title}})
		header := row + 1
		labels := make([]any, 0, len(c.groups)+1)
		labels = append(labels, "Financial year")
		for _, g := range c.groups {
			labels = append(labels, g.label())
		}
		data = append(data, exDataRow{header, labels})
		var series []excelize.ChartSeries
		for y, fy := range years {
			r := header + 1 + y
			t := fy.targets[tt]
			values := make([]any, 0, len(c.groups)+1)
			values = append(values, fy.label)
			for _, g := range c.groups {
				var sum int64
				if t != nil {
					for _, l := range c.levels {
						v, _ := t.Counters.ByName(pipeline.CounterName(g.race, g.gender, l))
						sum += v
					}
				}
				values = append(values, sum)
			}
			data = append(data, exDataRow{r, values})
			series = append(series, excelize.ChartSeries{
				Name:       fmt.Sprintf("%s!$A$%d", qd, r),
				Categories: fmt.Sprintf("%s!$B$%d:$%s$%d", qd, header, c.lastCol, header),
				Values:     fmt.Sprintf("%s!$B$%d:$%s$%d", qd, r, c.lastCol, r),
			})
		}
		row = header + len(years) + 2
		if len(series) == 0 {
			continue
		}
		legend := templates.ChartTextFont
		chart := &excelize.Chart{
			Type:   excelize.Col,
			Series: series,
			Title:  excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
			Format: excelize.GraphicOptions{
				AltText: title, PrintObject: xlsx.BoolPtr(true), LockAspectRatio: false,
			},
			Dimension: excelize.ChartDimension{Width: c.chartWidth, Height: c.chartHeight},
			Legend:    excelize.ChartLegend{Position: "bottom", Font: &legend},
			XAxis:     excelize.ChartAxis{Font: templates.ChartAxisFont, Title: templates.ChartText("Race and gender")},
			YAxis: excelize.ChartAxis{
				Font:           templates.ChartAxisFont,
				MajorGridLines: true,
				Title:          templates.ChartText("Permanent employees (target)"),
			},
		}
		charts = append(charts, exChart{fmt.Sprintf("A%d", chartRows[len(charts)]), chart})
	}
	return data, charts
}

// count returns how many charts the i-th plan has (see chart): one per
// target type when it has a financial year with a target, else none.
func (c *exCharts) Count(i int) int {
	if len(exPlanYears(c.plans[i].Plan)) == 0 {
		return 0
	}
	return len(pipeline.TargetTypes)
}

type exChartYear struct {
	label   string
	targets map[string]*pipeline.InputTarget
}

// exPlanYears groups a plan's targets by financial year, in year order.
func exPlanYears(in *pipeline.InputPlan) []exChartYear {
	byYear := map[int]*exChartYear{}
	var order []int
	for _, t := range in.Targets {
		n, ok := t.Year(in.StartDate)
		if !ok {
			continue
		}
		cy := byYear[n]
		if cy == nil {
			label := fmt.Sprintf("Year %d", n)
			switch {
			case t.FinancialYear != 0:
				label = t.FinancialYear.String()
			case !in.StartDate.IsZero():
				label = (pipeline.FinancialYearOf(in.StartDate) + pipeline.FinancialYear(n-1)).String()
			}
			cy = &exChartYear{label: label, targets: map[string]*pipeline.InputTarget{}}
			byYear[n] = cy
			order = append(order, n)
		}
		cy.targets[t.TargetType] = t
	}
	slices.Sort(order)
	out := make([]exChartYear, len(order))
	for i, n := range order {
		out[i] = *byYear[n]
	}
	return out
}
