// Package formats reads eepipe's input files: ReadFiles expands the paths
// given into files, decides once for each which reader it goes to (a CSV
// file to the flat or long table reader; a workbook to the flat table
// reader when a sheet has its header, else to the grid reader) and
// assembles the records they read into plans, with every problem found.
// It also names stamped output files (StampedName, PruneStamped).
//
// The work is done in its sub-packages, one job each: xlsx (the XLSX
// engine: package reader, streaming scanner, typed cells, atomic outputs,
// limits), table (the flat and long tables and CSV safety), grid (grid plan
// sheets), reports (every report and change-set files) and export (the
// XLSX export). It is the one home of the question "which reader does
// this file go to?" (docs/formats.md).
//
// It and its sub-packages import pipeline (the model, the catalog); all
// but xlsx import templates (the styling and the workbooks' vocabulary),
// which sits over xlsx (cell references, date serials). None imports the
// wire client: nothing that formats imports pulls in apiclient or
// pipeline/planapi.
package formats
