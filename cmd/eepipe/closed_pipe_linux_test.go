package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/eepipe/eepipe/formats/table"
)

// TestClosedPipeEndsQuietly runs eepipe (through the supervisor) with its
// stdout read by a reader that leaves early, as `eepipe history | head -2`
// does: each command ends quietly with 141 (128 + SIGPIPE, what a shell
// reports for yes | head), never an internal error, exit 3.
func TestClosedPipeEndsQuietly(t *testing.T) {
	e := newCkEnv(t)
	vars := maps.Clone(e.vars)
	vars[envState] = e.path("state.db")
	vars[envLockDir] = e.path("locks")
	plans := e.path("plans.csv")
	if err := table.WriteFlatCSV(plans, ckPlans(t), nil); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWithFiles(t, vars, "apply", plans, "--no-recalc"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	// Three more runs of the same plans under other names, so that
	// history -v writes several pages.
	for i := 2; i <= 4; i++ {
		more := e.path(fmt.Sprintf("plans-%d.csv", i))
		ps := ckPlans(t)
		for _, p := range ps {
			p.Name = fmt.Sprintf("%s %d", p.Name, i)
		}
		if err := table.WriteFlatCSV(more, ps, nil); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runWithFiles(t, vars, "apply", more, "--no-recalc"); code != ExitOK {
			t.Fatalf("apply %s: exit %d\n%s", more, code, stderr)
		}
	}
	env := []string{envRunMain + "=1"}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	run := func(t *testing.T, headLines int, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = w
		// A one-page pipe, so that the output outgrows what the pipe holds
		// and the write after the reader left fails (as with any reader
		// slower than eepipe).
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSize, 4096)
		if headLines == 0 {
			r.Close() // the reader left before eepipe wrote anything
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if headLines > 0 {
			// A small buffer: reading N lines takes little more than them
			// off the pipe, so eepipe cannot finish its output into the
			// room a large read would free.
			br := bufio.NewReaderSize(r, 16)
			for i := 0; i < headLines; i++ {
				if _, err := br.ReadString('\n'); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
			}
			r.Close() // head -N: read N lines, then leave
		}
		_ = cmd.Wait()
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	for _, tc := range []struct {
		name string
		head int
		args []string
	}{
		{"history | head -2", 2, []string{"history", "-v"}},
		{"history, reader gone", 0, []string{"history"}},
		{"diff, reader gone", 0, []string{"diff", plans, "--no-state"}},
		{"check, reader gone", 0, []string{"check", plans}},
		{"validate, reader gone", 0, []string{"validate", plans}},
		{"help, reader gone", 0, []string{"--help"}},
		{"version, reader gone", 0, []string{"version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.head > 0 {
				// The reader leaves after tc.head lines: the rest must
				// outgrow the one-page pipe, or eepipe rightly ends 0.
				cmd := exec.Command(os.Args[0], tc.args...)
				cmd.Env = append(os.Environ(), env...)
				out, _ := cmd.Output()
				if len(out) < 4*4096 {
					t.Fatalf("eepipe %v writes %d bytes, too few to outgrow the pipe", tc.args, len(out))
				}
			}
			code, stderr := run(t, tc.head, tc.args...)
			if code != exitPipeClosed {
				t.Errorf("exit %d, want %d\n%s", code, exitPipeClosed, tail(stderr))
			}
			for _, bad := range []string{"internal error", "signal", "broken pipe", "panic"} {
				if strings.Contains(stderr, bad) {
					t.Errorf("stderr says %q:\n%s", bad, tail(stderr))
				}
			}
		})
	}
}

// fSetPipeSize is Linux's F_SETPIPE_SZ fcntl.
const fSetPipeSize = 1031
