package xlsx

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

// Cell types a raw cell into a pipeline.Cell: text as displayed, numbers,
// date cells converted with the workbook's date system, error values,
// formulas without a cached value.
func (b *Book) Cell(rc *RawCell, o pipeline.Origin) pipeline.Cell {
	c := pipeline.Cell{Origin: o}
	var xf cellFormat
	if rc.Style >= 0 && rc.Style < len(b.xfs) {
		xf = b.xfs[rc.Style]
	}
	if rc.formula && b.recalcOnLoad {
		c.Kind = pipeline.CellFormulaNoValue
		c.Reason = staleResult
		if rc.Type == "str" && rc.hasV {
			// The writer declared a text result (XlsxWriter's
			// write_formula with a text value): kept as the cell's text,
			// so that a check column beside a grid reads as notes, never
			// as a value.
			c.Text = decodeEscapes(string(rc.Value))
		}
		return c
	}
	switch rc.Type {
	case "s":
		return b.sharedStringCell(c, rc)
	case "inlineStr":
		return textCell(c, decodeEscapes(b.text(rc.Inline)))
	case "str":
		if !rc.hasV && rc.formula {
			c.Kind = pipeline.CellFormulaNoValue
			return c
		}
		return textCell(c, decodeEscapes(string(rc.Value)))
	case "b":
		c.Kind, c.Text = pipeline.CellBool, "FALSE"
		if string(bytes.TrimSpace(rc.Value)) == "1" {
			c.Text = "TRUE"
		}
		return c
	case "e":
		c.Kind, c.Text = pipeline.CellError, string(bytes.TrimSpace(rc.Value))
		if c.Text == "" {
			c.Text = "#ERROR!"
		}
		return c
	case "d":
		value := string(rc.Value)
		if t, ok := parseISOCellDate(value); ok {
			c.Kind, c.Date, c.Text = pipeline.CellDate, pipeline.DateOf(t), pipeline.DateOf(t).String()
			c.Number = ExcelSerial(t, b.date1904)
			return c
		}
		return textCell(c, value)
	}
	v := bytes.TrimSpace(rc.Value)
	if !rc.hasV || len(v) == 0 {
		if rc.formula {
			c.Kind = pipeline.CellFormulaNoValue
		}
		return c
	}
	n, text, plain := plainNumber(v)
	if !plain {
		var err error
		n, err = strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return textCell(c, string(rc.Value))
		}
	}
	c.Number = n
	if xf.date {
		if t, err := excelize.ExcelDateToTime(n, b.date1904); err == nil && n >= 1 {
			c.Kind, c.Date = pipeline.CellDate, pipeline.DateOf(t)
			c.Text = c.Date.String()
			return c
		}
	}
	c.Kind = pipeline.CellNumber
	if plain {
		c.Text = text
	} else {
		c.Text = strconv.FormatFloat(n, 'f', -1, 64)
	}
	if xf.padTo > 0 && n >= 0 && n == math.Trunc(n) && len(c.Text) < xf.padTo {
		c.Text = strings.Repeat("0", xf.padTo-len(c.Text)) + c.Text
	}
	switch xf.unit {
	case "":
	case "%":
		// As the format shows it (1 shows 100%), so that it is read as
		// the share it is (pipeline.CounterValue refuses it as a counter).
		c.Text = strconv.FormatFloat(math.Round(n*100*1e9)/1e9, 'f', -1, 64) + "%"
	default:
		c.Text = xf.unit + " " + c.Text
	}
	return c
}

// sharedStringCell is the cell c whose text is the shared string rc
// names; a damaged reference is an error value saying why.
func (b *Book) sharedStringCell(c pipeline.Cell, rc *RawCell) pipeline.Cell {
	if !rc.hasV {
		return c
	}
	sst, sstErr := b.SharedStrings()
	v := bytes.TrimSpace(rc.Value)
	i, err := Index(v)
	switch {
	case err != nil || i < 0:
		c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
		c.Reason = fmt.Sprintf("the cell refers to shared string %q, which is not an entry number; the workbook is damaged", quotePrefix(v))
		return c
	case i >= len(sst) && sstErr != nil:
		c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
		c.Reason = fmt.Sprintf("the cell's text is shared string %d, and %v", i, sstErr)
		return c
	case i >= len(sst):
		c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
		c.Reason = fmt.Sprintf("the cell's text is shared string %d, but the workbook's shared string table has only %d entries; the workbook is damaged", i, len(sst))
		return c
	}
	return textCell(c, sst[i])
}

// staleResult is why a formula of a workbook that asks to be
// recalculated when opened has no saved result (docs/formats.md, the flat table: values).
const staleResult = "the cell holds a formula that has no saved result: the workbook asks to be recalculated when it is opened (as files written by XlsxWriter and other programs that never calculate do), so the results saved in it are placeholders, not values; open the workbook in Excel or LibreOffice, let it calculate and save it, or type the value instead of the formula"

// maxTexts and maxTextLen bound the strings text keeps.
const (
	maxTexts   = 4096
	maxTextLen = 64
)

// text returns raw as a string, the same string for the same short text
// (names, dates, sectors and target types repeat on every row of a plan),
// so that reading them allocates once.
func (b *Book) text(raw []byte) string {
	if len(raw) > maxTextLen {
		return string(raw)
	}
	if s, ok := b.texts[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if b.texts == nil {
		b.texts = map[string]string{}
	}
	if len(b.texts) < maxTexts {
		b.texts[s] = s
	}
	return s
}

// smallInts are the texts of the numbers 0 to 999, the usual counter
// values, so that reading them allocates nothing.
var smallInts = func() (out [1000]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// plainNumber parses the common number value of a sheet: digits
// without a leading zero (or a single 0), at most 15 of them, which is the
// number's text as strconv.FormatFloat(n, 'f', -1, 64) gives it. plain is
// false for every other spelling, left to strconv.ParseFloat.
func plainNumber(v []byte) (n float64, text string, plain bool) {
	if len(v) == 0 || len(v) > 15 || (v[0] == '0' && len(v) > 1) {
		return 0, "", false
	}
	var i int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		i = i*10 + int64(c-'0')
	}
	if i < int64(len(smallInts)) {
		return float64(i), smallInts[i], true
	}
	return float64(i), string(v), true
}

// Index parses a shared string index as strconv.Atoi does.
func Index(v []byte) (int, error) {
	if n, ok := Atoi(v); ok {
		return n, nil
	}
	return strconv.Atoi(string(v))
}

func textCell(c pipeline.Cell, s string) pipeline.Cell {
	if strings.TrimSpace(s) == "" {
		c.Kind = pipeline.CellBlank
		return c
	}
	c.Kind, c.Text = pipeline.CellText, s
	return c
}

// NoteScanError keeps the first error of a scan that makes the workbook
// unreadable whatever its layout: a limit passed (an oversized or damaged
// part) or a malformed cell reference, which excelize would read as
// another cell. Other damage is left to the reader of the layout found.
func (b *Book) NoteScanError(info Sheet, err error) {
	if b.ScanErr != nil || err == nil || errors.Is(err, errDamaged) {
		return
	}
	o := pipeline.Origin{Sheet: info.Name}
	var se *ScanError
	if errors.As(err, &se) {
		o = se.Origin("", info.Name)
		err = se.Err
	}
	b.ScanErr, b.ScanErrAt = err, o
}

// ExcelizeError words excelize's errors for a consultant.
func ExcelizeError(err error) string {
	switch {
	case errors.Is(err, excelize.ErrWorkbookFileFormat):
		return errNotZip.Error()
	case errors.Is(err, excelize.ErrWorkbookPassword), strings.Contains(err.Error(), "password"):
		return errEncrypted.Error()
	case strings.Contains(err.Error(), "zip"):
		return errDamaged.Error()
	}
	return err.Error()
}

// RawText is a cell's text as excelize reads it raw: a shared or inline
// string's text, else the value as written.
func (b *Book) RawText(c *RawCell) (string, error) {
	switch c.Type {
	case "s":
		sst, err := b.SharedStrings()
		if err != nil {
			return "", err
		}
		i, err := Index(c.Value)
		if err != nil || i < 0 || i >= len(sst) {
			return "", fmt.Errorf("a cell names shared string %q, which the workbook does not hold", c.Value)
		}
		return sst[i], nil
	case "inlineStr":
		return string(c.Inline), nil
	}
	return string(c.Value), nil
}
