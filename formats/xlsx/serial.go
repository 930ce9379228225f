package xlsx

import "time"

// ExcelSerial returns the Excel serial number of the calendar date of t,
// in the 1904 date system when date1904 (the workbook says so), else in
// the 1900 one, with its phantom 29 February 1900: the inverse of
// excelize.ExcelDateToTime, by which eepipe reads serials (excelize keeps
// its own inverse unexported). It is eepipe's one conversion of a date to
// a serial: a date cell read (Book.Cell), the templates' date validation
// formulas and their date cells.
func ExcelSerial(t time.Time, date1904 bool) float64 {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if date1904 {
		return float64(d.Sub(time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour))
	}
	days := float64(d.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour))
	if days < 61 {
		days-- // Excel's phantom 29 February 1900
	}
	return days
}
