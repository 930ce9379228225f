//go:build unix

package measure

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used
// so far: unlike wall time, it does not grow when other processes load the
// machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
