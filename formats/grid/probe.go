package grid

import (
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// flatGridProbeRows is how many rows of a sheet beside a flat table are
// looked at to tell whether it is a grid plan sheet.
const flatGridProbeRows = 500

// SheetAt reports whether a sheet is a grid plan sheet, looking at its
// first rows, and where: the first grid label, else the sheet.
func SheetAt(b *xlsx.Book, file string, info xlsx.Sheet) (pipeline.Origin, bool) {
	at := pipeline.Origin{File: file, Sheet: info.Name}
	var text sheetText
	err := b.ScanSheet(info, func(row int, cells []xlsx.RawCell) bool {
		if row > flatGridProbeRows {
			return false
		}
		for len(text) < row {
			text = append(text, nil)
		}
		line := text[row-1]
		for i := range cells {
			rc := &cells[i]
			if rc.Col < 1 || rc.Col > 16384 {
				continue
			}
			for len(line) < rc.Col {
				line = append(line, "")
			}
			line[rc.Col-1] = b.Cell(rc, pipeline.Origin{}).Text
		}
		text[row-1] = line
		return true
	})
	m := templates.NewMatcher(nil)
	if err != nil || len(text) == 0 || !isGridSheet(text, m) {
		return at, false
	}
	maxCol := text.maxCol()
	for r := 1; r <= len(text); r++ {
		for c := 1; c <= len(text[r-1]); c++ {
			if _, ok := parseGridLabel(text.at(r, c)); !ok {
				continue
			}
			for rr := r + 1; rr <= r+4; rr++ {
				if countRaceCells(text, rr, c, maxCol, m) > 0 {
					ref, _ := excelize.CoordinatesToCellName(c, r)
					at.Cell, at.Row, at.Column = ref, r, c
					return at, true
				}
			}
		}
	}
	return at, true
}
