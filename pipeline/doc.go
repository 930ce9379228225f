// Package pipeline is eepipe's domain model: Employment Equity plans,
// targets and counters as files describe them (InputPlan, InputTarget,
// Counters) and as the service stores them (Plan, Milestone, Target), the
// counter catalog (Catalog), dates and financial years (Date,
// FinancialYear), company identifiers and names (SameIdentifier,
// SameName, ResolveCompany), plan matching (MatchPlans), problems with
// their cells (Problem, Origin), the value rules of a cell (CounterValue,
// DateValue, SectorValue, CheckNameText) and the run history's records
// (RunRecord, TargetWrite).
//
// It declares the interfaces the jobs need from the outside world
// (PlanService, CompanyFinder, Locker, StateStore) and the errors their
// implementations match, and imports nothing of the module. The jobs are
// its sub-packages: assemble (rows into plans), diff (file, service and
// last run compared), savedset (the change-set file), sector (the
// sectoral check), run (the Runner, the one door to the service); the
// adapters are planapi, statestore and filelock (docs/architecture.md).
package pipeline
