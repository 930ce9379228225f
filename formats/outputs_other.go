//go:build !unix

package formats

import "os"

// processAlive reports whether a process with the pid runs on this host.
// Where that cannot be asked cheaply, a process that can be found counts as
// alive, so that a live lock is never taken over.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
