// Package keyrotate is the rotation of an account's API key and the
// reading of its expiry (docs/configuration.md, "API keys"): the service's
// rules (contract-notes A5: a key is created with a key of the account,
// revoked with another one, at most five at a time, with an optional
// lifetime of 30d, 90d, 180d or 365d) and the order of a rotation's steps,
// which keeps the configuration on a working key whatever step fails.
//
// It knows the service, the configuration and the key book (the state
// store) only through the interfaces Service, Config and Book; cmd/eepipe
// wires the apiclient (through planapi), the configuration file and the
// store.
package keyrotate
