package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// tail returns the last lines of s, for failure messages.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}
