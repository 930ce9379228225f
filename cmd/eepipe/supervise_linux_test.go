package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// supervisedRun runs eepipe (the test binary as eepipe, through the
// supervisor) with args and extra environment, and returns its exit code
// and standard error.
func supervisedRun(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envRunMain+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run: %v", err)
		}
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestCrashIsNotInvalidInput: Go ends a crashed process with status 2,
// eepipe's "invalid input"; through the supervisor a crash exits 3 and
// says it is a bug, while a real invalid input still exits 2.
func TestCrashIsNotInvalidInput(t *testing.T) {
	for _, how := range []string{"goroutine", "stack"} {
		t.Run(how, func(t *testing.T) {
			code, stderr := supervisedRun(t, []string{envTestCrash + "=" + how}, "version")
			if code != ExitFatal || !strings.Contains(stderr, "internal error: eepipe crashed") {
				t.Fatalf("exit %d, stderr:\n%s", code, tail(stderr))
			}
		})
	}
	t.Run("unsupervised crash exits 2", func(t *testing.T) {
		// What the supervisor exists for: without it the crash is 2.
		code, _ := supervisedRun(t, []string{envTestCrash + "=goroutine", envNoSupervisor + "=1"}, "version")
		if code != 2 {
			t.Fatalf("exit %d, want Go's 2", code)
		}
	})
	t.Run("invalid input still exits 2", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.csv")
		if err := os.WriteFile(bad, []byte("plan_name,target_type,number_of_african_male_top_managers\nP,all_employees,-3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := supervisedRun(t, nil, "validate", bad)
		if code != ExitInvalid || strings.Contains(stderr, "crashed") {
			t.Fatalf("exit %d, stderr:\n%s", code, tail(stderr))
		}
	})
	t.Run("exit codes pass through", func(t *testing.T) {
		if code, _ := supervisedRun(t, nil, "version"); code != ExitOK {
			t.Fatalf("exit %d", code)
		}
		if code, _ := supervisedRun(t, nil, "no-such-command"); code != ExitInvalid {
			t.Fatalf("exit %d", code)
		}
	})
}

// TestSupervisorForwardsSignalsOnce: SIGINT to eepipe reaches the child
// once (the sandbox stops cleanly, exit 0; a second signal would kill it), and
// kill -9 of eepipe takes the child with it.
func TestSupervisorForwardsSignalsOnce(t *testing.T) {
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "sandbox", "--listen", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), envRunMain+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The sandbox's one stdout line says it is serving.
		ready := make(chan bool, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			ready <- line != ""
			io.Copy(io.Discard, out)
		}()
		select {
		case ok := <-ready:
			if !ok {
				cmd.Process.Kill()
				t.Fatal("the sandbox did not start")
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatal("the sandbox did not start")
		}
		return cmd
	}
	t.Run("SIGINT", func(t *testing.T) {
		cmd := start()
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		if err != nil {
			t.Fatalf("sandbox after SIGINT: %v (want a clean stop)", err)
		}
	})
	t.Run("SIGKILL", func(t *testing.T) {
		cmd := start()
		child := childOf(t, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		for i := 0; i < 250; i++ {
			if syscall.Kill(child, 0) != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("child %d outlived its supervisor", child)
	})
}

// childOf returns the pid of the one child of pid (from /proc).
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for i := 0; i < 250; i++ {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
		if f := strings.Fields(string(b)); len(f) > 0 {
			var c int
			for _, ch := range f[0] {
				c = c*10 + int(ch-'0')
			}
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no child process")
	return 0
}

// tail returns the first and last lines of s, for failure messages.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 25 {
		// The head says what ended the process (a panic, a fatal error, a
		// signal), the tail where.
		lines = append(append(lines[:10:10], "..."), lines[len(lines)-15:]...)
	}
	return strings.Join(lines, "\n")
}

// TestSupervisorChildEndsAreFatal: a child killed by SIGKILL (what the
// kernel's out-of-memory killer sends) and a child that ends before
// eepipe's code runs (a Go runtime that cannot reserve its memory ends
// with status 2) exit 3 with an internal error that names the cause,
// never 2 ("invalid input") nor 137.
func TestSupervisorChildEndsAreFatal(t *testing.T) {
	for _, tc := range []struct{ how, want string }{
		{"sigkill", "internal error: eepipe was killed by signal SIGKILL"},
		{"nostart", "internal error: eepipe's worker process could not start (status 2"},
	} {
		t.Run(tc.how, func(t *testing.T) {
			code, stderr := supervisedRun(t, []string{envTestCrash + "=" + tc.how}, "version")
			if code != ExitFatal || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 3 with %q; stderr:\n%s", code, tc.want, tail(stderr))
			}
		})
	}
}

// TestSupervisorUnderAddressLimit runs eepipe (this test binary as
// eepipe, supervised) under a sweep of address-space limits (ulimit -v,
// through bash) from too low for any Go program to ample. Whatever the
// limit, an end of the child (it could not start, it ran out of memory,
// it was killed) exits 0 or 3 with an internal error, never 2 ("invalid
// input"). What no Go code can change is a failure of the first process's
// own Go runtime (its start-up, its package initialisation, or a thread
// it cannot create in the supervisor): Go ends it with status 2 or a
// signal before or outside any code of eepipe that could speak. Those are
// recognised by their report (a Go fatal error or SIGABRT whose stacks
// name no function of eepipe's working code, or a bare SIGSEGV) and
// counted, not failed; docs/limits.md states the limit.
func TestSupervisorUnderAddressLimit(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime reserves terabytes of address space: under ulimit -v it cannot start at all (run this test without -race)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to set ulimit -v: the address-space limit is not tested")
	}
	if out, err := exec.Command("bash", "-c", "ulimit -v 4000000 && ulimit -v").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "4000000" {
		t.Skipf("ulimit -v cannot be set here (%v: %s): the address-space limit is not tested", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("plan_name,target_type,number_of_african_male_top_managers\nP,all_employees,-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A crash in eepipe's working code names one of its functions other
	// than the supervisor's.
	eepipeCode := regexp.MustCompile(`github\.com/eepipe/eepipe/(formats|pipeline|templates|apiclient)|cmd/eepipe\.(Main|Execute|run[A-Z])`)
	// A package's init runs in the first process too, before the
	// supervisor's code: a crash there is the first process's runtime
	// failing, not eepipe's working code.
	initFrame := regexp.MustCompile(`(?m)^.*\.init(\.\d+)*(\.func\d+)*\(.*$`)
	var ok, fatal, invalid, runtimeFailed int
	for mib := 64; mib <= 2048; mib += 96 {
		for _, args := range [][]string{{"version"}, {"validate", bad}} {
			cmd := exec.Command("bash", append([]string{"-c", `ulimit -v "$1" && shift && exec "$@"`, "bash", strconv.Itoa(mib << 10), os.Args[0]}, args...)...)
			cmd.Env = append(os.Environ(), envRunMain+"=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			code, msg := ws.ExitStatus(), stderr.String()
			wantOK := ExitOK
			if args[0] == "validate" {
				wantOK = ExitInvalid // the input is invalid: 2 is right once eepipe ran
			}
			switch {
			case !ws.Signaled() && code == wantOK && !strings.Contains(msg, "goroutine ") && !strings.Contains(msg, "fatal error") && !strings.Contains(msg, "runtime stack"):
				if code == ExitOK {
					ok++
				} else {
					invalid++
				}
			case !ws.Signaled() && code == ExitFatal:
				if !strings.Contains(msg, "internal error") {
					t.Errorf("ulimit -v %d MiB, %v: exit 3 without an internal error:\n%s", mib, args, tail(msg))
				}
				fatal++
			case !strings.Contains(msg, "internal error") && !eepipeCode.MatchString(initFrame.ReplaceAllString(msg, "")) &&
				(strings.Contains(msg, "fatal error") || strings.Contains(msg, "SIGABRT") || (ws.Signaled() && msg == "") ||
					// cgo's start-up, before any Go code runs, aborts when its first malloc fails.
					(ws.Signaled() && strings.HasPrefix(msg, "runtime/cgo: ")) ||
					// The dynamic loader (a cgo build links libc) cannot map
					// libc: the process never started, exit 127.
					(!ws.Signaled() && code == 127 && strings.Contains(msg, "error while loading shared libraries"))):
				runtimeFailed++
			default:
				t.Errorf("ulimit -v %d MiB, %v: exit %d (signalled %v), want %d or 3:\n%s", mib, args, code, ws.Signaled(), wantOK, tail(msg))
			}
		}
	}
	t.Logf("ran: %d, invalid input told: %d, internal error (exit 3): %d, the first process's Go runtime failed: %d", ok, invalid, fatal, runtimeFailed)
	if ok == 0 || invalid == 0 {
		t.Error("no limit let eepipe run: the sweep does not reach an ample limit")
	}
}
