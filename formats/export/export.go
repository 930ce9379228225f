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
	var charts *chartLayout
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
	// only sheet, so each cell write finds it at once), then the other
	// sheets in their final order, the active and hidden sheets; the plan
	// sheets, with their charts, exist only in the written package.
	g, err := grid.NewBuild(f, inputs, cat, grid.Options{}, taken)
	if err != nil {
		return fail(err)
	}
	// The plan sheets' parts are laid out from now on, beside the rest.
	wb := &GridWorkbook{File: f, grid: g, charts: charts}
	wb.planParts()
	fail = func(err error) (*GridWorkbook, error) {
		wb.Close()
		return nil, err
	}
	if err := writeOverview(f, plans, g.Names, opts); err != nil {
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
	wb.sector = sector
	return wb, nil
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
	if err := writeOverview(f, plans, nil, opts); err != nil {
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

// overviewColumns are the Overview sheet's columns: header, width, kind.
// The headers are deliberately not the grid's metadata labels ("Plan ID",
// "Start date", ...), so that the readers never take the Overview for a
// plan sheet.
var overviewColumns = []struct {
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

// eraText says in words which rules a plan follows: the service's era
// values are API jargon.
func eraText(era string) string {
	switch era {
	case pipeline.EraPost2025:
		return "2025 onwards"
	case "pre_2025":
		return "before 2025"
	}
	return era
}

// eraNote explains the Era column under the Overview's title.
const eraNote = `Era: "2025 onwards" plans (the service's post_2025) follow the 2025 rules: they end by 31 August 2030 and the 2025 sectoral targets apply; "before 2025" plans (pre_2025) were made under the earlier rules.`

// updatedValue returns the service's updated_at as a time for a
// date-time cell (UTC), or the text as it came when it is not a time.
func updatedValue(s string) any {
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

func writeOverview(f *excelize.File, plans []Plan, sheets []string, opts Options) error {
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
	f.SetCellStr(sh, "A3", eraNote)
	f.SetCellStyle(sh, "A3", "A3", st.Note)

	widths := overviewWidths(sheets)
	for i, c := range overviewColumns {
		col, _ := excelize.ColumnNumberToName(i + 1)
		ref := fmt.Sprintf("%s%d", col, overviewHeaderRow)
		f.SetCellStr(sh, ref, c.Header)
		f.SetColWidth(sh, col, col, widths[i])
	}
	lastCol, _ := excelize.ColumnNumberToName(len(overviewColumns))
	f.SetCellStyle(sh, fmt.Sprintf("A%d", overviewHeaderRow), fmt.Sprintf("%s%d", lastCol, overviewHeaderRow), st.Header)

	for i, p := range plans {
		sheet := ""
		if sheets != nil {
			sheet = sheets[i]
		}
		if err := writeOverviewRow(f, st, overviewHeaderRow+1+i, p, sheet); err != nil {
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
		if err := templates.WrapNote(f, sh, row, firstPage(widths)); err != nil {
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

// overviewWidths are the Overview's column widths: overviewColumns',
// the Sheet column widened to its longest sheet name (at most 31
// characters, Excel's limit), so that no link to a sheet is cut short on
// the screen or the printed page: the next column is never empty, so a
// longer name would not spill over it.
func overviewWidths(sheets []string) []float64 {
	widths := make([]float64, len(overviewColumns))
	for i, c := range overviewColumns {
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

// firstPageWidth is the width, in characters, of the columns the
// Overview's first printed page holds at templates.WideScale (A to G with
// the columns' own widths): the notes above the table wrap within it, not
// across a page's edge, however wide the Sheet column is.
const firstPageWidth = 130

// firstPage returns the widths of the columns, from A, that fit
// firstPageWidth (at least one).
func firstPage(widths []float64) []float64 {
	total := 0.0
	for i, w := range widths {
		if total += w; i > 0 && total > firstPageWidth {
			return widths[:i]
		}
	}
	return widths
}

// writeOverviewRow writes plan p's row of the Overview: its identifiers,
// dates and counts, each cell styled by its column's kind, and a link to
// its sheet (sheet, "" when it has none).
func writeOverviewRow(f *excelize.File, st templates.OverviewStyles, row int, p Plan, sheet string) error {
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
		in.Name, dateValue(in.StartDate), dateValue(in.EndDate), in.Sector, in.ScorecardID, eraText(p.Era),
		years, p.Milestones, len(in.Targets), nonZero, updatedValue(p.UpdatedAt),
	}
	for j, c := range overviewColumns {
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

func dateValue(d pipeline.Date) any {
	if d.IsZero() {
		return nil
	}
	return d.Time()
}

// chartLevels returns the levels a chart sums per race and gender: the six
// occupational levels that partition the permanent workforce, or every
// level of a catalog that has none of them.
func chartLevels(cat *pipeline.Catalog) []string {
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

// chartRowPixels is a row of the default height in pixels, as
// drawingXML spans a chart over rows.
const chartRowPixels = 18

// chartGroup is one category of a chart: a race and gender.
type chartGroup struct{ race, gender string }

func (g chartGroup) label() string { return titleWord(g.race) + " " + g.gender }

func titleWord(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// chartLayout lays out the charts of an export, plan by plan when they
// are written (Data, Charts): the rows of the hidden Chart data sheet and, per
// plan, the charts for its sheet.
type chartLayout struct {
	plans       []Plan
	cat         *pipeline.Catalog
	groups      []chartGroup
	levels      []string
	lastCol     string // the Chart data sheet's last column
	chartWidth  uint   // a chart's width in pixels: the grids' width
	chartHeight uint
	start       []int // each plan's first row on the Chart data sheet
	years       []int // each plan's financial years with a target
	// names are the counters each group's sum adds up (c.levels'), by
	// group.
	names [][]string
}

// dataRow is one row of the Chart data sheet.
type dataRow struct {
	row    int
	values []any
}

// planChart is one chart and the cell of the plan sheet it is anchored to.
type planChart struct {
	Cell  string
	Chart *excelize.Chart
}

// planCharts lays out each plan's totals by race and gender per financial
// year on the hidden Chart data sheet and, for each plan sheet, a clustered
// column chart per target type, below the plan's grids, each on a printed
// page of its own (templates.ChartRows): race and gender along the axis, one series per financial year. It returns nil when
// the catalog has no races and genders to chart.
func planCharts(plans []Plan, cat *pipeline.Catalog) *chartLayout {
	var groups []chartGroup
	for _, r := range cat.Races() {
		for _, g := range cat.Genders() {
			groups = append(groups, chartGroup{r, g})
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
		width += uint(colPixels(w))
	}
	// A pixel short of the grids' last column's end: a chart ending on
	// the next column's edge is anchored in that column, which the
	// printed width then takes in (and the page prints smaller).
	width--
	out := &chartLayout{plans: plans, cat: cat, groups: groups, levels: chartLevels(cat), lastCol: lastCol,
		chartWidth: width, chartHeight: uint((templates.ChartPageRows - 2) * chartRowPixels),
		start: make([]int, len(plans)), years: make([]int, len(plans)), names: make([][]string, len(groups))}
	for k, g := range groups {
		for _, l := range out.levels {
			out.names[k] = append(out.names[k], pipeline.CounterName(g.race, g.gender, l))
		}
	}
	row := 1
	for i, p := range plans {
		out.start[i] = row
		out.years[i] = len(planYears(p.Plan))
		// Per target type: a title row, a header row, a row per year and a
		// blank row.
		row += len(pipeline.TargetTypes) * (out.years[i] + 3)
	}
	return out
}

// Data returns the Chart data rows of the i-th plan: per target type, a
// title row, a header row (race and gender) and a row per financial year
// of the sums over c.levels.
func (c *chartLayout) Data(i int) []dataRow {
	in := c.plans[i].Plan
	years := planYears(in)
	data := make([]dataRow, 0, len(pipeline.TargetTypes)*(len(years)+2))
	row := c.start[i]
	for _, tt := range pipeline.TargetTypes {
		data = append(data, dataRow{row, []any{chartTitle(in, tt)}})
		header := row + 1
		labels := make([]any, 0, len(c.groups)+1)
		labels = append(labels, "Financial year")
		for _, g := range c.groups {
			labels = append(labels, g.label())
		}
		data = append(data, dataRow{header, labels})
		for y, fy := range years {
			t := fy.targets[tt]
			values := make([]any, 0, len(c.groups)+1)
			values = append(values, fy.label)
			for k := range c.groups {
				var sum int64
				if t != nil {
					for _, name := range c.names[k] {
						v, _ := t.Counters.ByName(name)
						sum += v
					}
				}
				values = append(values, sum)
			}
			data = append(data, dataRow{header + 1 + y, values})
		}
		row = header + len(years) + 2
	}
	return data
}

// chartTitle is the title of a plan's chart of target type tt, and of
// its rows on the Chart data sheet.
func chartTitle(in *pipeline.InputPlan, tt string) string {
	return fmt.Sprintf("%s: %s by race and gender", in.Name, templates.TargetTypeWords(tt))
}

// Charts returns the charts of the i-th plan, whose plan sheet has grids
// grids: one per target type, its series the plan's rows on the Chart
// data sheet (Data).
func (c *chartLayout) Charts(i, grids int) []planChart {
	qd := xlsx.QuoteSheet(ChartDataSheet)
	in := c.plans[i].Plan
	years := planYears(in)
	if len(years) == 0 {
		return nil
	}
	chartRows := templates.ChartRows(templates.PlanSheet{Grids: make([]templates.Grid, grids)}, c.cat, len(pipeline.TargetTypes))
	var charts []planChart
	row := c.start[i]
	for _, tt := range pipeline.TargetTypes {
		title := chartTitle(in, tt)
		header := row + 1
		series := make([]excelize.ChartSeries, 0, len(years))
		for y := range years {
			r := header + 1 + y
			series = append(series, excelize.ChartSeries{
				Name:       fmt.Sprintf("%s!$A$%d", qd, r),
				Categories: fmt.Sprintf("%s!$B$%d:$%s$%d", qd, header, c.lastCol, header),
				Values:     fmt.Sprintf("%s!$B$%d:$%s$%d", qd, r, c.lastCol, r),
			})
		}
		row = header + len(years) + 2
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
		charts = append(charts, planChart{fmt.Sprintf("A%d", chartRows[len(charts)]), chart})
	}
	return charts
}

// Count returns how many charts the i-th plan has (see Charts): one per
// target type when it has a financial year with a target, else none.
func (c *chartLayout) Count(i int) int {
	if c.years[i] == 0 {
		return 0
	}
	return len(pipeline.TargetTypes)
}

type chartYear struct {
	label   string
	targets map[string]*pipeline.InputTarget
}

// planYears groups a plan's targets by financial year, in year order.
func planYears(in *pipeline.InputPlan) []chartYear {
	byYear := map[int]*chartYear{}
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
			cy = &chartYear{label: label, targets: map[string]*pipeline.InputTarget{}}
			byYear[n] = cy
			order = append(order, n)
		}
		cy.targets[t.TargetType] = t
	}
	slices.Sort(order)
	out := make([]chartYear, len(order))
	for i, n := range order {
		out[i] = *byYear[n]
	}
	return out
}
