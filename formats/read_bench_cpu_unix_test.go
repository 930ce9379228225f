//go:build unix

package formats

import "syscall"

// readBenchCPU returns the CPU time (user and system, all threads) the
// process has used so far, in seconds: unlike wall time it does not grow
// when other processes load the machine.
func readBenchCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
