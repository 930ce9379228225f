package templates

import "github.com/xuri/excelize/v2"

// DateFormat is the number format of every date cell eepipe writes: ISO,
// so that a date reads the same in every locale.
const DateFormat = "yyyy-mm-dd"

// The number formats of the sector figures in the reports: a percentage
// share to one decimal, percentage points to two.
const (
	PercentFormat = "0.0"
	PointsFormat  = "0.00"
)

// Column widths shared by the workbooks.
const (
	LabelWidth      = 44.0 // the label column of a grid plan sheet
	CounterWidth    = 10.5 // a counter column
	FlatColumnWidth = 16.0 // a flat table's plan column
)

// HelpSize is the font size of help text (Styles.Help), in points: a
// plan sheet prints fitted to its grids' width (about 75% in LibreOffice),
// at which 10 pt prints at 7.5 pt, the smallest a printed page holds
// (docs/export-and-reconcile.md, "Printing").
const HelpSize = 10

// Colours of the workbooks (RGB hex).
const (
	colorHeader = "1F4E78" // dark blue: header rows
	colorInput  = "FFFFFF" // input cells
	colorTotal  = "F2F2F2" // grey: summary rows
	colorHelp   = "7F7F7F"
)

// Styles are the cell style ids of one workbook. NewStyles registers them
// with the workbook; excelize reuses identical styles, so calling it twice
// on one workbook is harmless.
type Styles struct {
	Title        int // sheet title
	Subtitle     int // a line of explanation under the title
	Help         int // grey help text beside an input, wrapped
	MetaLabel    int // a metadata label ("Plan name")
	Text         int // a text input
	Identifier   int // a text input that keeps leading zeros (number format "@")
	Integer      int // a whole-number input
	Date         int // a date input (DateFormat)
	GridLabel    int // a grid's label row
	Header       int // a column header (race, gender, flat table header)
	LevelLabel   int // an occupational level row label
	TotalLabel   int // a summary level row label (totals, temporary)
	Counter      int // a counter cell
	TotalCounter int // a counter cell of a summary row
	NoCounter    int // a grid cell whose race, gender and level the catalog has no counter for
	Paragraph    int // a wrapped paragraph on the Instructions sheet
	Heading      int // a heading on the Instructions sheet
}

// NewStyles registers the shared styles with f.
func NewStyles(f *excelize.File) (*Styles, error) {
	border := ThinBorder(BorderColor)
	fill := SolidFill
	dateFmt := DateFormat
	textFmt := "@"
	s := &Styles{}
	defs := []struct {
		dst *int
		s   *excelize.Style
	}{
		{&s.Title, &excelize.Style{Font: &excelize.Font{Bold: true, Size: 14, Color: colorHeader}}},
		{&s.Subtitle, &excelize.Style{Font: &excelize.Font{Italic: true, Color: colorHelp}}},
		{&s.Help, &excelize.Style{Font: &excelize.Font{Italic: true, Size: HelpSize, Color: colorHelp},
			Alignment: &excelize.Alignment{WrapText: true, Vertical: "center"}}},
		{&s.MetaLabel, &excelize.Style{Font: &excelize.Font{Bold: true}, Border: border, Fill: fill(colorTotal), Alignment: &excelize.Alignment{Vertical: "center"}}},
		{&s.Text, &excelize.Style{Border: border, Fill: fill(colorInput), CustomNumFmt: &textFmt,
			Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "center"}}},
		{&s.Identifier, &excelize.Style{Border: border, Fill: fill(colorInput), CustomNumFmt: &textFmt,
			Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "center"}}},
		{&s.Integer, &excelize.Style{Border: border, Fill: fill(colorInput), NumFmt: 1,
			Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "center"}}},
		{&s.Date, &excelize.Style{Border: border, Fill: fill(colorInput), CustomNumFmt: &dateFmt,
			Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "center"}}},
		{&s.GridLabel, &excelize.Style{Font: &excelize.Font{Bold: true, Size: 12, Color: colorHeader}, Fill: fill(BandFill)}},
		{&s.Header, &excelize.Style{Font: &excelize.Font{Bold: true, Color: "FFFFFF"}, Fill: fill(colorHeader), Border: border,
			Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center", WrapText: true}}},
		{&s.LevelLabel, &excelize.Style{Border: border, Alignment: &excelize.Alignment{WrapText: true, Vertical: "center"}}},
		{&s.TotalLabel, &excelize.Style{Font: &excelize.Font{Bold: true}, Border: border, Fill: fill(colorTotal),
			Alignment: &excelize.Alignment{WrapText: true, Vertical: "center"}}},
		{&s.Counter, &excelize.Style{Border: border, Fill: fill(colorInput), NumFmt: 1}},
		{&s.TotalCounter, &excelize.Style{Font: &excelize.Font{Bold: true}, Border: border, Fill: fill(colorTotal), NumFmt: 1}},
		{&s.NoCounter, &excelize.Style{Border: border, Fill: excelize.Fill{Type: "pattern", Pattern: 4, Color: []string{colorHelp}}}},
		{&s.Paragraph, &excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}},
		{&s.Heading, &excelize.Style{Font: &excelize.Font{Bold: true, Size: 12, Color: colorHeader}}},
	}
	for _, d := range defs {
		id, err := f.NewStyle(d.s)
		if err != nil {
			return nil, err
		}
		*d.dst = id
	}
	return s, nil
}
