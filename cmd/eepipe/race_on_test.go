//go:build race

package main

// raceEnabled: this test binary has the race detector, whose runtime
// reserves terabytes of address space (no ulimit -v test can run it).
const raceEnabled = true
