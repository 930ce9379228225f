// Package pipeline is the core of eepipe: the domain model of Employment
// Equity plans as files describe them and as the service stores them, the
// counter catalog, validation, the diff between a file and the server, and
// the apply, recalculation, reconciliation and sector-check logic.
//
// It declares the small interfaces it needs from the outside world
// (PlanService, CompanyFinder) and knows nothing of HTTP or Excel: apiclient
// satisfies the interfaces, formats turns files into Records.
package pipeline
