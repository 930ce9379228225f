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
// formats turns files into Records.
package pipeline
