package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// TestHistoryOfAMissingStoreCreatesNothing: history reads; given a state
// store that does not exist (a mistyped --state), it says so, writes an
// empty report if asked, and creates nothing, where it used to create
// the store and print a bare "0 runs."; a store in a folder that does not
// exist cannot be right and is refused (exit 2) in the words of every
// output's check, creating nothing either.
func TestHistoryOfAMissingStoreCreatesNothing(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	store := filepath.Join(e.dir, "state.db")
	report := filepath.Join(e.dir, "history.json")
	r := e.run("history", "--state", store, "--report", report)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	if want := "0 runs: there is no state store at " + store; !strings.Contains(r.out, want) {
		t.Errorf("want %q in\n%s", want, r.out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("history created %s (%v)", store, err)
	}
	if _, err := os.Stat(report); err != nil {
		t.Errorf("no report written: %v", err)
	}
	dir := filepath.Join(e.dir, "no-such-folder")
	r = e.run("history", "--state", filepath.Join(dir, "state.db"))
	if r.code != ExitInvalid || !strings.Contains(r.err, "--state "+filepath.Join(dir, "state.db")+": the folder "+dir+" does not exist") {
		t.Fatalf("a store in a missing folder: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("history created %s (%v)", dir, err)
	}
}

// TestHistoryHasNoNoState: history only reads the store, so it offers no
// --no-state (which it could only refuse): the help does not list it and
// the flag is unknown (exit 2).
func TestHistoryHasNoNoState(t *testing.T) {
	e := newCkEnv(t)
	if r := e.run("history", "--help"); r.code != ExitOK || strings.Contains(r.out, "no-state") || !strings.Contains(r.out, "--state") {
		t.Errorf("history --help: exit %d\n%s", r.code, r.out)
	}
	if r := e.run("history", "--no-state"); r.code != ExitInvalid || !strings.Contains(r.err, "unknown flag: --no-state") {
		t.Errorf("history --no-state: exit %d\n%s", r.code, r.err)
	}
}

// TestHistoryReportNeedsAnExtension: --report's format comes from the
// file name's extension, as for the other commands: a name without one
// ("json") is refused before anything is read (exit 2), not accepted
// and then failed when the report is written.
func TestHistoryReportNeedsAnExtension(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	r := e.run("history", "--state", filepath.Join(e.dir, "state.db"), "--report", "json")
	if r.code != ExitInvalid || !strings.Contains(r.err, "use a .xlsx, .csv or .json file name") {
		t.Fatalf("exit %d, want %d with the name's rule\n%s%s", r.code, ExitInvalid, r.out, r.err)
	}
}
