//go:build !linux

package main

// supervise is Linux-only (it needs Pdeathsig so that the child never
// outlives eepipe); elsewhere eepipe runs in one process.
func supervise(args []string) (int, bool) { return 0, false }
