// Package templates builds the workbook templates eepipe hands to
// consultants, and holds the shared workbook styling (fonts, fills, number
// formats, column widths) that the grid workbook writer and the export use,
// and ExcelSerial, eepipe's one conversion of a date to an Excel serial
// (1900 or 1904 date system). It imports pipeline (the model and the
// catalog) and excelize, nothing else of this module; formats imports it.
package templates
