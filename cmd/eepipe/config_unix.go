//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileOwner returns the uid owning the file.
func fileOwner(st os.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}
