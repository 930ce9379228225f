// Package formats reads and writes eepipe's files: the flat table (CSV and
// XLSX), the grid workbook and the long table, plus reports. It turns files
// into pipeline Records and pipeline models into files; the domain rules
// themselves live in package pipeline.
package formats
