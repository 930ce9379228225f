package main

import (
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// envRunMain makes the test binary run eepipe itself (for tests that need
// a child process, such as killing an apply half-way).
const envRunMain = "EEPIPE_TEST_RUN_MAIN"

// TestMain keeps the tests' run history out of the user's state folder:
// the default state store goes to a temporary XDG state home. With
// EEPIPE_TEST_RUN_MAIN=1 the binary is eepipe.
func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		if code, ok := supervise(os.Args[1:]); ok {
			os.Exit(code)
		}
		crashForTest(os.Getenv(envTestCrash))
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

// envTestCrash makes the eepipe child of a supervised test run crash in
// the way it names (see crashForTest).
const envTestCrash = "EEPIPE_TEST_CRASH"

// crashForTest crashes the process as a bug in eepipe would: "goroutine"
// panics on a goroutine no recover reaches, "stack" overflows the stack
// (a fatal runtime error, as out of memory is).
func crashForTest(how string) {
	switch how {
	case "goroutine":
		go func() { panic("injected crash") }()
		time.Sleep(time.Minute)
	case "stack":
		debug.SetMaxStack(1 << 20)
		var recurse func(int) int
		recurse = func(n int) int { return recurse(n+1) + 1 }
		recurse(0)
	}
}
