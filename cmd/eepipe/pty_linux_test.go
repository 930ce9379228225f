package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// openPTY opens a pseudo-terminal: the side a program writes to as its
// terminal (tty) and the side the test reads (ptm). Both close with the test.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		ptm.Close()
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	return ptm, tty
}

// runOnTerminal runs the eepipe binary (this test binary as eepipe) with
// args and env added, its stdout a pipe and its stderr a pseudo-terminal,
// and returns its exit code, its stdout and what the terminal showed.
func runOnTerminal(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ptm, tty := openPTY(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envRunMain+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	var screenText bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&screenText, ptm) // ends with EIO when the last writer closes
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds its own copy
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%v did not end within 2 minutes", args)
	}
	wg.Wait()
	return cmd.ProcessState.ExitCode(), out.String(), screenText.String()
}

// TestColourFollowsTheTerminal: on a terminal the log levels are coloured
// unless NO_COLOR is set (to anything) or TERM is dumb; off a terminal
// nothing is coloured, even in console format.
func TestColourFollowsTheTerminal(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "Coloured", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	base := []string{envBaseURL + "=" + e.srv.URL, envAPIKey + "=mpk_sandbox_acme", envAPISecret + "=sandbox-secret-acme",
		envState + "=" + filepath.Join(e.dir, "state.db"), envLockDir + "=" + filepath.Join(e.dir, "locks")}
	const colour = "\x1b["
	for _, tc := range []struct {
		name   string
		env    []string
		colour bool
	}{
		{"a terminal", []string{"TERM=xterm", "NO_COLOR="}, true},
		{"NO_COLOR", []string{"TERM=xterm", "NO_COLOR=1"}, false},
		{"NO_COLOR=0 is set too", []string{"TERM=xterm", "NO_COLOR=0"}, false},
		{"TERM=dumb", []string{"TERM=dumb", "NO_COLOR="}, false},
	} {
		code, _, screen := runOnTerminal(t, append(base, tc.env...), "diff", file)
		if code != ExitDiff || !strings.Contains(screen, "INFO") {
			t.Fatalf("%s: exit %d, want 1 and console logs\n%q", tc.name, code, screen)
		}
		if got := strings.Contains(screen, colour); got != tc.colour {
			t.Errorf("%s: coloured %v, want %v:\n%q", tc.name, got, tc.colour, screen)
		}
	}
	cmd := exec.Command(os.Args[0], "--log-format", "console", "diff", file)
	cmd.Env = append(append(os.Environ(), envRunMain+"=1", "TERM=xterm", "NO_COLOR="), base...)
	b, _ := cmd.CombinedOutput()
	if strings.Contains(string(b), colour) || !strings.Contains(string(b), "INFO") {
		t.Errorf("off a terminal, console format: coloured, or not console:\n%q", b)
	}
}

// TestApplyOnATerminalSummarisesPlans: on a real terminal apply shows
// each plan as diff summarises it (a line per plan, its counters
// counted), and with -v its counters, never debug logs.
func TestApplyOnATerminalSummarisesPlans(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	base := []string{envBaseURL + "=" + e.srv.URL, envAPIKey + "=mpk_sandbox_acme", envAPISecret + "=sandbox-secret-acme",
		envState + "=" + filepath.Join(e.dir, "state.db"), envLockDir + "=" + filepath.Join(e.dir, "locks"), "TERM=xterm", "NO_COLOR=1"}
	for i, verbose := range []bool{false, true} {
		name := []string{"Brief A", "Verbose A"}[i]
		file := writeCSV(t, filepath.Join(e.dir, strings.ReplaceAll(name, " ", "")+".csv"), []row{
			{vat: vatAcme, name: name, start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 3, cWFS, 2)},
			{vat: vatAcme, name: name + "2", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 5)},
		})
		args := []string{"apply", file, "--no-recalc"}
		if verbose {
			args = append(args, "-v")
		}
		code, _, screenText := runOnTerminal(t, base, args...)
		lines := screen(screenText)
		all := strings.Join(lines, "\n")
		if code != 0 || !strings.Contains(all, "Each plan as it is compared, then written:") || strings.Count(all, "+ create plan") != 2 {
			t.Fatalf("%v: exit %d, want 0 and the two plans\n%s", args, code, all)
		}
		counted, listed := strings.Contains(all, "    2 counters in 1 target"), regexp.MustCompile(cAMT+` +0 -> 3\n`).MatchString(all)
		if counted == verbose || listed != verbose || strings.Contains(all, "DEBUG") {
			t.Errorf("%v: counters counted %v, listed %v (want listed only with -v), or debug logs:\n%s", args, counted, listed, all)
		}
	}
}
