package main

// envSupervised marks the child of the supervisor (supervise): its value is
// the file descriptor the child writes a crash report to.
const envSupervised = "EEPIPE_SUPERVISED"

// envNoSupervisor turns the supervisor off (for debugging eepipe itself).
const envNoSupervisor = "EEPIPE_NO_SUPERVISOR"

// run is main's body. Where the platform allows it, eepipe runs itself as a
// supervised child (see supervise): a runtime crash — out of memory, a
// fatal runtime error, a panic on a goroutine of its own — ends a Go
// process with status 2, which eepipe means as "invalid input"; the
// supervisor reports it as an internal error, exit 3.
func execute(args []string) int {
	if code, ok := supervise(args); ok {
		return code
	}
	return Main(args, SystemIO())
}
