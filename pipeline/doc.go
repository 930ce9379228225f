// Package pipeline is the core of eepipe: the domain model of Employment
// Equity plans as files describe them and as the service stores them, the
// counter catalog, validation, the diff between a file and the server, and
// the apply, recalculation, reconciliation and sector-check logic.
//
// It declares the small interfaces it needs from the outside world
// (PlanService, CompanyFinder, and the optional TargetPatcher) and the
// errors their implementations match (ErrNotFound, ErrUnclearOutcome, ...),
// and knows nothing of HTTP or Excel. Adapters are sub-packages:
// pipeline/planapi satisfies the interfaces over the wire client
// (apiclient), translating its types and errors at that one border;
// pipeline/filelock is the local Locker (OS file locks that stop two runs
// writing one account at once); pipeline/statestore keeps the run history
// (StateStore); formats turns files into Records.
//
// One door to the service: every request a command sends goes through a
// Runner and its gate (one bound on requests in flight across accounts and
// the lookup, request counts, the stop after a fatal error; a key pair the
// service refuses stops its own account only, AccountRefusedError). Stored
// plans are listed and retrieved in one place (stored.go): Runner.PlanApply
// for apply (each plan read, compared and written in turn), Runner.Plan
// for diff and reconcile, Runner.ReadStored for export and check
// --server, Runner.FillFromStored for check --server with files, and
// Runner.ServiceCatalog, the one route to the service's counter catalog
// (the keys of a target it returns: CatalogOfStored, catalogOfTarget;
// check --server's per-plan catalog is read by the same function).
//
// One rule for each question: a plan finds its account by its account
// column, else its company, else the account that holds its plan_id
// (CheckRouting before any request, the Runner's routing after the lists);
// company identifiers are compared by sameIdentifier (keyed by
// IdentifierKey) and plan and account names by sameName (keyed by nameKey)
// wherever rows are grouped into plans, companies looked up, plans to
// create told apart or accounts named, so validate, diff and apply count
// the same plans; an account's configured identifiers are checked by
// checkConfiguredCompany; a plan that may be new and skips a financial
// year is found by skippedYears (validate warns of it, diff and apply note
// it once for the plans they create); the accounts' scorecards are listed,
// and a scorecard_id an account lacks found, in scorecards.go
// (Runner.ListScorecards, Runner.ScorecardProblems); exports are made by
// exportedPlan, which carries the account and leaves a total blank when
// the service holds it in disagreement with its parts (blank means "leave
// as is"), so an unchanged export re-imports with no write and no warning.
//
// Plans are matched to stored plans by one rule, matchPlans, everywhere.
//
// The policies a command only wires live here too. Account locks
// (accountlocks.go, beside the Locker of lock.go): the accounts a run
// locks (NamedAccounts: those the plans' account columns name, compared by
// SameAccount, else every configured one), their keys (AccountLocks.Local
// for a Locker, AccountLocks.store for a state store's locks, AccountLocks.nameOf back
// to the configured name, CheckStore for the check before each write) and the order they are taken in
// (TakeAccountLocks, AccountLocks.LockStore). Export sources
// (exportsource.go, beside the stored-plan door): the accounts an export
// reads (ExportSources: every account, or the account of each company
// asked for) and its plans as exported (ReadExport over ReadStored). The
// three-way rule of a run (holdback.go): HoldBack classifies a change set
// or one plan's diff against the history and holds back the service-side
// changes (apply's ApplyHooks.Classify is HoldBack.Plan). What an apply
// does before its first write and what it records (runrecord.go): the
// check of the counters against the served catalog
// (RunOptions.CheckServed, ServedCatalogProblems), the run's record in
// the state store, its writes through the journal and its end with its
// status (RunOptions.History, RunHistory): PlanApply and ApplySaved do
// these themselves, and call nothing back in the command for them. A
// progress display watches through an Observer (observe.go), which is
// told what happened and decides nothing.
//
// Waits and retries are not written here: they are calls of package pace,
// the one home of "wait and retry" (shared with apiclient, which pipeline
// may not import). The recalculation's wait for a running one
// (Runner.Recalc, a capped exponential poll bounded by RunOptions.RecalcWait)
// and the resend of a create that got no clear answer (sent again at once,
// and only once the list shows the plan was not created) are pace.Pacer
// calls; RunOptions.Sleep and Now are their injected wait and clock.
//
// # Where each question lives
//
// Each question has one home, a file named after it:
//
//   - account names: identity.go (SameAccount, AccountKey; the service's
//     identity, ServiceKey, and its addresses, ServiceAddress), on the rule of names in match.go (sameName,
//     nameKey); the account lock's key: lock.go (AccountLockKey, Locker);
//   - company identifiers: identifier.go (sameIdentifier, IdentifierKey,
//     checkConfiguredCompany);
//   - plan matching: match.go (matchPlans); check --server's match of a
//     file plan with a stored one: sector_server.go (matchStoredPlan);
//   - routing plans to accounts: resolve.go (CheckRouting, and the
//     Runner's routing, listing and matching before any stored plan is
//     read: Runner.Plan, prepare);
//   - reading stored plans: stored.go, the one door (every list and read of
//     an account's plans, apply's creates and recreates included:
//     findRecreated, findCreated, readBack);
//   - the requests' gate (bound, counts, the stop after a fatal error):
//     gate.go;
//   - wait and retry: package pace (recalc.go's poll, apply.go's resend of
//     a create);
//   - reading a file's records into plans: the Assembler, assemble.go, in
//     its steps: one record's plan columns, year and target type
//     (assemble_row.go), its counters (assemble_counters.go), the grouping
//     of rows into plans (assemble_group.go), the places of the cells a
//     problem cites (assemble_places.go) and the checks of a whole plan
//     (assemble_checks.go); a cell's value rules: validate_values.go;
//     skipped financial years: skipped_years.go;
//   - the counter catalog: catalog.go; counter values: counters.go; dates
//     and financial years: date.go;
//   - the diff of a file plan and a stored plan: diff.go (Diff); the
//     change set: changeset.go; the three-way classification against the
//     state store: threeway.go;
//   - the Runner, its options and its status (Progress, Fatal): runner.go;
//   - applying: apply.go (applyPlan and its steps, DryRun),
//     pipelined.go (Runner.PlanApply), recreate_leftover.go (a recreate
//     that did not finish), recalc.go (recalculation); the run's report:
//     runreport.go; the run's record for the state store: state.go (its
//     types), runrecord.go (when a run is recorded, and the check before
//     its first write), journal.go (each write recorded as it is sent and
//     answered, the values found in sync); a progress display: observe.go;
//   - saved change sets: savedset.go (the file), savedset_check.go,
//     savedset_sign.go, savedset_stream.go, savedset_drift.go (a saved
//     plan compared with the service again), savedset_apply.go (apply);
//   - reconciliation: reconcile.go; exports: exported.go (exportedPlan),
//     convert.go (FromServer); the sector check: sector.go,
//     sector_targets.go, sector_blank.go, sector_server.go;
//   - the service's interfaces and errors: service.go.
package pipeline
