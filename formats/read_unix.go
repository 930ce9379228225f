//go:build unix

package formats

import "syscall"

// readOpenFlags opens an input without blocking: a path swapped for a
// named pipe between the check and the open must not hang the run (the
// file opened is checked again).
const readOpenFlags = syscall.O_NONBLOCK
