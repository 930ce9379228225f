package reports

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// AddSectorCharts adds, for every plan with years to show, a block of chart
// data (one row per level and group, one column per year, and the target)
// and a chart of it: columns for the shares of each year, markers for the
// targets.
// sectorChartPass is what a pass of AddSectorCharts writes.
type sectorChartPass int

const (
	sectorChartObjects sectorChartPass = iota // the charts only
	sectorChartCells                          // their data cells only (and the page breaks)
	sectorChartBreaks                         // the page breaks only
	SectorChartStream                         // their data cells, to a sectorChartSink only
)

// sectorChartSink receives a row of chart data: vals from column
// SectorChartCol on, the first cell styled with style (0: none).
type sectorChartSink func(row int, vals []any, style int) error

// AddSectorCharts adds, per plan, a block of chart data and a chart of it.
// The charts are added in a pass of their own before any row of the sheet
// is written: excelize places a chart by looking up the height of each row
// it spans among all the sheet's rows, which over a sheet of thousands of
// rows and a chart per plan is cubic; the data cells follow in a second
// pass, once the table is written.
func AddSectorCharts(f *excelize.File, sheet string, plans []sector.SectorPlanCheck, st *templates.Styles, pass sectorChartPass, sink sectorChartSink) error {
	if sink == nil {
		sink = func(row int, vals []any, style int) error {
			c, _ := excelize.CoordinatesToCellName(SectorChartCol, row)
			if err := f.SetSheetRow(sheet, c, &vals); err != nil {
				return err
			}
			if style != 0 {
				return f.SetCellStyle(sheet, c, c, style)
			}
			return nil
		}
	}
	// The first block on the first data row: the header row, repeated on
	// every printed page, belongs to the table.
	top := SectorFirstRow
	var tops []int
	for _, p := range plans {
		if len(p.Years) == 0 || p.Sector == "" {
			continue
		}
		name := strings.ToUpper(p.Title()[:1]) + p.Title()[1:]
		title := fmt.Sprintf("%s (%s): designated-group shares per year against the targets", name, p.Sector)
		cells := pass == sectorChartCells || pass == SectorChartStream
		if cells {
			if err := sink(top, []any{"Chart data: " + name}, st.Heading); err != nil {
				return err
			}
		}
		header := []any{"Level and group"}
		for _, y := range p.Years {
			header = append(header, y.Label())
		}
		header = append(header, "Target")
		if cells {
			if err := sink(top+1, header, 0); err != nil {
				return err
			}
		}
		row := top + 2
		levels := sector.SectorLevels
		for _, level := range levels {
			for _, g := range []string{"male", "female"} {
				vals := []any{fmt.Sprintf("%s: designated %s", sectorLevelLabel(level), g)}
				var target any
				for _, y := range p.Years {
					var v any
					for _, l := range y.Levels {
						if l.Level != level {
							continue
						}
						s, t := l.Male, l.TargetMale
						if g == "female" {
							s, t = l.Female, l.TargetFemale
						}
						if s != nil {
							v = sectorRound2(s.ActualPct)
						}
						if l.HasTarget {
							target = t.Float()
						}
					}
					vals = append(vals, v)
				}
				vals = append(vals, target)
				if cells {
					if err := sink(row, vals, 0); err != nil {
						return err
					}
				}
				row++
			}
		}
		chart, line := sectorPlanChart(sheet, title, len(p.Years), top, row-1)
		if pass == sectorChartObjects {
			if err := f.AddChart(sheet, fmt.Sprintf("%s%d", sectorChartAt, top), chart, line); err != nil {
				return err
			}
		}
		tops = append(tops, top)
		top += sectorChartRows
	}
	if pass != sectorChartCells && pass != sectorChartBreaks {
		return nil // the breaks go in with the cells, once the columns have their widths
	}
	return sectorChartPageBreaks(f, sheet, tops)
}

// sectorChartWidth is a Sector targets chart's width in pixels: it prints
// on a page beside the columns that name a row (sectorPrint), at
// SectorPrintScale, and fits what they leave of it.
const sectorChartWidth = 620

// sectorPlanChart is the chart of one plan's block of chart data, its
// header at row top and its data from top+2 to last: a column per
// financial year (years of them), and the targets as dashes over them.
func sectorPlanChart(sheet, title string, years, top, last int) (chart, line *excelize.Chart) {
	abs := func(col, row int) string {
		c, _ := excelize.CoordinatesToCellName(col, row, true)
		return c
	}
	catRef := fmt.Sprintf("%s!%s:%s", xlsx.QuoteSheet(sheet), abs(SectorChartCol, top+2), abs(SectorChartCol, last))
	var bars []excelize.ChartSeries
	for i := range years {
		col := SectorChartCol + 1 + i
		bars = append(bars, excelize.ChartSeries{
			Name:       fmt.Sprintf("%s!%s", xlsx.QuoteSheet(sheet), abs(col, top+1)),
			Categories: catRef,
			Values:     fmt.Sprintf("%s!%s:%s", xlsx.QuoteSheet(sheet), abs(col, top+2), abs(col, last)),
		})
	}
	tcol := SectorChartCol + 1 + years
	targets := []excelize.ChartSeries{{
		Name:       fmt.Sprintf("%s!%s", xlsx.QuoteSheet(sheet), abs(tcol, top+1)),
		Categories: catRef,
		Values:     fmt.Sprintf("%s!%s:%s", xlsx.QuoteSheet(sheet), abs(tcol, top+2), abs(tcol, last)),
		Line:       excelize.LineOptions{Type: excelize.LineNone},
		Marker:     excelize.ChartMarker{Symbol: "dash", Size: 20, Fill: templates.SolidFill(templates.TargetMarkColor)},
	}}
	minPct, vary, legend := 0.0, false, templates.ChartTextFont
	chart = &excelize.Chart{
		Type:       excelize.Col,
		VaryColors: &vary,
		Series:     bars,
		Title:      excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
		Legend:     excelize.ChartLegend{Position: "bottom", Font: &legend},
		Dimension:  excelize.ChartDimension{Width: sectorChartWidth, Height: 400},
		XAxis:      excelize.ChartAxis{Font: templates.ChartAxisFont},
		YAxis:      excelize.ChartAxis{Font: templates.ChartAxisFont, MajorGridLines: true, Minimum: &minPct, Title: templates.ChartText("% of the level's headcount")},
		Format:     excelize.GraphicOptions{OffsetX: 10, OffsetY: 5},
	}
	// The same axes: excelize draws a combination's axes from the line's
	// options (with none, 9 pt, which prints under 7 pt at the sheet's
	// scale).
	line = &excelize.Chart{Type: excelize.Line, Series: targets, VaryColors: &vary, XAxis: chart.XAxis, YAxis: chart.YAxis}
	return chart, line
}

// Page geometry of the Sector targets sheet's print setup (A4 landscape,
// templates.SetPrintLayout's margins, sectorPrint's scale), in points.
const (
	sectorPageHeightPt = (8.27 - 2*0.55) * 72 // printable height
	sectorTitleRowPt   = 45                   // row 5, repeated on every page
	sectorRowPt        = 15                   // a row, as Excel draws it (LibreOffice: 12.8)
)

// sectorChartPageBreaks puts a page break before a chart that would otherwise
// straddle two printed pages. The sheet prints at SectorPrintScale, so
// a page holds as many rows as that scale allows: estimated here on the
// safe side (Excel's taller rows, less a tenth), a page never ends sooner
// than estimated, and a chart (tops: each chart's first row,
// sectorChartRows apart) that fits in the rows left on the page is printed
// whole.
func sectorChartPageBreaks(f *excelize.File, sheet string, tops []int) error {
	if len(tops) == 0 {
		return nil
	}
	scale := float64(SectorPrintScale) / 100
	perPage := int((sectorPageHeightPt/scale - sectorTitleRowPt) / sectorRowPt * 0.9)
	if perPage <= sectorChartRows {
		return nil // a page holds no more than one chart: breaks would not help
	}
	pageStart := 1
	for _, t := range tops {
		last := t + sectorChartRows - 1
		if last-pageStart+1 <= perPage {
			continue
		}
		if t > pageStart {
			if err := f.InsertPageBreak(sheet, fmt.Sprintf("A%d", t)); err != nil {
				return err
			}
		}
		pageStart = t
	}
	return nil
}
