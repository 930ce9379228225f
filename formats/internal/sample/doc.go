// Package sample holds the hand-made values the tests of formats and its
// sub-packages write and read back: a reconciliation of a CSV source
// (Reconciliation, ReconcileCSV) or of marked cells (MarksReconciliation),
// a sector check report (SectorReport), input plans with every counter set (Plan, Plans), a
// stored plan (StoredPlan), the saved change set's keys and plans
// (SetService, SetKeys, SetInputPlan, SetStoredPlan) and date literals
// (Date). Problem, Err, Warn and CheckProblems match the problems a read
// gives against the expected ones.
//
// It imports nothing of this module but pipeline and its diff, savedset
// and sector packages, so the tests of every formats package can share it;
// not pipeline/run, which only cmd and the reports import: the sample run
// report is in formats/reports' own tests. No production code imports it.
package sample
