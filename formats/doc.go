// Package formats reads and writes eepipe's files: the flat table (CSV and
// XLSX), the grid workbook and the long table, plus reports. It turns files
// into pipeline Records and pipeline models into files; the domain rules
// themselves live in package pipeline.
//
// It imports pipeline (the model, the catalog, the CSV header delimiter
// rule pipeline.HeaderDelimiter, which the sector-targets parser shares)
// and templates (the styling, and templates.ExcelSerial, the one
// conversion of a date to an Excel serial; serials are read with
// excelize.ExcelDateToTime, in the 1904 date system when the workbook says
// so), never the wire client: nothing that formats imports pulls in
// apiclient or pipeline/planapi.
package formats
