package xlsx

import (
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestCellRefRule pins the one A1 rule: letters in either case up to XFD,
// then a row from 1 to 1,048,576 without sign or leading zero, nothing
// else; the string and byte forms agree.
func TestCellRefRule(t *testing.T) {
	for _, tc := range []struct {
		ref      string
		col, row int
	}{
		{"A1", 1, 1}, {"F12", 6, 12}, {"f12", 6, 12}, {"aB7", 28, 7},
		{"XFD1048576", 16384, 1 << 20}, {"ZZ99", 702, 99},
		{"XFE1", 0, 0}, {"AAAA1", 0, 0}, {"A1048577", 0, 0}, {"A99999999", 0, 0},
		{"A0", 0, 0}, {"A01", 0, 0}, {"A", 0, 0}, {"12", 0, 0}, {"", 0, 0},
		{"$A$1", 0, 0}, {"A$1", 0, 0}, {" A1", 0, 0}, {"A1 ", 0, 0}, {"A+1", 0, 0}, {"A-1", 0, 0},
		{"A1:B2", 0, 0}, {"Sheet!A1", 0, 0}, {"É1", 0, 0},
	} {
		c, r := CellRef(tc.ref)
		if c != tc.col || r != tc.row {
			t.Errorf("CellRef(%q) = %d, %d; want %d, %d", tc.ref, c, r, tc.col, tc.row)
		}
		if cb, rb := CellRef([]byte(tc.ref)); cb != c || rb != r {
			t.Errorf("CellRef([]byte(%q)) = %d, %d; the string form says %d, %d", tc.ref, cb, rb, c, r)
		}
	}
}

// TestColumnLettersMatchExcelize: every column of a sheet is written as
// excelize (and Excel) name it, and read back by CellRef; a number
// outside the sheet has no letters.
func TestColumnLettersMatchExcelize(t *testing.T) {
	for col := 1; col <= MaxColumns; col++ {
		want, err := excelize.ColumnNumberToName(col)
		if err != nil {
			t.Fatal(err)
		}
		if got := ColumnLetters(col); got != want {
			t.Fatalf("ColumnLetters(%d) = %q, want %q", col, got, want)
		}
		ref := CellName(col, col)
		if c, r := CellRef(ref); c != col || r != col {
			t.Fatalf("CellRef(CellName(%d, %d) = %q) = %d, %d", col, col, ref, c, r)
		}
	}
	for _, col := range []int{0, -1, MaxColumns + 1} {
		if got := ColumnLetters(col); got != "" {
			t.Errorf("ColumnLetters(%d) = %q, want none", col, got)
		}
	}
	if got := string(AppendCellRef([]byte("x!"), 6, 12)); got != "x!F12" {
		t.Errorf("AppendCellRef = %q, want x!F12", got)
	}
}

// TestQuoteSheet: a sheet name in a reference is quoted, its quotes
// doubled.
func TestQuoteSheet(t *testing.T) {
	for name, want := range map[string]string{
		"Targets":    "'Targets'",
		"Acme 2026":  "'Acme 2026'",
		"O'Brien's":  "'O''Brien''s'",
		"":           "''",
		"'":          "''''",
		"Plan 12345": "'Plan 12345'",
	} {
		if got := QuoteSheet(name); got != want {
			t.Errorf("QuoteSheet(%q) = %s, want %s", name, got, want)
		}
	}
}

// FuzzCellRef: whatever CellRef accepts, CellName writes back the same
// (in upper case), and excelize reads the same column and row.
func FuzzCellRef(f *testing.F) {
	for _, s := range []string{"A1", "xfd1048576", "A01", "$A$1", "ZZZ1", "A1048577"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		col, row := CellRef(ref)
		if col == 0 {
			return
		}
		if back := CellName(col, row); len(back) != len(ref) {
			t.Fatalf("CellRef(%q) = %d, %d; CellName writes %q", ref, col, row, back)
		}
		c, r, err := excelize.CellNameToCoordinates(ref)
		if err != nil || c != col || r != row {
			t.Fatalf("CellRef(%q) = %d, %d; excelize reads %d, %d, %v", ref, col, row, c, r, err)
		}
		if strconv.Itoa(row) != ref[len(ref)-len(strconv.Itoa(row)):] {
			t.Fatalf("CellRef(%q): row %d is not the reference's digits", ref, row)
		}
	})
}
