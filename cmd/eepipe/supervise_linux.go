package main

import (
	"encoding/json"
	"errors"
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
				f := os.NewFile(uintptr(fd), "eepipe-crash-report")
				_ = debug.SetCrashOutput(f, debug.CrashOptions{})
				// Tell the supervisor that eepipe's own code runs: an end
				// without this byte is a child that could not start.
				_, _ = f.Write([]byte{superviseStarted})
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
		if errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EAGAIN) {
			// Out of memory or processes: running in this process would
			// only fail later, and worse.
			superviseFatal(fmt.Sprintf("internal error: eepipe could not start its worker process (%v): the system refused the memory or the process; %s",
				err, superviseLimits()))
			return ExitFatal, true
		}
		return 0, false // no child (the executable is gone ...): run here
	}
	w.Close()
	report := make(chan childReport, 1)
	go func() {
		var first [1]byte
		n, _ := io.ReadFull(r, first[:])
		more, _ := io.Copy(io.Discard, r)
		report <- childReport{started: n == 1 && first[0] == superviseStarted, crashed: more > 0 || (n == 1 && first[0] != superviseStarted)}
	}()
	done := make(chan struct{})
	forwarded := make(chan map[os.Signal]bool, 1)
	go func() {
		sent := map[os.Signal]bool{}
		defer func() { forwarded <- sent }()
		for {
			select {
			case s := <-sigs:
				sent[s] = true
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	rep := <-report
	rep.forwarded = <-forwarded
	return superviseExit(cmd.ProcessState, rep), true
}

// superviseStarted is the byte the child writes to the crash-report pipe
// once eepipe's own code runs; a crash report follows it, if any.
const superviseStarted = 0x06

// childReport is what the supervisor learnt of its child: whether eepipe's
// code started in it, whether it wrote a crash report, and the signals the
// supervisor forwarded to it.
type childReport struct {
	started, crashed bool
	forwarded        map[os.Signal]bool
}

// superviseFatal prints an internal error of the supervisor: a line on a
// terminal, a JSON line otherwise (stderr off a terminal is JSON lines).
func superviseFatal(msg string) {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		fmt.Fprintln(os.Stderr, "eepipe: "+msg)
		return
	}
	b, _ := json.Marshal(map[string]any{"level": "fatal", "ts": time.Now().UTC().Format(time.RFC3339Nano), "msg": msg, "exit_code": ExitFatal})
	fmt.Fprintln(os.Stderr, string(b))
}

// superviseLimits words the process's address-space limit (ulimit -v)
// for a message about memory, and what to do about it.
func superviseLimits() string {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur != ^uint64(0) {
		return fmt.Sprintf("the address-space limit (ulimit -v) is %d MiB, too low for eepipe: raise it (ulimit -v unlimited), "+
			"or bound memory with a cgroup instead (systemd MemoryMax=, docker --memory)", rl.Cur>>20)
	}
	return "check the memory available (free -m) and the process limits (ulimit -a)"
}

// superviseExit maps the child's end to the supervisor's exit code: a
// crash report, a child that could not start (it ended before eepipe's
// code ran: Go ends a runtime that cannot get its memory with status 2),
// and a signal the supervisor did not forward (SIGKILL from the kernel's
// out-of-memory killer, a segmentation fault) are internal errors, exit 3,
// never 2 ("invalid input"). A child ended by a signal the supervisor
// forwarded (Ctrl-C, SIGTERM) ends the supervisor with the same signal.
func superviseExit(st *os.ProcessState, rep childReport) int {
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case rep.crashed:
		superviseFatal("internal error: eepipe crashed (the report above says where); this is a bug in eepipe, not a problem of the input: please report it")
		return ExitFatal
	case ws.Signaled() && ws.Signal() == syscall.SIGPIPE:
		// The reader of stdout (or stderr) left, as head does: Go ends a
		// process whose write to fd 1 or 2 finds the pipe closed with
		// SIGPIPE. Not a crash: end quietly with the status a shell
		// reports for it (see README.md, "Exit codes").
		return exitPipeClosed
	case ws.Signaled() && rep.forwarded[ws.Signal()]:
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		return 128 + int(sig)
	case ws.Signaled():
		why := "a fault in eepipe or the system"
		if ws.Signal() == syscall.SIGKILL {
			why = "usually the kernel's out-of-memory killer or a cgroup memory limit (see dmesg or journalctl -k); " + superviseLimits()
		}
		superviseFatal(fmt.Sprintf("internal error: eepipe was killed by signal %s (%s); nothing says the input is invalid", signalName(ws.Signal()), why))
		return ExitFatal
	case !rep.started && st.ExitCode() != 0:
		superviseFatal(fmt.Sprintf("internal error: eepipe's worker process could not start (status %d, before eepipe's code ran; the Go runtime's message is above): "+
			"most often it could not reserve memory; %s", st.ExitCode(), superviseLimits()))
		return ExitFatal
	}
	return st.ExitCode()
}

// exitPipeClosed is the exit status of a run whose output reader left
// (eepipe history | head): 128 + SIGPIPE, what a shell reports for any
// command ended by a closed pipe (yes | head), so pipefail scripts see the
// same status with and without the supervisor.
const exitPipeClosed = 128 + int(syscall.SIGPIPE)

// signalName names a signal as the shell does ("SIGKILL"), with its words.
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP"}
	if n, ok := names[sig]; ok {
		return fmt.Sprintf("%s, %v", n, sig)
	}
	return fmt.Sprintf("%d, %v", int(sig), sig)
}
