package templates

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// OverviewStyles are the cell styles of the Overview and the reports'
// tables; Wrap is Text wrapped, for a column narrower than its values.
type OverviewStyles struct{ Title, Note, Header, Text, Wrap, Ident, Number, Date, Datetime, Link int }

// NewOverviewStyles registers the Overview styles with f.
func NewOverviewStyles(f *excelize.File) (OverviewStyles, error) {
	var s OverviewStyles
	border := ThinBorder(TableBorderColor)
	dateFmt, dateTimeFmt, textFmt := DateFormat, DateFormat+" hh:mm:ss", "@"
	// Text at the top of its cell, level with a wrapped neighbour's first line.
	text := excelize.Style{Border: border, Alignment: &excelize.Alignment{Vertical: "top"}}
	wrap := text
	wrap.Alignment = &excelize.Alignment{WrapText: true, Vertical: "top"}
	defs := []struct {
		dst   *int
		style *excelize.Style
	}{
		{&s.Title, &excelize.Style{Font: &excelize.Font{Bold: true, Size: 16, Color: TableTitleColor}}},
		{&s.Note, &excelize.Style{Font: &excelize.Font{Italic: true, Color: NoteColor}}},
		{&s.Header, &excelize.Style{
			Font:      &excelize.Font{Bold: true, Color: "FFFFFF"},
			Fill:      SolidFill(TableTitleColor),
			Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
			Border:    border,
		}},
		{&s.Text, &text},
		{&s.Wrap, &wrap},
		{&s.Ident, &excelize.Style{Border: border, CustomNumFmt: &textFmt}},
		{&s.Number, &excelize.Style{Border: border, NumFmt: 1}},
		{&s.Date, &excelize.Style{Border: border, CustomNumFmt: &dateFmt}},
		{&s.Datetime, &excelize.Style{Border: border, CustomNumFmt: &dateTimeFmt}},
		{&s.Link, &excelize.Style{Border: border, Font: &excelize.Font{Color: LinkColor, Underline: "single"}}},
	}
	for _, d := range defs {
		id, err := f.NewStyle(d.style)
		if err != nil {
			return s, err
		}
		*d.dst = id
	}
	return s, nil
}

// noteWidth is the width, in characters, across which WrapNote wraps a
// note: the first printed page of a wide sheet at WideScale
// holds about 180.
const noteWidth = 150

// WrapNote wraps the note in column A of row (one long line of text, set
// and styled) across the first columns that fit noteWidth (widths: the
// sheet's column widths from column A, 0 for the default), merging them,
// and makes the row tall enough for its lines: a note left to run across
// the empty cells beside it is cut at every printed page's edge.
func WrapNote(f *excelize.File, sheet string, row int, widths []float64) error {
	ref := fmt.Sprintf("A%d", row)
	text, err := f.GetCellValue(sheet, ref)
	if err != nil || text == "" {
		return err
	}
	last, total := 0, 0.0
	for i, w := range widths {
		if w == 0 {
			w = 9.14
		}
		if i > 0 && total+w > noteWidth {
			break
		}
		last, total = i, total+w
	}
	if last > 0 {
		end, _ := excelize.CoordinatesToCellName(last+1, row)
		if err := f.MergeCell(sheet, ref, end); err != nil {
			return err
		}
	}
	id, err := f.GetCellStyle(sheet, ref)
	if err != nil {
		return err
	}
	st, err := f.GetStyle(id)
	if err != nil {
		return err
	}
	st.Alignment = &excelize.Alignment{WrapText: true, Vertical: "top"}
	wrapped, err := f.NewStyle(st)
	if err != nil {
		return err
	}
	if err := f.SetCellStyle(sheet, ref, ref, wrapped); err != nil {
		return err
	}
	// Characters of the default font average under a width unit; a tenth
	// more for italics and words that do not break evenly.
	lines := int(math.Ceil(float64(utf8.RuneCountInString(text)) * 1.1 / total))
	return f.SetRowHeight(sheet, row, float64(max(lines, 1))*15)
}
