//go:build unix

package main

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// costUsage returns a finished process's CPU time (user and system).
func costUsage(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

// costWatchRSS polls the peak resident memory (VmHWM) of a running
// process every 5 ms; the returned function gives the last value read, in
// bytes (0 without /proc). The rusage of a child would not do: its
// ru_maxrss counts the parent's pages the child had before exec.
func costWatchRSS(pid int) func() int64 {
	var hwm atomic.Int64
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, err := os.ReadFile(path)
			if err != nil {
				return // the process has exited
			}
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				f := bytes.Fields(b[i+len("VmHWM:"):])
				if len(f) > 0 {
					if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						hwm.Store(kb << 10)
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() int64 {
		<-done
		return hwm.Load()
	}
}
