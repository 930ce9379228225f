package xlsx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// FuzzReadSST reads arbitrary shared string tables: never a panic, every
// entry within a cell's length, the table within its bounds.
func FuzzReadSST(f *testing.F) {
	f.Add([]byte(`<sst><si><t>a</t></si><si><r><t>b</t></r><rPh><t>c</t></rPh></si><si/></sst>`))
	f.Add([]byte(`<sst><si><t>` + strings.Repeat("é", MaxCellChars+1) + `</t></si></sst>`))
	f.Add([]byte(`<sst><si><t>open`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sst, err := ReadSST(bytes.NewReader(data))
		if len(sst) > MaxSSTStrings {
			t.Fatalf("%d entries", len(sst))
		}
		for i, s := range sst {
			if len(s) > 3*maxCellBytes { // _xHHHH_ escapes may grow a little
				t.Fatalf("entry %d of %d bytes", i, len(s))
			}
		}
		if err != nil && err.Error() == "" {
			t.Fatal("an error without words")
		}
	})
}

// FuzzScannerCellRef checks the sheet reader's cell references against
// excelize's: every reference it accepts names the same cell.
func FuzzScannerCellRef(f *testing.F) {
	for _, s := range []string{"A1", "XFD1048576", "XFE2", "!!", "a0", "AA01", "B", "12", "ZZZ9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		col, row := CellRef([]byte(ref))
		if col == 0 {
			return
		}
		c, r, err := excelize.CellNameToCoordinates(ref)
		if err != nil || c != col || r != row {
			t.Fatalf("%q read as column %d row %d; excelize: %d %d %v", ref, col, row, c, r, err)
		}
	})
}
