// Package books writes, for the tests of formats and its sub-packages, the
// workbooks the binary writes, through the binary's own paths: WriteFlat
// (one flat table, table.WriteSheet), WriteExport (the XLSX export,
// export.NewWorkbook and xlsx.WriteWorkbook) and WriteGrid (the grid
// export of input plans); ExportPlans and ManyExportPlans are stored plans
// to write.
//
// It imports export, so only external tests (package x_test) and the
// tests of formats itself can use it. No production code imports it.
package books
