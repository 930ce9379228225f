package xlsx

import (
	"strings"

	"github.com/xuri/excelize/v2"
)

// ReusableStyle returns the cell style idx of f as a Style that NewStyle
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
func ReusableStyle(f *excelize.File, idx int) *excelize.Style {
	st := &excelize.Style{}
	if idx > 0 {
		if got, err := f.GetStyle(idx); err == nil && got != nil {
			st = got
		}
	}
	if st.Font != nil {
		st.Font.Color = StyleRGB(st.Font.Color)
		if st.Font.Color != "" || st.Font.ColorTheme != nil {
			st.Font.ColorIndexed = -1 // one colour, not an indexed one beside it
		}
	}
	raw := RawBorderColors(f, idx)
	for i := range st.Border {
		if st.Border[i].Color = StyleRGB(st.Border[i].Color); st.Border[i].Color == "" {
			st.Border[i].Color = raw[st.Border[i].Type]
		}
		if st.Border[i].Color == "" {
			st.Border[i].Color = "000000"
		}
	}
	var fill []string
	for _, c := range st.Fill.Color {
		if c = StyleRGB(c); c != "" {
			fill = append(fill, c)
		}
	}
	if st.Fill.Color = fill; len(fill) == 0 {
		st.Fill = excelize.Fill{}
	}
	return st
}

// StyleRGB returns a colour as NewStyle takes it: six upper-case hex digits,
// the alpha of an eight-digit ARGB colour dropped; "" for anything else.
func StyleRGB(c string) string {
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

// RawBorderColors returns the RGB colour of each border line of the cell
// style idx as the style sheet spells it ("left", "right", "top", "bottom",
// "diagonalUp", "diagonalDown"). GetStyle reports no border colour at all
// for a workbook without a theme part (as LibreOffice writes them), even a
// plain RGB one.
func RawBorderColors(f *excelize.File, idx int) map[string]string {
	out := map[string]string{}
	ss := f.Styles
	if ss == nil || ss.CellXfs == nil || ss.Borders == nil || idx <= 0 || idx >= len(ss.CellXfs.Xf) {
		return out
	}
	id := ss.CellXfs.Xf[idx].BorderID
	if id == nil || *id < 0 || *id >= len(ss.Borders.Border) || ss.Borders.Border[*id] == nil {
		return out
	}
	bd := ss.Borders.Border[*id]
	set := func(typ string, present bool, rgb string, indexed int, theme *int) {
		if present {
			if c := StyleRGB(f.GetBaseColor(rgb, indexed, theme)); c != "" {
				out[typ] = c
			}
		}
	}
	if l := bd.Left; l != nil && l.Color != nil {
		set("left", true, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
	}
	if l := bd.Right; l != nil && l.Color != nil {
		set("right", true, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
	}
	if l := bd.Top; l != nil && l.Color != nil {
		set("top", true, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
	}
	if l := bd.Bottom; l != nil && l.Color != nil {
		set("bottom", true, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
	}
	if l := bd.Diagonal; l != nil && l.Color != nil {
		set("diagonalUp", bd.DiagonalUp, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
		set("diagonalDown", bd.DiagonalDown, l.Color.RGB, l.Color.Indexed, l.Color.Theme)
	}
	return out
}
