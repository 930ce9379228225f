package xlsx

import (
	"strconv"
	"strings"
)

// The most columns (XFD) and rows a worksheet has.
const (
	MaxColumns = 16384
	MaxRows    = 1 << 20
)

// This file is eepipe's one reading and writing of A1 cell references
// ("F12": the column's letters, then the row's number) and of the sheet
// names in front of them ("'Acme 2026'!F12").

// CellRef returns the column and row numbers of a cell reference such as
// "AB12", or 0, 0 when it is not one. The rule: one or more letters in
// either case, naming a column up to XFD, then the row's digits without a
// sign or a leading zero, naming a row up to 1,048,576; nothing before,
// between or after ("$A$1", " A1", "A1:B2" are no reference).
func CellRef[R ~string | ~[]byte](ref R) (col, row int) {
	i := 0
	for ; i < len(ref); i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
		if col > MaxColumns {
			return 0, 0
		}
	}
	if i == 0 || i == len(ref) || ref[i] == '0' || len(ref)-i > 7 {
		return 0, 0
	}
	for ; i < len(ref); i++ {
		c := ref[i]
		if c < '0' || c > '9' {
			return 0, 0
		}
		row = row*10 + int(c-'0')
	}
	if row > MaxRows {
		return 0, 0
	}
	return col, row
}

// AppendColumnLetters appends the letters of a column number (1 is A, 27
// is AA, MaxColumns is XFD); a number outside 1..MaxColumns appends
// nothing.
func AppendColumnLetters(b []byte, col int) []byte {
	if col < 1 || col > MaxColumns {
		return b
	}
	var letters [3]byte
	i := len(letters)
	for n := col; n > 0; n = (n - 1) / 26 {
		i--
		letters[i] = byte('A' + (n-1)%26)
	}
	return append(b, letters[i:]...)
}

// ColumnLetters returns the letters of a column number, as
// AppendColumnLetters writes them.
func ColumnLetters(col int) string {
	var buf [3]byte
	return string(AppendColumnLetters(buf[:0], col))
}

// AppendCellRef appends the A1 reference of a 1-based column and row
// (AppendCellRef(b, 6, 12) appends "F12").
func AppendCellRef(b []byte, col, row int) []byte {
	return strconv.AppendInt(AppendColumnLetters(b, col), int64(row), 10)
}

// CellName returns the A1 reference of a 1-based column and row:
// CellName(6, 12) is "F12".
func CellName(col, row int) string {
	var buf [16]byte
	return string(AppendCellRef(buf[:0], col, row))
}

// QuoteSheet returns a sheet name as a formula or link reference needs
// it: 'Name', with its quotes doubled.
func QuoteSheet(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}
