package formats

import (
	"strings"

	"github.com/xuri/excelize/v2"
)

// reusableStyle returns the cell style idx of f as a Style that NewStyle
// can write back with changes (an empty Style for idx 0 or a style
// excelize cannot read), for the reports that mark cells of the
// consultant's own workbook while keeping the rest of each cell's look.
//
// GetStyle reports colours as the workbook spells them, and NewStyle puts
// "FF" in front of whatever it is given. A workbook from Excel spells
// colours "FFRRGGBB", which GetStyle shortens to "RRGGBB"; one from
// openpyxl spells them "00RRGGBB", which would come back as ten hex digits
// ("FF00000000"), and a border without a colour as "FF": Excel repairs
// such a file and openpyxl refuses to open it. Every colour is therefore
// cut to its six RGB digits, and one that is no colour is dropped (a
// border's turns black, as Excel draws a border without a colour).
func reusableStyle(f *excelize.File, idx int) *excelize.Style {
	st := &excelize.Style{}
	if idx > 0 {
		if got, err := f.GetStyle(idx); err == nil && got != nil {
			st = got
		}
	}
	if st.Font != nil {
		st.Font.Color = styleRGB(st.Font.Color)
		if st.Font.Color != "" || st.Font.ColorTheme != nil {
			st.Font.ColorIndexed = -1 // one colour, not an indexed one beside it
		}
	}
	for i := range st.Border {
		if st.Border[i].Color = styleRGB(st.Border[i].Color); st.Border[i].Color == "" {
			st.Border[i].Color = "000000"
		}
	}
	var fill []string
	for _, c := range st.Fill.Color {
		if c = styleRGB(c); c != "" {
			fill = append(fill, c)
		}
	}
	if st.Fill.Color = fill; len(fill) == 0 {
		st.Fill = excelize.Fill{}
	}
	return st
}

// styleRGB returns a colour as NewStyle takes it: six upper-case hex digits,
// the alpha of an eight-digit ARGB colour dropped; "" for anything else.
func styleRGB(c string) string {
	c = strings.ToUpper(strings.TrimPrefix(strings.TrimSpace(c), "#"))
	if len(c) == 8 {
		c = c[2:]
	}
	if len(c) != 6 {
		return ""
	}
	for _, r := range c {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'F') {
			return ""
		}
	}
	return c
}
