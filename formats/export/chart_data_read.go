package export

import (
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// chartDataTitleEnd ends every title row of the Chart data sheet
// ("Acme plan: all employees by race and gender", chartLayout.Data).
const chartDataTitleEnd = " by race and gender"

// chartDataProbeRows is how many rows IsChartData looks at: as many as
// the readers look at for plans on a hidden sheet.
const chartDataProbeRows = 500

// IsChartData reports whether a sheet is the hidden Chart data sheet of
// eepipe's own export, as chartLayout.Data lays it out: named ChartDataSheet,
// hidden, and every row one of a title ("…: all employees by race and
// gender", one cell), the header below it ("Financial year" and a race and
// gender per column) or a year's row (its label, then numbers only). The
// readers pass it over in silence: it holds the charts' sums, never the
// plans, which are on the plan sheets (docs/formats.md, the grid
// workbook). A sheet that differs in any row is not it, and is treated
// as any hidden sheet is.
func IsChartData(b *xlsx.Book, info xlsx.Sheet) bool {
	if !info.Hidden || info.Name != ChartDataSheet || info.Path == "" {
		return false
	}
	titles, ok := 0, true
	var cells []pipeline.Cell // reused row to row
	err := b.ScanSheet(info, func(row int, raw []xlsx.RawCell) bool {
		if row > chartDataProbeRows {
			return false // as far as the readers look for plans (grid.SheetAt)
		}
		cells = cells[:0]
		for i := range raw {
			if c := b.Cell(&raw[i], pipeline.Origin{}); c.Kind != pipeline.CellBlank {
				c.Origin.Column = raw[i].Col
				cells = append(cells, c)
			}
		}
		if len(cells) == 0 {
			return true
		}
		ok = cells[0].Origin.Column == 1 && chartDataRow(cells, &titles)
		return ok
	})
	return err == nil && ok && titles > 0
}

// chartDataRow reports whether the cells of one row (from column A, blank
// cells left out) are a row of the Chart data sheet, counting its titles.
func chartDataRow(cells []pipeline.Cell, titles *int) bool {
	first := strings.TrimSpace(cells[0].Text)
	switch {
	case len(cells) == 1 && strings.HasSuffix(first, chartDataTitleEnd):
		*titles++
		return true
	case first == "Financial year":
		for _, c := range cells[1:] {
			if c.Kind != pipeline.CellText || len(strings.Fields(c.Text)) != 2 {
				return false
			}
		}
		return *titles > 0
	case cells[0].Kind != pipeline.CellText:
		return false
	}
	for _, c := range cells[1:] {
		if c.Kind != pipeline.CellNumber {
			return false
		}
	}
	return *titles > 0
}
