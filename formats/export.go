package formats

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// OverviewSheet and ChartDataSheet are the sheets the XLSX export adds
// beside the plan sheets.
const (
	OverviewSheet  = "Overview"
	ChartDataSheet = "Chart data"
)

// ExportPlan is one plan of an export: the file model written to its plan
// sheet (from pipeline.FromServer, so with the plan id, the company
// identifiers and every counter) and what only the server knows, for the
// Overview sheet.
type ExportPlan struct {
	Plan        *pipeline.InputPlan
	Account     string // configured account name; "" with a single account
	CompanyName string // trading name from the company lookup
	Era         string // pre_2025 or post_2025
	Milestones  int    // financial years the server holds
	UpdatedAt   string // the server's updated_at
}

// ExportOptions shape the XLSX export.
type ExportOptions struct {
	Catalog     *pipeline.Catalog // nil = default catalog
	GeneratedAt time.Time         // shown on the Overview sheet; zero = now
	Source      string            // where the plans came from (the service URL), shown on the Overview sheet
	NoCharts    bool              // leave the per-plan charts out
}

func (o ExportOptions) catalog() *pipeline.Catalog {
	if o.Catalog != nil {
		return o.Catalog
	}
	return pipeline.DefaultCatalog()
}

// NewExportWorkbook builds the XLSX export in memory: an Overview sheet
// listing the plans, one grid sheet per plan (AddGridSheets, so the file
// re-imports onto the same plans), and on each plan sheet two charts of the
// targets by race and gender across the plan's financial years, for all
// employees and for employees with disabilities. Callers may add sheets
// (AddSectorSheet) before writing it with WriteWorkbook.
func NewExportWorkbook(plans []ExportPlan, opts ExportOptions) (*excelize.File, error) {
	cat := opts.catalog()
	f := excelize.NewFile()
	first := f.GetSheetName(0)
	if err := f.SetSheetName(first, OverviewSheet); err != nil {
		f.Close()
		return nil, err
	}
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	before := f.GetSheetList()
	if err := AddGridSheets(f, inputs, cat, GridOptions{}); err != nil {
		f.Close()
		return nil, err
	}
	sheets := exNewSheets(before, f.GetSheetList())
	if len(sheets) != len(plans) {
		sheets = nil // cannot tell which sheet is which plan's: no links, no charts
	}
	if err := exWriteOverview(f, plans, sheets, opts); err != nil {
		f.Close()
		return nil, err
	}
	if !opts.NoCharts && sheets != nil {
		if err := exAddPlanCharts(f, plans, sheets, cat); err != nil {
			f.Close()
			return nil, err
		}
	}
	f.SetActiveSheet(0)
	return f, nil
}

// WriteFlatExportXLSX writes the flat XLSX export to path (atomically): the
// Overview sheet and the flat table on the sheet Targets, written with the
// StreamWriter so that large exports stay small in memory.
func WriteFlatExportXLSX(path string, plans []ExportPlan, opts ExportOptions) error {
	cat := opts.catalog()
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	rows, err := flatRows(inputs, cat)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	f := excelize.NewFile()
	defer f.Close()
	if err := writeFlatSheet(f, rows, cat); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	table := f.GetSheetName(0)
	if _, err := f.NewSheet(OverviewSheet); err != nil {
		return err
	}
	if err := exWriteOverview(f, plans, nil, opts); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := f.MoveSheet(OverviewSheet, table); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	f.SetActiveSheet(0)
	return WriteWorkbook(path, f)
}

// WriteExportXLSX writes the XLSX export of plans to path (atomically).
func WriteExportXLSX(path string, plans []ExportPlan, opts ExportOptions) error {
	f, err := NewExportWorkbook(plans, opts)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer f.Close()
	return WriteWorkbook(path, f)
}

// exNewSheets returns the plan sheets AddGridSheets added: the sheets of
// after that are not in before, less its Lists and Instructions sheets.
func exNewSheets(before, after []string) []string {
	var out []string
	for _, s := range after {
		if !slices.Contains(before, s) && s != templates.ListsSheet && s != templates.InstructionsSheet {
			out = append(out, s)
		}
	}
	return out
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
	{"Account", 14, 't'},
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
	{"Last updated", 22, 't'},
}

// exOverviewHeaderRow is the row of the Overview table's header.
const exOverviewHeaderRow = 4

func exWriteOverview(f *excelize.File, plans []ExportPlan, sheets []string, opts ExportOptions) error {
	sh := OverviewSheet
	st, err := exNewOverviewStyles(f)
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
	f.SetCellStyle(sh, "A1", "A1", st.title)
	sub := fmt.Sprintf("%d plan(s) exported %s UTC", len(plans), at.UTC().Format("2006-01-02 15:04"))
	if opts.Source != "" {
		sub += " from " + opts.Source
	}
	sub += ". Each plan has its own sheet; edit the counters there and apply the file to update the service."
	f.SetCellStr(sh, "A2", sub)
	f.SetCellStyle(sh, "A2", "A2", st.note)

	for i, c := range exOverviewColumns {
		col, _ := excelize.ColumnNumberToName(i + 1)
		ref := fmt.Sprintf("%s%d", col, exOverviewHeaderRow)
		f.SetCellStr(sh, ref, c.Header)
		f.SetColWidth(sh, col, col, c.Width)
	}
	lastCol, _ := excelize.ColumnNumberToName(len(exOverviewColumns))
	f.SetCellStyle(sh, fmt.Sprintf("A%d", exOverviewHeaderRow), fmt.Sprintf("%s%d", lastCol, exOverviewHeaderRow), st.header)

	for i, p := range plans {
		row := exOverviewHeaderRow + 1 + i
		in := p.Plan
		years := len(pipeline.PlanYears(in.StartDate, in.EndDate))
		nonZero := 0
		for _, t := range in.Targets {
			for _, v := range t.Counters {
				if v != 0 {
					nonZero++
				}
			}
		}
		sheet := ""
		if sheets != nil {
			sheet = sheets[i]
		}
		values := []any{
			sheet, in.PlanID, p.Account, p.CompanyName,
			in.Company.VAT, in.Company.Registration, in.Company.IDNumber,
			in.Name, exDateValue(in.StartDate), exDateValue(in.EndDate), in.Sector, in.ScorecardID, p.Era,
			years, p.Milestones, len(in.Targets), nonZero, p.UpdatedAt,
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
			case 'd':
				if v != nil {
					f.SetCellValue(sh, ref, v)
				}
			default:
				f.SetCellValue(sh, ref, v)
			}
			style := st.text
			switch c.Kind {
			case 'i':
				style = st.ident
			case 'n':
				style = st.number
			case 'd':
				style = st.date
			case 'l':
				if sheet != "" {
					f.SetCellHyperLink(sh, ref, exQuoteSheet(sheet)+"!A1", "Location",
						excelize.HyperlinkOpts{Tooltip: exStrPtr("Go to the plan's sheet")})
					style = st.link
				}
			}
			f.SetCellStyle(sh, ref, ref, style)
		}
	}
	last := exOverviewHeaderRow + len(plans)
	if len(plans) > 0 {
		if err := f.AutoFilter(sh, fmt.Sprintf("A%d:%s%d", exOverviewHeaderRow, lastCol, last), nil); err != nil {
			return err
		}
	}
	return f.SetPanes(sh, &excelize.Panes{
		Freeze: true, XSplit: 1, YSplit: exOverviewHeaderRow,
		TopLeftCell: fmt.Sprintf("B%d", exOverviewHeaderRow+1), ActivePane: "bottomRight",
		Selection: []excelize.Selection{{SQRef: fmt.Sprintf("B%d", exOverviewHeaderRow+1), ActiveCell: fmt.Sprintf("B%d", exOverviewHeaderRow+1), Pane: "bottomRight"}},
	})
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

// Placement of the charts on a plan sheet: the first beside the first grid,
// the second below it.
const (
	exChartFirstRow = 14
	exChartRows     = 18
)

// exChartGroup is one category of a chart: a race and gender.
type exChartGroup struct{ race, gender string }

func (g exChartGroup) label() string { return exTitleWord(g.race) + " " + g.gender }

func exTitleWord(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// exAddPlanCharts writes each plan's totals by race and gender per financial
// year to the hidden Chart data sheet and adds, to the right of the plan's
// grid, a clustered column chart per target type: race and gender along the
// axis, one series per financial year.
func exAddPlanCharts(f *excelize.File, plans []ExportPlan, sheets []string, cat *pipeline.Catalog) error {
	var groups []exChartGroup
	for _, r := range cat.Races() {
		for _, g := range cat.Genders() {
			groups = append(groups, exChartGroup{r, g})
		}
	}
	if len(groups) == 0 {
		return nil
	}
	levels := exChartLevels(cat)
	if _, err := f.NewSheet(ChartDataSheet); err != nil {
		return err
	}
	data := ChartDataSheet
	qd := exQuoteSheet(data)
	lastCol, _ := excelize.ColumnNumberToName(len(groups) + 1)
	// The charts go right of the grids (a label column and one column per
	// race and gender), beside the first grids, below the metadata.
	anchor, _ := excelize.ColumnNumberToName(len(groups) + 3)
	row := 1
	for i, p := range plans {
		in := p.Plan
		years := exPlanYears(in)
		for k, tt := range pipeline.TargetTypes {
			title := fmt.Sprintf("%s: %s by race and gender", in.Name, exTargetTypeLabel(tt))
			f.SetCellStr(data, fmt.Sprintf("A%d", row), title)
			header := row + 1
			labels := make([]any, 0, len(groups)+1)
			labels = append(labels, "Financial year")
			for _, g := range groups {
				labels = append(labels, g.label())
			}
			if err := f.SetSheetRow(data, fmt.Sprintf("A%d", header), &labels); err != nil {
				return err
			}
			var series []excelize.ChartSeries
			for y, fy := range years {
				r := header + 1 + y
				t := fy.targets[tt]
				values := make([]any, 0, len(groups)+1)
				values = append(values, fy.label)
				for _, g := range groups {
					var sum int64
					if t != nil {
						for _, l := range levels {
							sum += t.Counters[pipeline.CounterName(g.race, g.gender, l)]
						}
					}
					values = append(values, sum)
				}
				if err := f.SetSheetRow(data, fmt.Sprintf("A%d", r), &values); err != nil {
					return err
				}
				series = append(series, excelize.ChartSeries{
					Name:       fmt.Sprintf("%s!$A$%d", qd, r),
					Categories: fmt.Sprintf("%s!$B$%d:$%s$%d", qd, header, lastCol, header),
					Values:     fmt.Sprintf("%s!$B$%d:$%s$%d", qd, r, lastCol, r),
				})
			}
			row = header + len(years) + 2
			if len(series) == 0 {
				continue
			}
			chart := &excelize.Chart{
				Type:   excelize.Col,
				Series: series,
				Title:  excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
				Format: excelize.GraphicOptions{
					AltText: title, PrintObject: exBoolPtr(true), LockAspectRatio: false,
				},
				Dimension: excelize.ChartDimension{Width: 760, Height: 320},
				Legend:    excelize.ChartLegend{Position: "bottom"},
				XAxis:     excelize.ChartAxis{Title: excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "Race and gender"}}}},
				YAxis: excelize.ChartAxis{
					MajorGridLines: true,
					Title:          excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "Permanent employees (target)"}}},
				},
			}
			cell := fmt.Sprintf("%s%d", anchor, exChartFirstRow+k*exChartRows)
			if err := f.AddChart(sheets[i], cell, chart); err != nil {
				return fmt.Errorf("chart for %s: %w", sheets[i], err)
			}
		}
	}
	return f.SetSheetVisible(data, false)
}

func exTargetTypeLabel(tt string) string {
	switch tt {
	case pipeline.TargetAll:
		return "all employees"
	case pipeline.TargetDisabled:
		return "employees with disabilities"
	}
	return strings.ReplaceAll(tt, "_", " ")
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
