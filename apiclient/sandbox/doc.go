// Package sandbox is an in-memory emulator of the B-BBEE compliance service:
// the employment equity plan and scorecard API under /api/public/v1 (HMAC
// authentication, account scoping, every rule of the contract and of
// docs/sandbox.md, "Behaviour", and the API keys' create and revoke with the
// service's rules, docs/sandbox.md, "API keys") and the company lookup under /api/companies (Basic
// authentication), on one http.Handler.
//
// The sandbox has its own statement of the contract (contract.go: value
// lists, the served counter catalog, dates, the clamp and the milestones),
// written from the seed and the contract notes. It imports no domain
// package, only apiclient's wire types and signature (and pace's wait), so
// that a mistake in the pipeline's rules is not made on both sides; a test
// of the sandbox's (contract_test.go, which alone imports the pipeline)
// compares the two statements.
//
// A Sandbox is loaded from Fixtures (accounts with their key pairs, lookup
// users, companies and scorecards with the workforce used by baseline
// prefill), injects faults (503, 429, dropped connections, lost answers) and
// latency (a deadline from each request's arrival) on demand, and counts
// what it served on GET /_sandbox/stats. It is safe for concurrent use: a
// plan's JSON is built once per change and kept, and no global lock is held
// while encoding. `eepipe sandbox` serves it on a TCP address; tests use
// Start, whose server bounds header, body, write and idle time and reads a
// body only after the key was found known and unexpired.
package sandbox
