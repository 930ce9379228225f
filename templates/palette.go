package templates

import "github.com/xuri/excelize/v2"

// The palette of eepipe's workbooks and reports (RGB hex): every colour a
// writer gives a cell, a font, a border or a chart mark is named here.
const (
	// A good, a bad and a doubtful cell, in the colours of Excel's own
	// Good, Bad and Neutral cell styles: a met target or a plan written
	// (good), a short target, a failed plan or an error (bad), a plan not
	// applied or a warning (warn).
	GoodFill = "C6EFCE"
	GoodText = "006100"
	BadFill  = "FFC7CE"
	BadText  = "9C0006"
	WarnFill = "FFEB9C"
	WarnText = "9C5700"

	// BorderColor is the thin grey border of the plan sheets' cells and the
	// report tables'.
	BorderColor = "BFBFBF"
	// BandFill is the light blue of a grid's label row and of a report's
	// header or plan row.
	BandFill = "DDEBF7"
	// NoteColor is the grey of a note's text under a title.
	NoteColor = "595959"
	// HeadingColor is the dark blue of a plan's heading in the check
	// report.
	HeadingColor = "1F3864"

	// The Overview's and the reports' tables (OverviewStyles).
	TableTitleColor  = "1F4E79" // the title, and the header row's fill
	TableBorderColor = "D0D7DE"
	LinkColor        = "0563C1" // a link to a plan's sheet or a cell
	// ProblemLinkColor is the colour of a problem's link to its cell on
	// the annotated copy's problems sheet.
	ProblemLinkColor = "1265BE"

	// The annotated reconciliation copy: a counter whose workbook value
	// differs from the service's (DiffFill), a plan-level note (PlanFill:
	// missing on the server, metadata differs, not compared), a counter
	// changed on the service since eepipe last wrote it (ServiceFill) and
	// one changed in both (ConflictFill).
	DiffFill     = "F4B183"
	PlanFill     = "FFE699"
	ServiceFill  = "9DC3E6"
	ConflictFill = "FF7C80"

	// TargetMarkColor is the red of the sector target's mark on a chart.
	TargetMarkColor = "C00000"
	// ChartAxisColor is the dark grey of a chart's axis labels, and
	// ChartTitleColor the grey of its title.
	ChartAxisColor  = "404040"
	ChartTitleColor = "595959"
)

// SolidFill is a cell filled with one colour.
func SolidFill(color string) excelize.Fill {
	return excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{color}}
}

// ThinBorder is a thin border of one colour on the four sides of a cell.
func ThinBorder(color string) []excelize.Border {
	return []excelize.Border{
		{Type: "left", Color: color, Style: 1}, {Type: "right", Color: color, Style: 1},
		{Type: "top", Color: color, Style: 1}, {Type: "bottom", Color: color, Style: 1},
	}
}
