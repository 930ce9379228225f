// Command eepipe moves Employment Equity plan targets between spreadsheets
// and the B-BBEE compliance service. See README.md and docs/.
//
// The command is wiring only: flags (one options struct per command,
// NewCmdX(f, runF)), configuration, the IO streams, logs and exit codes
// (exit.go). Each command parses its options, builds its dependencies,
// calls the domain's packages (pipeline/run's Runner for everything sent
// to or read from the service, with the order of its locks and of a saved
// change set's steps; pipeline/assemble, diff, savedset and sector for the
// rest) and formats (files), renders the result and maps it to an exit
// code. A command's result is a return value, never a field of its
// options; the Factory (factory.go) gives every command its clock,
// environment, global flags and logger.
//
// It is the only package that builds the outside world: the
// apiclient.Client, its pipeline/planapi adapters, the pipeline/filelock
// Locker, the pipeline/statestore history and the sandbox of `eepipe
// sandbox` (docs/architecture.md).
package main
