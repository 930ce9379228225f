//go:build !unix

package main

import (
	"os"
	"time"
)

// costUsage returns a finished process's CPU time (user and system).
func costUsage(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

// costWatchRSS does not measure memory off Unix.
func costWatchRSS(int) func() int64 { return func() int64 { return 0 } }
