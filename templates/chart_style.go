package templates

import "github.com/xuri/excelize/v2"

// ChartFontSize is the font size of every chart's axis labels, axis
// titles and legend, in points. A chart prints at its sheet's scale: a
// plan sheet fitted to its grids' width (about 75% in LibreOffice), the
// Sector targets sheet at 68% (reports.SectorPrintScale); at either, 11 pt prints at 7.5 pt
// or more, the smallest a printed page holds (excelize's default of 9 pt
// printed at 5.8 pt).
const ChartFontSize = 11

// ChartAxisFont is the font of every chart's axis labels: a normal dark
// grey (excelize's default is a near-invisible #D9D9D9), ChartFontSize.
var ChartAxisFont = excelize.Font{Color: ChartAxisColor, Size: ChartFontSize}

// ChartTextFont is the font of every chart's axis titles and legend.
var ChartTextFont = excelize.Font{Size: ChartFontSize}

// ChartText returns a chart title's text in ChartTextFont.
func ChartText(text string) excelize.ChartTitle {
	f := ChartTextFont
	return excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: text, Font: &f}}}
}
