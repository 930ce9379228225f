// Package grid reads and writes grid plan sheets: one sheet per plan, its
// details above one grid of targets per year and target type (levels down,
// races and genders across), as the Department of Employment and Labour's
// forms lay them out. ReadWorkbook streams a workbook's grid sheets over
// the xlsx engine, two sheets in memory at most (the next one scanned
// while the one before is read); SheetAt tells whether a sheet is a grid
// plan sheet (for the reader of a flat table beside one); Build lays plans
// out as grid sheets for the workbook writers
// (PlanSheetOf, Options).
//
// It is the one home of these questions: what does a grid label say
// (year, financial year, EEA13 section; whose targets its words name is
// templates.TitleTargetType, beside the writer's GridLabel), which cells are a grid's headers,
// levels and counters, and what is the sheet name of a plan. The layout
// it reads is described in docs/formats.md; which reader a file goes to
// is decided above it, in package formats.
package grid
