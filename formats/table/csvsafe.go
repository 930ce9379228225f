package table

import (
	"encoding/csv"
	"io"
	"regexp"
	"strings"
)

// CSV formula injection. A spreadsheet opening a CSV file runs a cell that
// starts with =, +, -, @ (and, in some, a tab or carriage return) as a
// formula: a plan name such as =HYPERLINK("http://evil","x") would become a
// live link. Every CSV file eepipe writes goes through CSVWriter, which
// neutralises such fields the OWASP way, with a leading single quote; the
// CSV reader reverses it, so that an exported file read back holds the
// original text.
//
// The rule, exactly:
//
//   - A field is triggered when, after any leading single quotes, it
//     starts with = + - @ tab or carriage return.
//   - Writing: a triggered field gets one more leading single quote,
//     unless it is a plain number (-2, +3.5, -1e3: a spreadsheet reads it
//     as a number, never as a formula; counters and differences stay
//     numbers).
//   - Reading a CSV text field: a triggered field that starts with a
//     single quote loses that one quote.
//
// Reading undoes writing for every text: a field written with a quote is
// triggered and starts with one; a field written as it is either is not
// triggered or is a plain number, which never starts with a quote. (So a
// text that really starts with a quote before a trigger, such as '=x, is
// written ''=x and read back as '=x.)

// csvPlainNumber matches the numbers a spreadsheet reads as numbers.
var csvPlainNumber = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// csvTriggered reports whether s, after its leading single quotes, starts
// with a character a spreadsheet takes as the start of a formula.
func csvTriggered(s string) bool {
	t := strings.TrimLeft(s, "'")
	if t == "" {
		return false
	}
	switch t[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// CSVSafeField returns a field as eepipe writes it to a CSV file: with a
// leading single quote when a spreadsheet would take it for a formula.
func CSVSafeField(s string) string {
	if !csvTriggered(s) || csvPlainNumber.MatchString(s) {
		return s
	}
	return "'" + s
}

// CSVUnsafeField reverses CSVSafeField for a text field read from a CSV
// file.
func CSVUnsafeField(s string) string {
	if strings.HasPrefix(s, "'") && csvTriggered(s) {
		return s[1:]
	}
	return s
}

// CSVWriter is the CSV writer of every CSV file eepipe writes: an
// encoding/csv writer whose fields go through CSVSafeField. It satisfies
// gocsv.CSVWriter, for gocsv.MarshalCSV.
type CSVWriter struct {
	w   *csv.Writer
	buf []string
}

func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: csv.NewWriter(w)}
}

// Write writes one record, its fields neutralised.
func (c *CSVWriter) Write(record []string) error {
	c.buf = c.buf[:0]
	for _, f := range record {
		c.buf = append(c.buf, CSVSafeField(f))
	}
	return c.w.Write(c.buf)
}

// Flush writes any buffered data.
func (c *CSVWriter) Flush() { c.w.Flush() }

// Error reports any error of a Write or Flush.
func (c *CSVWriter) Error() error { return c.w.Error() }
