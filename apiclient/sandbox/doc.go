// Package sandbox is an in-memory emulator of the B-BBEE compliance service:
// the employment equity plan and scorecard API under /api/public/v1 (HMAC
// authentication, account scoping, every rule of the contract and of
// contract-notes B) and the company lookup under /api/companies (Basic
// authentication), on one http.Handler.
//
// A Sandbox is loaded from Fixtures (accounts with their key pairs, lookup
// users, companies and scorecards with the workforce used by baseline
// prefill), injects faults (503, 429, dropped connections, lost answers) and
// latency on demand, and counts what it served on GET /_sandbox/stats. It is
// safe for concurrent use. `eepipe sandbox` serves it on a TCP address; tests
// use Start.
package sandbox
