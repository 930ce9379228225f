// Package run is the Runner, the one door to the service: every request a
// command sends goes through its gate (one bound on requests in flight,
// the stop after a fatal error, request counts). The Runner routes plans
// to accounts, lists and reads stored plans (Plan, ReadStored,
// FillFromStored, ServiceCatalog), applies (PlanApply, ApplySaved: creates,
// patches, recreates, the recalculation of the scorecards), journals each
// write in the state store and records and reports the run (RunHistory,
// RunReport), and reads what an export writes (ExportSources, ReadExport).
//
// It answers: which accounts does a run lock, in which order
// (NamedAccounts, AccountLocks)? What was and was not applied? Its waits
// are pace calls. Only cmd and formats/reports import it
// (docs/apply-and-state.md).
package run
