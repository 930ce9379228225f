//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestValidateSpecialFilesExitTwo: a FIFO named x.csv is refused at once
// (never opened, so nothing hangs), named for what it is.
func TestValidateSpecialFilesExitTwo(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "x.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	code, out, stderr := vtRun(t, "validate", fifo)
	if code != ExitInvalid || !strings.Contains(out, "is a named pipe (FIFO), not a regular file") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
}
