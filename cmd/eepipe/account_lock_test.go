package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// concurrentRows are n new plans, each with two years.
func concurrentRows(prefix string, n int) []row {
	var rows []row
	for i := range n {
		for y := 1; y <= 2; y++ {
			rows = append(rows, row{name: fmt.Sprint(prefix, " ", i), start: "2025-09-01", end: "2030-08-31", year: y, typ: pipeline.TargetAll,
				counters: counters(cAMT, i+y)})
		}
	}
	return rows
}

// TestConcurrentAppliesNeverDuplicate: two applies of the same workbook
// to the same account, started together. Without --lock-wait one of them
// may find the account locked (exit 3, holder named); with it the second
// waits and then finds nothing to do. Never a duplicate plan.
func TestConcurrentAppliesNeverDuplicate(t *testing.T) {
	for _, wait := range []string{"0s", "10m"} {
		t.Run("lock-wait "+wait, func(t *testing.T) {
			// Latency widens the window between listing and creating.
			e := newEnv(t, sandbox.Options{Latency: 5 * time.Millisecond})
			e.singleAccount()
			file := writeCSV(t, filepath.Join(e.dir, "p.csv"), concurrentRows("Twice", 6))
			var wg sync.WaitGroup
			results := make([]result, 2)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = e.run("apply", file, "--no-recalc", "--lock-wait", wait, "--log-format", "json")
				}()
			}
			wg.Wait()
			for i, r := range results {
				switch {
				case r.code == 0:
				case r.code == ExitFatal && wait == "0s":
					if !strings.Contains(r.err, "another eepipe run holds the lock of account default") ||
						!strings.Contains(r.err, "(eepipe apply "+file+")") || strings.Contains(r.err, "mpk_sandbox_acme") {
						t.Errorf("run %d: the held lock is not explained (or shows the key):\n%s", i, r.err)
					}
					if s := summaryLine(t, r.err); s["outcome"] != "locked" {
						t.Errorf("run %d: summary %v", i, s)
					}
				default:
					t.Errorf("run %d: exit %d\n%s", i, r.code, r.err)
				}
			}
			if wait != "0s" && (results[0].code != 0 || results[1].code != 0) {
				t.Errorf("with --lock-wait both runs must succeed: exits %d, %d", results[0].code, results[1].code)
			}
			plans := e.srv.Sandbox.Plans("acme")
			if len(plans) != 6 {
				t.Fatalf("%d plans stored after two concurrent applies, want 6", len(plans))
			}
			if got := e.srv.Sandbox.Stats().ByRoute[routeCreate]; got != 6 {
				t.Errorf("%d creates sent, want 6", got)
			}
		})
	}
}

// TestApplyAccountLockHeld: while another run holds an account's lock,
// apply exits 3 before any request and names the holder; diff takes no
// lock; an apply to another account is not blocked.
func TestApplyAccountLockHeld(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), concurrentRows("Held", 1))
	dir := e.vars[envLockDir]
	held, err := filelock.Dir{Path: dir}.Lock(context.Background(), pipeline.AccountLockKey("mpk_sandbox_acme"),
		pipeline.LockInfo{Command: "eepipe apply other.xlsx", User: "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	r := e.run("apply", file, "--log-format", "json")
	if r.code != ExitFatal || !strings.Contains(r.err, "another eepipe run holds the lock of account default") ||
		!strings.Contains(r.err, "of user ops") || !strings.Contains(r.err, "eepipe apply other.xlsx") || !strings.Contains(r.err, "--lock-wait") {
		t.Fatalf("apply with the account locked: exit %d\n%s", r.code, r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Writes != 0 {
		t.Fatalf("a locked apply wrote %d times", st.Writes)
	}
	// Having waited its --lock-wait, the run does not advise giving one.
	if r := e.run("apply", file, "--lock-wait", "10ms"); r.code != ExitFatal || !strings.Contains(r.err, "waited 10ms") ||
		!strings.Contains(r.err, "a longer --lock-wait") || strings.Contains(r.err, "give --lock-wait") {
		t.Fatalf("apply that waited for the lock: exit %d\n%s", r.code, r.err)
	} else if !strings.Contains(r.err, "holds the lock of account default: process") || !strings.Contains(r.err, "waiting up to 10ms (--lock-wait) for it") {
		t.Fatalf("apply waiting for the lock does not say so before it waits:\n%s", r.err)
	}
	if r := e.run("diff", file); r.code != ExitDiff {
		t.Fatalf("diff while the account is locked: exit %d\n%s", r.code, r.err)
	}
	// Another lock folder is another host's view: not blocked (the lock
	// is local to a folder; team locks need a shared store).
	if r := e.run("apply", file, "--lock-dir", filepath.Join(e.dir, "elsewhere")); r.code != 0 {
		t.Fatalf("apply with another lock folder: exit %d\n%s", r.code, r.err)
	}
}

// TestCaseVariantsAreAmbiguousOnTheSandbox: the account holds "Case Plan"
// and "CASE PLAN", the file says "case plan": the plan fails as ambiguous
// (exit 1, both ids named), and no third plan is created.
func TestCaseVariantsAreAmbiguousOnTheSandbox(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, name := range []string{"Case Plan", "CASE PLAN"} {
		p, err := c.CreatePlan(context.Background(), apiclient.PlanCreate{Name: name, StartDate: "2025-09-01", EndDate: "2030-08-31"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fmt.Sprint(p.ID))
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "case plan", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", file, "--no-recalc")
	if r.code != ExitDiff || !strings.Contains(r.err, "ambiguous plan") || !strings.Contains(r.err, strings.Join(ids, ", ")) {
		t.Fatalf("exit %d, want 1 with an ambiguous plan naming %v\n%s", r.code, ids, r.err)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 2 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("%d plans, %d writes after the ambiguous apply; want 2 and 0", n, e.srv.Sandbox.Stats().Writes)
	}
}

// TestApplyLockFolderUnwritable: a lock folder that cannot be made (a
// file is there) is fatal before any request, and the message says how
// to give another; one inside a file is a path that cannot be right,
// refused as an output's (exit 2) before any request.
func TestApplyLockFolderUnwritable(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), concurrentRows("Folder", 1))
	notDir := filepath.Join(e.dir, "a-file")
	writeFile(t, notDir, "x", 0o600)
	r := e.run("apply", file, "--lock-dir", notDir)
	if r.code != ExitFatal || !strings.Contains(r.err, "could not take the lock of account default") || !strings.Contains(r.err, "--lock-dir") {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Writes != 0 {
		t.Fatalf("%d writes", st.Writes)
	}
	e.srv.Sandbox.ResetStats()
	r = e.run("apply", file, "--lock-dir", filepath.Join(notDir, "locks"))
	if r.code != ExitInvalid || !strings.Contains(r.err, "--lock-dir "+filepath.Join(notDir, "locks")+": "+notDir+" is not a folder") {
		t.Fatalf("a lock folder inside a file: exit %d\n%s", r.code, r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
		t.Fatalf("%d requests", st.Requests)
	}
}
