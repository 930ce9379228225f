// Package planapi adapts the wire client (apiclient) to the pipeline's
// interfaces, the way the http package of Ben Johnson's wtf adapts wtf: it
// satisfies pipeline.PlanService and pipeline.CompanyFinder with an
// *apiclient.Client, and translates at this one border, once, the wire types
// into the domain ones (dates parsed, null scorecard_id and sector as "")
// and the client's errors into the pipeline's sentinel errors (see Err).
//
// It is the only package besides cmd/eepipe (and apiclient's own sandbox,
// for the wire types) that imports apiclient, so the pipeline, the readers
// and the writers never pull in the HTTP client, and the client knows
// nothing of the domain.
package planapi
