// Package templates builds the workbook templates eepipe hands to
// consultants, and holds the shared workbook styling (fonts, fills, number
// formats, column widths) that the grid workbook writer and the export use.
package templates
