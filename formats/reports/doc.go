// Package reports writes what eepipe reports about a run, and reads back
// the one report a person hands in again: the problems report (text, CSV,
// XLSX; ProblemSpill keeps many problems on disk), the run report, the
// history report, the reconciliation (JSON, CSV, the Summary and Changes
// sheets, and the annotated copy of each source workbook with a note on
// every cell that differs), the sectoral targets check (text, CSV, JSON
// and its sheet with charts, which the check's printout shares), the
// annotated copy of an input workbook (AnnotateWorkbook), and change-set
// files (WriteChangeSet, and the streaming reader of a signed set).
//
// It is the one home of these questions: how is a problem, a run, a
// reconciliation or a sector check shown to a person, and how is a change
// set written to a file and read from one. Every CSV it writes goes
// through table.NewCSVWriter; every file it writes is written through
// xlsx.WriteFileAtomic. The report formats are described in docs/.
package reports
