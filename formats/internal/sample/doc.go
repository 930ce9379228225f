// Package sample holds the hand-made values the tests of formats and its
// sub-packages write and read back: a run report (RunReport), a
// reconciliation of a CSV source (Reconciliation, ReconcileCSV) or of
// marked cells (MarksReconciliation), a sector check report
// (SectorReport), an input plan with every counter set (Plan), a stored
// plan (StoredPlan) and the saved change set's keys and plans (SetService,
// SetKeys, SetInputPlan, SetStoredPlan).
//
// It imports nothing of this module but pipeline, so the tests of every
// formats package can share it. No production code imports it.
package sample
