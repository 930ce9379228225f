package roster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/profile"
)

// Sink takes what Read reads: each employee row (every row after the
// header with text in a cell; the Employee is reused for the next row) and
// each row that could not be read, with the reason.
type Sink struct {
	Employee func(e *profile.Employee)
	Bad      func(file string, row int, reason string)
}

// Read reads the roster at path: an XLSX workbook (every visible sheet
// with a roster header; told by its content) or CSV text. m is the
// mapping file (nil: none). An error means nothing of the file was read
// as a roster: it cannot be opened, it is not CSV text nor a workbook, or
// it is not a roster (*NotRosterError).
func Read(path string, m *mapping.File, lim xlsx.Limits, sink Sink) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %s", path, xlsx.NotRegular(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if bytes.HasPrefix(head[:n], []byte("PK\x03\x04")) {
		return readXLSX(path, f, st.Size(), m, lim, sink)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return ReadCSV(path, f, m, sink)
}

// ReadCSV reads a roster from CSV text (file names it in messages and
// rows).
func ReadCSV(file string, r io.Reader, m *mapping.File, sink Sink) error {
	var (
		ps    pipeline.Problems
		rr    = rowReader{file: file, m: m, sink: sink}
		isHdr = func(line []byte) bool { return headerLine(string(line), m) }
	)
	table.ReadCSVRecords(file, "a roster needs a header row naming race, gender and an occupational level or job grade, then one row per employee", r, isHdr,
		func(line int, fields []string) bool { return rr.row(line, fields) }, &ps)
	return rr.finish(ps)
}

// headerLine reports whether a line of CSV text, split at any of the
// delimiters, is a roster's header row.
func headerLine(line string, m *mapping.File) bool {
	for _, d := range []string{",", ";", "\t"} {
		fields := strings.Split(line, d)
		for i := range fields {
			fields[i] = strings.Trim(strings.TrimSpace(fields[i]), `"`)
		}
		if _, ok := headerColumns(fields, m); ok {
			return true
		}
	}
	return false
}

// rowReader turns the rows of one table into employees: the first rows
// until the header, then one employee a row.
type rowReader struct {
	file    string
	m       *mapping.File
	sink    Sink
	cols    Columns
	found   bool
	scanned int
	best    Columns
	bestN   int
	emp     profile.Employee
}

// row reads one row; false stops the reading (no header in the first
// rows).
func (rr *rowReader) row(line int, fields []string) bool {
	if !rr.found {
		rr.scanned++
		cols, ok := headerColumns(fields, rr.m)
		if ok {
			rr.cols, rr.found = cols, true
			return true
		}
		if n := count(cols); n > rr.bestN || rr.scanned == 1 {
			rr.best, rr.bestN = cols, n
		}
		return rr.scanned < headerRows
	}
	if blank(fields) {
		return true // a blank row is skipped
	}
	for _, f := range fields {
		if !utf8.ValidString(f) {
			rr.sink.Bad(rr.file, line, "the row is not UTF-8 text: save the roster as CSV UTF-8 (or as .xlsx) so that its words read")
			return true
		}
	}
	rr.emp.File, rr.emp.Row = rr.file, line
	for i, f := range rr.cols {
		rr.emp.Values[i] = ""
		if f >= 0 && f < len(fields) {
			rr.emp.Values[i] = fields[f]
		}
	}
	rr.sink.Employee(&rr.emp)
	return true
}

// blank reports whether no cell of a row holds text: a row with text only
// in columns the roster does not read (a name) is not blank, and is
// counted or listed.
func blank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func count(c Columns) int {
	n := 0
	for _, f := range c {
		if f >= 0 {
			n++
		}
	}
	return n
}

// finish reports the file's problems: before the header they make the
// file unreadable; after it, each is a row not read.
func (rr *rowReader) finish(ps pipeline.Problems) error {
	for _, p := range ps {
		if p.Severity != pipeline.Error {
			continue
		}
		if !rr.found || p.Origin.Row == 0 {
			return fmt.Errorf("%s: %s", rr.file, p.Message)
		}
		rr.sink.Bad(rr.file, p.Origin.Row, p.Message)
	}
	if !rr.found {
		return &NotRosterError{File: rr.file, Missing: rr.best.missing()}
	}
	return nil
}

// readXLSX reads every visible sheet of a workbook that has a roster
// header.
func readXLSX(path string, r io.ReaderAt, size int64, m *mapping.File, lim xlsx.Limits, sink Sink) error {
	book, err := xlsx.Open(r, size, lim)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	found := false
	var best Columns
	bestN := -1
	for _, sheet := range book.Sheets {
		if sheet.Hidden {
			continue
		}
		rr := &rowReader{file: path, m: m, sink: sink}
		var fields []string
		err := book.ScanSheet(sheet, func(row int, cells []xlsx.RawCell) bool {
			fields = fields[:0]
			for i := range cells {
				rc := &cells[i]
				if rc.Col < 1 || rc.Col > xlsx.MaxRowCells {
					continue
				}
				for len(fields) < rc.Col {
					fields = append(fields, "")
				}
				fields[rc.Col-1] = book.Cell(rc, pipeline.Origin{File: path, Sheet: sheet.Name, Row: row}).Text
			}
			return rr.row(row, fields)
		})
		if err != nil && rr.found {
			return fmt.Errorf("%s: sheet %s: %w", path, sheet.Name, err)
		}
		found = found || rr.found
		if !rr.found && rr.bestN > bestN {
			best, bestN = rr.best, rr.bestN
		}
	}
	if !found {
		if bestN < 0 {
			best = (&rowReader{}).best
			for i := range best {
				best[i] = -1
			}
		}
		return &NotRosterError{File: path, Missing: best.missing()}
	}
	return nil
}
