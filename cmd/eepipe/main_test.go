package main

import (
	"os"
	"testing"
)

// envRunMain makes the test binary run eepipe itself (for tests that need
// a child process, such as killing an apply half-way).
const envRunMain = "EEPIPE_TEST_RUN_MAIN"

// TestMain keeps the tests' run history out of the user's state folder:
// the default state store goes to a temporary XDG state home. With
// EEPIPE_TEST_RUN_MAIN=1 the binary is eepipe.
func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		os.Exit(Main(os.Args[1:], SystemIO()))
	}
	dir, err := os.MkdirTemp("", "eepipe-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
