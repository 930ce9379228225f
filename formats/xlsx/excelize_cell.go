package xlsx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
	"github.com/xuri/nfp"
)

// ReadCell reads one cell of a worksheet by reference and types it: blank,
// text, number, date (a date-formatted number, converted with the 1900 or
// 1904 date system), bool, error value (#REF!, #DIV/0!, ...) or a formula
// without a cached value. Text is the value as Excel displays it with the
// cell's number format, so that an identifier typed as a number with a
// zero-padding format keeps its zeros. The Origin carries the sheet, cell,
// row and column; the caller fills in File.
func ReadCell(f *excelize.File, sheet, ref string, date1904 bool) pipeline.Cell {
	ref = strings.ToUpper(ref)
	col, row, _ := excelize.CellNameToCoordinates(ref)
	c := pipeline.Cell{Origin: pipeline.Origin{Sheet: sheet, Cell: ref, Row: row, Column: col}}
	raw, err := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
	if err != nil {
		// The cell cannot be read (for example a shared string index out
		// of range in a damaged file): report it as an error value.
		c.Kind = pipeline.CellError
		c.Text = "#UNREADABLE!"
		c.Reason = fmt.Sprintf("the cell cannot be read (%v); the workbook is damaged", err)
		return c
	}
	typ, _ := f.GetCellType(sheet, ref)
	formula, _ := f.GetCellFormula(sheet, ref)
	switch typ {
	case excelize.CellTypeError:
		c.Kind, c.Text = pipeline.CellError, strings.TrimSpace(raw)
		if c.Text == "" {
			c.Text = "#ERROR!"
		}
		return c
	case excelize.CellTypeBool:
		c.Kind = pipeline.CellBool
		c.Text = "FALSE"
		if raw == "1" || strings.EqualFold(raw, "true") {
			c.Text = "TRUE"
		}
		return c
	case excelize.CellTypeSharedString, excelize.CellTypeInlineString, excelize.CellTypeFormula:
		shown, _ := f.GetCellValue(sheet, ref)
		if strings.TrimSpace(shown) == "" {
			if typ == excelize.CellTypeFormula || strings.TrimSpace(raw) == "" {
				c.Kind = pipeline.CellBlank
				return c
			}
			shown = raw
		}
		c.Kind, c.Text = pipeline.CellText, shown
		return c
	case excelize.CellTypeDate:
		// An ISO 8601 date-time value (t="d").
		if t, ok := parseISOCellDate(raw); ok {
			c.Kind, c.Date = pipeline.CellDate, pipeline.DateOf(t)
			c.Number = templates.ExcelSerial(t, date1904)
			c.Text = c.Date.String()
			return c
		}
		c.Kind, c.Text = pipeline.CellText, raw
		return c
	}
	// A number cell (no type attribute or t="n"), possibly a formula.
	if strings.TrimSpace(raw) == "" {
		if formula != "" {
			c.Kind, c.Text = pipeline.CellFormulaNoValue, "="+formula
			return c
		}
		c.Kind = pipeline.CellBlank
		return c
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		c.Kind, c.Text = pipeline.CellText, raw
		return c
	}
	c.Number = n
	id, code := cellNumFmt(f, sheet, ref)
	if isDateFormat(id, code) {
		if t, err := excelize.ExcelDateToTime(n, date1904); err == nil && n >= 1 {
			c.Kind = pipeline.CellDate
			c.Date = pipeline.DateOf(t)
			c.Text = c.Date.String()
			return c
		}
	}
	c.Kind = pipeline.CellNumber
	if id == 0 && code == "" {
		// General: show the number in full, never in exponent form, so
		// that a 13-digit ID number keeps every digit.
		c.Text = strconv.FormatFloat(n, 'f', -1, 64)
		return c
	}
	shown, err := f.GetCellValue(sheet, ref)
	if err != nil || strings.TrimSpace(shown) == "" {
		shown = strconv.FormatFloat(n, 'f', -1, 64)
	}
	c.Text = shown
	return c
}

// WorkbookDate1904 reports whether the workbook uses the 1904 date system.
func WorkbookDate1904(f *excelize.File) bool {
	props, err := f.GetWorkbookProps()
	if err != nil || props.Date1904 == nil {
		return false
	}
	return *props.Date1904
}

// cellNumFmt returns the number format of a cell: its format id, and the
// format code when the workbook defines one for that id (custom formats,
// and built-in ids a writer redefined).
func cellNumFmt(f *excelize.File, sheet, ref string) (id int, code string) {
	idx, err := f.GetCellStyle(sheet, ref)
	if err != nil || idx <= 0 {
		return 0, ""
	}
	ss := f.Styles // loaded by GetCellValue; read directly to avoid GetStyle's copies
	if ss == nil || ss.CellXfs == nil || idx >= len(ss.CellXfs.Xf) {
		st, err := f.GetStyle(idx)
		if err != nil || st == nil {
			return 0, ""
		}
		if st.CustomNumFmt != nil {
			return st.NumFmt, *st.CustomNumFmt
		}
		return st.NumFmt, ""
	}
	if p := ss.CellXfs.Xf[idx].NumFmtID; p != nil {
		id = *p
	}
	if ss.NumFmts != nil {
		for _, nf := range ss.NumFmts.NumFmt {
			if nf != nil && nf.NumFmtID == id {
				if nf.FormatCode16 != "" {
					return id, nf.FormatCode16
				}
				return id, nf.FormatCode
			}
		}
	}
	return id, ""
}

// isDateFormat reports whether a number format shows a date: the built-in
// date formats, or a custom code with a day, month or year part.
func isDateFormat(id int, code string) bool {
	if code == "" {
		switch {
		case id >= 14 && id <= 17, id == 22, id >= 27 && id <= 36, id >= 50 && id <= 58:
			return true
		}
		return false
	}
	p := nfp.NumberFormatParser()
	for _, section := range p.Parse(code) {
		if section.Type != nfp.TokenSectionPositive {
			continue
		}
		for _, tok := range section.Items {
			if tok.TType != nfp.TokenTypeDateTimes {
				continue
			}
			v := strings.ToLower(tok.TValue)
			if strings.ContainsAny(v, "ydeg") || strings.Contains(v, "mmm") {
				return true
			}
			if strings.Contains(v, "m") && !strings.ContainsAny(strings.ToLower(code), "hs") {
				return true
			}
		}
	}
	return false
}

// parseISOCellDate parses the value of a t="d" cell.
func parseISOCellDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
