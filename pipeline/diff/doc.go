// Package diff compares a file's plans with the service's and with what
// eepipe last applied: Diff gives a PlanDiff per plan (create, update,
// recreate, unchanged, failed) gathered in a ChangeSet, rendered for a
// person (ChangeSet.Render); ClassifyChanges and HoldBack classify each
// change against the history (the file's, the service's, both) and hold
// back what the service changed since; Unguarded says which changes have
// no history to be judged by; Reconcile turns a change set into the
// reconciliation a report shows.
//
// It answers: what would apply send, and what would it overwrite? It
// imports only the model (docs/apply-and-state.md).
package diff
