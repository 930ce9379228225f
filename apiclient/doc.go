// Package apiclient is the typed client of the B-BBEE compliance service's
// plan and scorecard API and of the company lookup service: wire types named
// as the contract names their JSON fields, HMAC request signing, typed
// errors, and the one retry policy. It satisfies the interfaces the pipeline
// package declares (PlanService, CompanyFinder).
//
// A Client signs every plan and scorecard request (Signature, over the path
// as sent and the exact body bytes), sends the company search with HTTP
// Basic auth, retries what is safe to retry (see RetryPolicy), warns once
// when the service says the API key is about to expire (see
// Client.KeyExpiry), and returns errors that match the pipeline's sentinel
// errors with errors.Is (see APIError). No error text or log line carries
// the API secret, the lookup password or the Authorization header.
//
// The emulator of the same contract lives in apiclient/sandbox.
package apiclient
