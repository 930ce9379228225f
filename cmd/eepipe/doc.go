// Command eepipe moves Employment Equity plan targets between spreadsheets
// and the B-BBEE compliance service. See README.md and docs/.
//
// The command is wiring only: flags (one options struct per command,
// NewCmdX(f, runF)), configuration, the IO streams, logs and exit codes.
// Each command parses its options, builds its dependencies (clients,
// state store, locker), calls pipeline, renders the result and maps it to
// an exit code; a command's result is a return value (runApply returns the
// run report), never a field of its options. The apply run's dependencies
// are the fields of one applyRun (apply.go), filled in as it builds them.
// factory.go holds the Factory and the IO streams every command is built
// from (clock, environment, global flags, the logger); root.go the command
// tree, Main and the exit codes.
// It keeps no worker pool and no routing or change-set rule: every stored
// plan a command reads (apply, diff, reconcile, export, check --server)
// is read through pipeline.Runner (the one door to the service, with its
// gate), which plan goes to which account is pipeline.CheckRouting and
// the Runner's routing, companies are compared by pipeline's sameIdentifier
// (configured identifiers keyed by pipeline.IdentifierKey, account names
// by pipeline's nameKey),
// an account's configured identifiers are checked by
// pipeline's checkConfiguredCompany, and the service's counter catalog is
// pipeline.Runner.ServiceCatalog (pipeline.CatalogOfStored per plan).
// Which accounts a run locks and under which key is pipeline.AccountLocks
// and pipeline.NamedAccounts (accountlock.go only builds it from the
// configuration); which accounts and plans an export reads is
// pipeline.ExportSources and pipeline.ReadExport; which changes are held
// back against the run history is pipeline.HoldBack. The apply path calls
// nothing back in the command for a decision: the command passes
// pipeline adapters in (its progress display is the runner's
// pipeline.Observer; the state store and the run's record its
// pipeline.RunHistory) and the runner checks the served catalog, records
// the run and its status itself; the command prints what comes out.
//
// cmd/eepipe is the only package that builds the outside world: the
// apiclient.Client, its pipeline/planapi adapters, the pipeline/filelock
// Locker, the pipeline/statestore history and the sandbox for `eepipe
// sandbox`.
package main
