package formats

import (
	"io"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Workbook is what WriteWorkbook saves: an excelize File or a
// GridWorkbook.
type Workbook interface {
	WriteTo(w io.Writer, opts ...excelize.Options) (int64, error)
}

// WriteWorkbook saves a workbook to path through WriteFileAtomic.
func WriteWorkbook(path string, f Workbook) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

type exOverviewStyles struct{ title, note, header, text, ident, number, date, datetime, link int }

func exNewOverviewStyles(f *excelize.File) (exOverviewStyles, error) {
	var s exOverviewStyles
	border := []excelize.Border{
		{Type: "left", Color: "D0D7DE", Style: 1}, {Type: "right", Color: "D0D7DE", Style: 1},
		{Type: "top", Color: "D0D7DE", Style: 1}, {Type: "bottom", Color: "D0D7DE", Style: 1},
	}
	dateFmt, dateTimeFmt, textFmt := "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss", "@"
	defs := []struct {
		dst   *int
		style *excelize.Style
	}{
		{&s.title, &excelize.Style{Font: &excelize.Font{Bold: true, Size: 16, Color: "1F4E79"}}},
		{&s.note, &excelize.Style{Font: &excelize.Font{Italic: true, Color: "595959"}}},
		{&s.header, &excelize.Style{
			Font:      &excelize.Font{Bold: true, Color: "FFFFFF"},
			Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"1F4E79"}},
			Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
			Border:    border,
		}},
		{&s.text, &excelize.Style{Border: border}},
		{&s.ident, &excelize.Style{Border: border, CustomNumFmt: &textFmt}},
		{&s.number, &excelize.Style{Border: border, NumFmt: 1}},
		{&s.date, &excelize.Style{Border: border, CustomNumFmt: &dateFmt}},
		{&s.datetime, &excelize.Style{Border: border, CustomNumFmt: &dateTimeFmt}},
		{&s.link, &excelize.Style{Border: border, Font: &excelize.Font{Color: "0563C1", Underline: "single"}}},
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

func exStrPtr(s string) *string { return &s }

// exQuoteSheet quotes a sheet name for a formula or link reference.
func exQuoteSheet(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}

func exBoolPtr(b bool) *bool { return &b }
