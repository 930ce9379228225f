// Package assemble turns the records a file's readers produce into plans:
// the Assembler reads each record's plan columns, financial year, target
// type and counters, groups rows into plans by company, name and start
// date, remembers where each value was read, and checks each whole plan,
// reporting every problem with its cell in one pass.
//
// It answers: which plans does this file hold, and what is wrong with
// them (Assembler.Add, Assembler.Finish)? Can each plan be routed to an
// account before any request (CheckRouting)? Which plans does
// apply --skip-invalid set aside, with which rows (SplitInvalid,
// Rejection)? It imports only the model (docs/formats.md).
package assemble
