package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/term"
)

// supervise runs eepipe as a child process and waits for it, so that a
// crash of the child is told apart from invalid input: Go ends a crashed
// process with status 2 whatever the cause, and the child's crash report
// (debug.SetCrashOutput, a pipe to this process) says that it crashed. It
// returns the exit code and true in the supervisor; false in the child
// (which then runs the command) or when no child can be started.
//
// The child inherits the standard streams (terminal detection, progress
// bars and logs are unchanged), dies with the supervisor (Pdeathsig, so
// kill -9 of eepipe stops both), and runs in its own process group: a
// signal reaches it once, forwarded by the supervisor (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT), so a first Ctrl-C still stops the run gracefully and a
// second ends it at once. A child killed by a signal ends the supervisor
// with the same signal.
func supervise(args []string) (int, bool) {
	if v := os.Getenv(envSupervised); v != "" {
		// The child: crash reports go to the supervisor too. Unset, so
		// that a process this one starts is supervised on its own.
		os.Unsetenv(envSupervised)
		if fd, err := strconv.Atoi(v); err == nil && fd > 2 {
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
				_ = debug.SetCrashOutput(os.NewFile(uintptr(fd), "eepipe-crash-report"), debug.CrashOptions{})
			}
		}
		return 0, false
	}
	if os.Getenv(envNoSupervisor) != "" {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	defer r.Close()
	// Pdeathsig is sent when the thread that started the child ends: keep
	// this goroutine on its thread for the child's lifetime.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	cmd := exec.Command(exe, args...)
	cmd.Args[0] = os.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w} // descriptor 3 in the child
	cmd.Env = append(os.Environ(), envSupervised+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, false
	}
	w.Close()
	crashed := make(chan bool, 1)
	go func() {
		n, _ := io.Copy(io.Discard, r)
		crashed <- n > 0
	}()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	didCrash := <-crashed
	return superviseExit(cmd.ProcessState, didCrash), true
}

// superviseExit maps the child's end to the supervisor's exit code.
func superviseExit(st *os.ProcessState, crashed bool) int {
	if crashed {
		const msg = "internal error: eepipe crashed (the report above says where); this is a bug in eepipe, not a problem of the input: please report it"
		if term.IsTerminal(int(os.Stderr.Fd())) {
			fmt.Fprintln(os.Stderr, "eepipe: "+msg)
		} else {
			// Off a terminal stderr is JSON lines (the crash report itself
			// is Go's text and cannot be).
			b, _ := json.Marshal(map[string]any{"level": "fatal", "ts": time.Now().UTC().Format(time.RFC3339Nano), "msg": msg, "exit_code": ExitFatal})
			fmt.Fprintln(os.Stderr, string(b))
		}
		return ExitFatal
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		return 128 + int(sig)
	}
	return st.ExitCode()
}
