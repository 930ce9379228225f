// Command eepipe moves Employment Equity plan targets between spreadsheets
// and the B-BBEE compliance service. See README.md.
//
// The command is wiring only: flags (one options struct per command,
// NewCmdX(f, runF)), configuration, the IO streams, logs and exit codes.
// It keeps no worker pool and no routing or change-set rule: every stored
// plan a command reads (apply, diff, reconcile, export, check --server)
// is read through pipeline.Runner (the one door to the service, with its
// gate), which plan goes to which account is pipeline.CheckRouting and
// the Runner's routing, companies are compared by pipeline.SameIdentifier,
// and the service's counter catalog is pipeline.Runner.ServiceCatalog.
package main
