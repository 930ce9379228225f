// Package readback reads back, for the tests of formats and its
// sub-packages, the workbooks a test wrote: ReadGridWorkbook,
// ReadGridBytes, ReadGridSheet and ReadGridModel read grid sheets through
// the streaming grid reader, GridSheetsOf names the sheets it reads plans
// from, Assemble groups records into plans, and Model strips origins so
// that two reads compare equal (ModelPlan); GenPlans generates valid plans
// for property tests, and ProblemsText prints problems.
//
// It imports grid, so the grid package's tests that use it are external
// tests (package grid_test). No production code imports it.
package readback
