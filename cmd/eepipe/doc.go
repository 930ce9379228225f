// Command eepipe moves Employment Equity plan targets between spreadsheets
// and the B-BBEE compliance service. See README.md and docs/.
//
// The command is wiring only: flags (one options struct per command,
// NewCmdX(f, runF)), configuration, the IO streams, logs and exit codes.
// factory.go holds the Factory and the IO streams every command is built
// from (clock, environment, global flags, the logger); root.go the command
// tree, Main and the exit codes.
// It keeps no worker pool and no routing or change-set rule: every stored
// plan a command reads (apply, diff, reconcile, export, check --server)
// is read through pipeline.Runner (the one door to the service, with its
// gate), which plan goes to which account is pipeline.CheckRouting and
// the Runner's routing, companies are compared by pipeline.SameIdentifier
// (configured identifiers keyed by pipeline.IdentifierKey, account names
// by pipeline.NameKey),
// an account's configured identifiers are checked by
// pipeline.CheckConfiguredCompany, and the service's counter catalog is
// pipeline.Runner.ServiceCatalog (pipeline.CatalogOfStored per plan).
//
// cmd/eepipe is the only package that builds the outside world: the
// apiclient.Client, its pipeline/planapi adapters, the pipeline/filelock
// Locker, the pipeline/statestore history and the sandbox for `eepipe
// sandbox`.
package main
