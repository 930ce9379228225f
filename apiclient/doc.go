// Package apiclient is the typed client of the B-BBEE compliance service's
// plan and scorecard API and of the company lookup service: wire types named
// as the contract names their JSON fields, HMAC request signing, typed
// errors, and the one retry policy. It is a pure client of the wire
// contract, as go-github is of GitHub's: it knows nothing of the domain and
// imports no package of this module but pace, the leaf package that is the
// one home of "wait and retry" (its retry loop is a pace.Pacer call, the
// same shape as the pipeline's waits). pipeline/planapi adapts it to the
// interfaces the pipeline declares.
//
// A Client signs every plan and scorecard request (Signature, over the path
// as sent and the exact body bytes), sends the company search with HTTP
// Basic auth, retries what is safe to retry (see RetryPolicy: a POST only
// after a 429), warns once when the service says the API key is about to
// expire (see Client.KeyExpiry), and returns its own errors: *APIError for
// a non-2xx answer (read its StatusCode with errors.As), *TransportError
// when no answer came, *DecodeError for a 2xx body that is not the expected
// JSON; ErrUnclearOutcome and ErrUnavailable are matched with errors.Is. No
// error text or log line carries the API secret, the lookup password or the
// Authorization header.
//
// The emulator of the same contract lives in apiclient/sandbox.
package apiclient
