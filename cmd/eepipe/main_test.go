package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests' run history out of the user's state folder:
// the default state store goes to a temporary XDG state home.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "eepipe-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
