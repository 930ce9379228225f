//go:build unix

package xlsx

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// tempWriterAlive reports whether a process with the pid runs on this
// host (one of another user, EPERM, counts as alive). A zombie (a process
// that ended and that its parent has not reaped yet: state Z, or X, in
// /proc/PID/stat where there is a /proc) has closed its files and writes
// no more, so it is not alive.
func tempWriterAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether /proc says the process pid has ended (state Z or
// X); false where there is no /proc or it says otherwise.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "PID (COMMAND) STATE ...": the command may hold spaces and
	// parentheses, so the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	s := b[i+2]
	return s == 'Z' || s == 'X'
}
