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
// writing one account at once); formats turns files into Records.
//
// Plans are matched to stored plans by one rule, MatchPlans, everywhere.
package pipeline
