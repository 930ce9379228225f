// Package xlsx is eepipe's XLSX engine: it opens an XLSX package within
// the limits (Open, Book, Limits), streams a worksheet's rows out of the
// zip archive with its own XML scanner (Book.ScanSheet, Scanner), types a
// cell as validation needs it (Book.Cell: dates, numbers, zero padding,
// formulas without a saved result; ExcelSerial, the one conversion of a
// date to an Excel serial), and writes output files safely
// (WriteFileAtomic, WriteWorkbook, RemoveOrphanTemps, NewZipWriter). It
// also holds the small workbook helpers the writers share (style copy);
// their styles are in templates.
//
// It is the one home of these questions: how is an A1 cell reference
// read and written, and a sheet name quoted in front of one (cellref.go:
// CellRef, CellName, ColumnLetters, QuoteSheet); how is an XLSX package read
// without trusting it (the size, ratio and part limits: docs/limits.md),
// how is a cell's XML turned into a typed cell, and how is an output file
// written to a temp name and renamed. It knows nothing of plans, tables or
// grids: the readers and writers of those are in the packages beside it
// (table, grid, report, export) and templates, which import it; it imports
// pipeline only for the cell and origin types.
package xlsx
