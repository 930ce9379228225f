//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// costUsage returns a finished process's CPU time and peak resident
// memory in bytes.
func costUsage(ps *os.ProcessState) (time.Duration, int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0
	}
	return ps.UserTime() + ps.SystemTime(), ru.Maxrss * 1024 // KiB on Linux
}
