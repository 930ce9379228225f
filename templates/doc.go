// Package templates builds the workbook templates eepipe hands to
// consultants, and holds the shared workbook styling (fonts, fills, number
// formats, column widths) that the grid workbook writer and the export use.
// It imports pipeline (the model and the catalog), the XLSX engine
// formats/xlsx (xlsx.ExcelSerial for date cells) and excelize, nothing
// else of this module; the other formats packages import it.
package templates
