// Package apiclient is the typed client of the B-BBEE compliance service's
// plan and scorecard API and of the company lookup service: wire types named
// as the contract names their JSON fields, HMAC request signing, typed
// errors, and the one retry policy. It satisfies the interfaces the pipeline
// package declares (PlanService, CompanyFinder).
//
// The emulator of the same contract lives in apiclient/sandbox.
package apiclient
