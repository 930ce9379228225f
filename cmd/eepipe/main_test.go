package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// envRunMain makes the test binary run eepipe itself (for tests that need
// a child process, such as killing an apply half-way).
const envRunMain = "EEPIPE_TEST_RUN_MAIN"

// TestMain keeps the tests out of the user's folders: the XDG state,
// cache and configuration homes (where the default state store and lock folder are) point
// into a temporary folder, and the tests fail when anything was written
// there, since every test is to give its own lock folder and state store
// (the env's do). With EEPIPE_TEST_RUN_MAIN=1 the binary is eepipe.
func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		if os.Getenv(envTestCrash) == "nostart" && os.Getenv(envSupervised) != "" {
			// A child whose Go runtime cannot start (no memory to
			// reserve) ends with status 2 before eepipe's code runs.
			os.Exit(2)
		}
		if code, ok := supervise(os.Args[1:]); ok {
			os.Exit(code)
		}
		crashForTest(os.Getenv(envTestCrash))
		os.Exit(Main(os.Args[1:], SystemIO()))
	}
	dir, err := os.MkdirTemp("", "eepipe-test-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	// No child eepipe reads the user's default configuration file.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Unsetenv(envConfig)
	code := m.Run()
	// eepipe's default folders are the state and cache ones; the config
	// folder is only read (the Go toolchain a benchmark runs keeps its
	// telemetry there).
	var written []string
	for _, sub := range []string{"state", "cache"} {
		filepath.WalkDir(filepath.Join(dir, sub), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				written = append(written, path)
			}
			return nil
		})
	}
	if len(written) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: tests wrote into the default state or cache folder (they must use their own --lock-dir/%s and --state/%s):\n  %s\n",
			envLockDir, envState, strings.Join(written, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// testGetenv returns the environment vars for a run of a test, with, unless
// vars sets them, a lock folder and a state store in the test's folder dir:
// no test locks or records anything in the user's folders (a test that
// wants the defaults sets them to "" in vars).
func testGetenv(dir string, vars map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok || dir == "" {
			return v
		}
		switch k {
		case envLockDir:
			return filepath.Join(dir, "locks")
		case envState:
			return filepath.Join(dir, "state.db")
		}
		return ""
	}
}

// envTestCrash makes the eepipe child of a supervised test run crash in
// the way it names (see crashForTest).
const envTestCrash = "EEPIPE_TEST_CRASH"

// crashForTest crashes the process as a bug in eepipe would: "goroutine"
// panics on a goroutine no recover reaches, "stack" overflows the stack
// (a fatal runtime error, as out of memory is), "sigkill" kills the
// process with SIGKILL, as the kernel's out-of-memory killer does
// ("nostart", in TestMain, ends the child before eepipe's code runs).
func crashForTest(how string) {
	switch how {
	case "sigkill":
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill()
		}
		time.Sleep(time.Minute)
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
