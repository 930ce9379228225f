// Package templates builds the workbook templates eepipe hands to
// consultants, and holds the shared workbook styling (fonts, fills, number
// formats, column widths) that the grid workbook writer, the export and the
// reports use: the plan sheets' Styles, the Overview's and the reports'
// tables' OverviewStyles, WrapNote for a long note above a table, and the
// palette (palette.go), every colour a workbook or report is given.
// It imports pipeline (the model and the catalog), the XLSX engine
// formats/xlsx (xlsx.ExcelSerial for date cells) and excelize, nothing
// else of this module; the other formats packages import it.
package templates
