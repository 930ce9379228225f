// Package export composes the XLSX export of the plans read from the
// service: the grid export (NewWorkbook: the Overview sheet, one grid plan
// sheet per plan with its charts, the Sector targets sheet) written part by
// part by its package writer (GridWorkbook, so that time and memory grow
// linearly with the plans), and the flat export (WriteFlatXLSX). The grid
// sheets are laid out by package grid, the flat sheet by package table and
// the sector sheet by package reports; this package puts them together.
//
// It is the one home of these questions: which sheets does an export hold
// and in which order, what does the Overview say, and how are the per-plan
// charts drawn (their XML written straight into the package).
// docs/export-and-reconcile.md describes the result.
package export
