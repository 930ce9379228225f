package xlsx

import (
	"errors"
	"fmt"
)

// Limits bound what reading one input file may cost, so that a hostile or
// damaged file (a decompression bomb, a special file, a runaway line) is
// reported as an oversized or damaged file instead of exhausting memory.
// docs/limits.md lists them. Zero fields take the defaults.
type Limits struct {
	// MaxUncompressed bounds the total uncompressed size of an XLSX
	// workbook, as its zip archive declares it (archive/zip refuses a part
	// that unpacks to more than it declares).
	MaxUncompressed int64
	// MaxGridSheet bounds one sheet read as a grid plan sheet, as its
	// zip part declares its uncompressed size (see gridSheetTooLarge).
	MaxGridSheet int64
}

// Defaults of Limits and the fixed limits of the readers.
const (
	// DefaultMaxUncompressed is the default Limits.MaxUncompressed: 1 GiB,
	// about ten times the sheet XML of a 100,000-row flat table.
	DefaultMaxUncompressed = 1 << 30

	// DefaultMaxGridSheet is the default Limits.MaxGridSheet: 8 MiB, 140
	// times a plan sheet of eepipe's grid export (57 KiB for five years),
	// and small enough that the cells of a sheet of eepipe's (about 40
	// bytes of XML each) stay within grid.MaxSheetCells.
	DefaultMaxGridSheet = 8 << 20

	// MaxCellChars is the most characters a cell holds (Excel's limit).
	MaxCellChars = 32767
	// MaxRowCells is the most cells a row holds (columns A to XFD).
	MaxRowCells = 16384

	// defaultMaxToken bounds one XML token of a sheet or of the shared
	// strings (a tag with its attributes, a run of text): a cell's
	// 32,767 characters written as character references fit well within.
	defaultMaxToken = 1 << 20
	// maxCellBytes bounds a cell's text as it is read, before its
	// characters are counted: 32,767 characters of at most 4 bytes.
	maxCellBytes = 4 * MaxCellChars

	// MaxSSTStrings and maxSSTBytes bound the shared string table
	// kept in memory (entries, and bytes of their text).
	MaxSSTStrings = 1 << 20
	maxSSTBytes   = 64 << 20

	// MaxMetaPart bounds the workbook, relationship and styles parts,
	// which are decoded whole.
	MaxMetaPart = 16 << 20
	// maxCentralDir bounds the zip archive's central directory (its
	// list of parts), read whole before anything else.
	maxCentralDir = 4 << 20

	// MaxCSVLine and MaxCSVRecord bound one line and one record (a
	// quoted field may span lines) of a CSV file.
	MaxCSVLine   = 1 << 20
	MaxCSVRecord = 4 << 20
)

func (l Limits) maxUncompressed() int64 {
	if l.MaxUncompressed > 0 {
		return l.MaxUncompressed
	}
	return DefaultMaxUncompressed
}

func (l Limits) MaxGridSheetBytes() int64 {
	if l.MaxGridSheet > 0 {
		return l.MaxGridSheet
	}
	return DefaultMaxGridSheet
}

// ErrOversized is the class of the errors of a file beyond a limit:
// errors.Is(err, ErrOversized).
var ErrOversized = errors.New("the file is oversized or damaged")

// limitError is a file beyond one of the limits.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Is(target error) bool {
	return target == ErrOversized
}

func LimitErrorf(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

// SizeText words a byte count: "1 GiB", "48 MiB", "2,000 bytes".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

var errFlatTokenTooLong = LimitErrorf("the file is oversized or damaged: one XML token (a run of text or a tag) is longer than %s; a cell holds at most %d characters", SizeText(defaultMaxToken), MaxCellChars)
