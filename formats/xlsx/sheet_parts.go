package xlsx

import (
	"github.com/xuri/excelize/v2"
)

// SheetSize returns the size a sheet's part declares it unpacks to
// (archive/zip holds the part to it), and whether that is more than
// Limits.MaxGridSheet, the most a sheet read as a grid plan sheet may be.
func (b *Book) SheetSize(info Sheet, lim Limits) (int64, bool) {
	f, ok := b.Files[info.Path]
	if !ok {
		return 0, false
	}
	size := int64(min(f.UncompressedSize64, 1<<62))
	return size, size > lim.MaxGridSheetBytes()
}

// HiddenColumns returns the columns the sheet hides (<col hidden="1">,
// which come before its cells), so that a message about a cell in one can
// say the consultant cannot see it. A sheet that cannot be scanned hides
// none (the row scan reports the damage).
func (b *Book) HiddenColumns(info Sheet) map[int]bool {
	out := map[int]bool{}
	if info.Path == "" {
		return out
	}
	rc, err := b.Open(info.Path)
	if err != nil {
		return out
	}
	defer rc.Close()
	sc := NewScanner(rc)
	defer sc.Release()
	for {
		if err := sc.Next(); err != nil || sc.Kind == TokStart && string(sc.Name) == "sheetData" {
			return out
		}
		if sc.Kind != TokStart || string(sc.Name) != "col" {
			continue
		}
		if h := string(sc.Attr("hidden")); h != "1" && h != "true" {
			continue
		}
		lo, ok1 := Atoi(sc.Attr("min"))
		hi, ok2 := Atoi(sc.Attr("max"))
		if !ok1 || !ok2 || lo < 1 || hi < lo {
			continue
		}
		for c := lo; c <= min(hi, lo+maxHiddenColumns, excelize.MaxColumns); c++ {
			out[c] = true
		}
	}
}

// maxHiddenColumns bounds the columns one <col> element hides that are
// recorded: a grid spans a few dozen columns, and a sheet may hide every
// column to its last (min 20, max 16384).
const maxHiddenColumns = 256
