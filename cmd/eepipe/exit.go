package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit codes, documented in README.md.
const (
	ExitOK      = 0 // everything done, or no differences
	ExitDiff    = 1 // differences found, or some plans failed
	ExitInvalid = 2 // invalid input or usage
	ExitFatal   = 3 // fatal: authentication, unreachable service, interrupted, lock held
)

// ExitError carries the exit code a command wants. A command that returns
// an error of another type exits ExitFatal.
type ExitError struct {
	Code int
	Err  error // printed on stderr when not nil
	// Cause is why a run whose report already told people (Err nil)
	// failed: it is logged at level error where stderr lines are JSON
	// events (docs/scheduling.md), so that an alert on errors sees it.
	Cause error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exitf returns an ExitError with a formatted message.
func exitf(code int, format string, args ...any) *ExitError {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// silentExit returns an ExitError that prints nothing (the command already reported).
func silentExit(code int) *ExitError { return &ExitError{Code: code} }

// causedExit is silentExit for a run that failed for cause, which the
// command already reported to people: cause is logged at level error off
// a terminal (ExitError.Cause).
func causedExit(code int, cause error) *ExitError { return &ExitError{Code: code, Cause: cause} }

// exitCause returns the cause of a silent exit err (ExitError.Cause), or nil.
func exitCause(err error) error {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return ee.Cause
	}
	return nil
}

func reportExit(w io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(w, "eepipe: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(w, "eepipe: %s\n", strings.TrimRight(err.Error(), "\n"))
	if strings.HasPrefix(err.Error(), "unknown command") {
		fmt.Fprintln(w, "usage: eepipe COMMAND [flags] (eepipe --help lists the commands)")
	}
	if isUsageError(err) {
		return ExitInvalid
	}
	return ExitFatal
}

// isUsageError recognises cobra's argument and command errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
