//go:build unix

package formats

import (
	"errors"
	"syscall"
)

// tempWriterAlive reports whether a process with the pid runs on this
// host (one of another user, EPERM, counts as alive).
func tempWriterAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
