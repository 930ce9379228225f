package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// TestStateServiceSpellings: the run history is kept per service, and one
// service written with a trailing slash, an upper-case scheme or host, or
// its default port is the same service. Were it another, the counters
// the client changed would have no history and be overwritten.
func TestStateServiceSpellings(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	base := s.srv.URL // http://127.0.0.1:PORT
	for i, spelling := range []string{base + "/", strings.Replace(base, "http://", "HTTP://", 1), base + "//"} {
		t.Run(spelling, func(t *testing.T) {
			s.serviceEdit("Stateful", cAMT, 10+i)
			sb := s.srv.Sandbox
			sb.ResetStats()
			r := s.eepipe("apply", v1, "--no-recalc", "--base-url", spelling)
			if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "changed on the service since run 1") {
				t.Fatalf("apply with base URL %s: exit %d, %d writes; want 1 and 0, the counter held back\n%s", spelling, r.code, sb.Stats().Writes, r.err)
			}
			s.want("Stateful", cAMT, 10+i)
		})
	}
}

func TestServiceKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://svc.example.co.za":           "https://svc.example.co.za",
		"https://svc.example.co.za/":          "https://svc.example.co.za",
		" HTTPS://SVC.Example.co.za:443// ":   "https://svc.example.co.za",
		"http://127.0.0.1:80/":                "http://127.0.0.1",
		"http://127.0.0.1:8080":               "http://127.0.0.1:8080",
		"https://svc.example.co.za/Tenant/A/": "https://svc.example.co.za/Tenant/A",
	} {
		if got := pipeline.ServiceKey(in); got != want {
			t.Errorf("ServiceKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHeldChangesInRunReport: a counter apply leaves alone because the
// client changed it on the service is in the run report (a cron job's
// only record), with the file value, the service value, the last applied
// value and the run, not just "unchanged".
func TestHeldChangesInRunReport(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	s.serviceEdit("Stateful", cAMT, 10)
	js, csv := filepath.Join(s.dir, "run.json"), filepath.Join(s.dir, "run.csv")
	for _, rep := range []string{js, csv} {
		if r := s.eepipe("apply", v1, "--no-recalc", "--report", rep); r.code != 1 {
			t.Fatalf("apply v1 again: exit %d, want 1\n%s", r.code, r.err)
		}
	}
	var got reports.RunReportJSON
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 1 || len(got.Rows[0].Held) != 1 {
		t.Fatalf("JSON rows: %s", b)
	}
	h := got.Rows[0].Held[0]
	if h.Name != cAMT || h.New != 1 || h.Old != 10 || h.Class != diff.ClassService || h.Last == nil || h.Last.RunID != 1 || h.Last.Value != 1 {
		t.Errorf("held change %+v", h)
	}
	c, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"held", cAMT + ": file 1, service 10, last applied 1 by run 1", "changed on the service since run 1"} {
		if !strings.Contains(string(c), w) {
			t.Errorf("the CSV report lacks %q:\n%s", w, c)
		}
	}
}

// TestSavedChangeSetDryRun: `eepipe diff changes.json` (and apply
// --dry-run) checks a saved change set as apply would (signature, applied
// before, drift) and shows what it would write, sending and recording
// nothing: a consultant can check a signed set before applying it.
func TestSavedChangeSetDryRun(t *testing.T) {
	s := newStateEnv(t, "")
	sb := s.srv.Sandbox
	if r := s.eepipe("apply", s.csv("v1.csv", cAMT, 1, cWFS, 2), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	cset := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", s.csv("v2.csv", cAMT, 5, cWFS, 2), "-o", cset); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	for _, args := range [][]string{{"diff", "-v", cset}, {"apply", cset, "--dry-run", "-v"}} {
		sb.ResetStats()
		r := s.eepipe(args...)
		if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.out, cAMT) || !strings.Contains(r.out, "1 -> 5") {
			t.Fatalf("%v: exit %d, %d writes; want 1, 0 and the change listed\n%s\n%s", args, r.code, sb.Stats().Writes, r.out, r.err)
		}
	}
	if r := s.eepipe("history"); !strings.Contains(r.out, "\n1 run.\n") {
		t.Fatalf("a dry run of the change set was recorded:\n%s", r.out)
	}
	// Drift shows in the dry run too, and nothing is sent.
	s.serviceEdit("Stateful", cAMT, 3)
	sb.ResetStats()
	if r := s.eepipe("diff", cset); r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "nothing was sent") || !strings.Contains(r.err, "now holds 3") {
		t.Fatalf("diff of a drifted change set: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// It is still unapplied: the dry runs did not use it up.
	s.serviceEdit("Stateful", cAMT, 1)
	if r := s.eepipe("apply", cset, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply of the change set: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cAMT, 5)
	// diff -o of a change set is refused: it writes change sets from workbooks.
	if r := s.eepipe("diff", cset, "-o", filepath.Join(s.dir, "again.json")); r.code != 2 {
		t.Fatalf("diff -o of a change set: exit %d, want 2\n%s", r.code, r.err)
	}
}

// TestPostgresLockAcrossAccountNames: the store's lock is per account of
// the service, not per name a configuration gives it: a consultant whose
// environment calls the account "default" and a cron host whose
// configuration calls it "acme-prod" never apply to it at once.
func TestPostgresLockAcrossAccountNames(t *testing.T) {
	pg := statestoretest.PostgresURL(t)
	s := newStateEnvWith(t, sandbox.Options{Latency: 20 * time.Millisecond}, pg)
	e := s.env
	v1 := manyTargets(t, filepath.Join(e.dir, "v1.csv"), 6, 1)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	// The cron host: a configuration naming the same key pair acme-prod.
	cron := *e
	cron.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme"}
	cronConfig := filepath.Join(e.dir, "cron.yaml")
	writeFile(t, cronConfig, fmt.Sprintf("base_url: %s\naccounts:\n  - name: acme-prod\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n", e.srv.URL), 0o600)
	v2 := manyTargets(t, filepath.Join(e.dir, "v2.csv"), 6, 5)
	e.srv.Sandbox.ResetStats()
	var wg sync.WaitGroup
	results := make([]result, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		results[0] = s.eepipe("apply", v2, "--no-recalc", "--concurrency", "2", "--lock-wait", "5m", "--lock-dir", filepath.Join(e.dir, "laptop"))
	}()
	go func() {
		defer wg.Done()
		results[1] = cron.run("--config", cronConfig, "apply", v2, "--no-recalc", "--concurrency", "2", "--lock-wait", "5m",
			"--lock-dir", filepath.Join(e.dir, "cron"), "--state", pg)
	}()
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("apply %d: exit %d\n%s", i, r.code, r.err)
		}
	}
	if got := e.srv.Sandbox.Stats().ByRoute[routeTarget]; got != 6 {
		t.Errorf("target patches = %d, want 6 (each target once: the applies did not interleave)", got)
	}
}

// TestHistoryAcrossAccountNames: the last value applied to a counter is
// the service's target's, whatever the configuration that wrote it called
// the account. A cron host whose configuration calls it "acme-prod" must
// not overwrite what the client changed since the consultant (whose
// environment calls it "default") applied the file.
func TestHistoryAcrossAccountNames(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	s.serviceEdit("Stateful", cAMT, 10)
	cron := *e
	cron.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme", envLockDir: filepath.Join(e.dir, "cron-locks")}
	cronConfig := filepath.Join(e.dir, "cron.yaml")
	writeFile(t, cronConfig, fmt.Sprintf("base_url: %s\naccounts:\n  - name: acme-prod\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n", e.srv.URL), 0o600)
	e.srv.Sandbox.ResetStats()
	r := cron.run("--config", cronConfig, "apply", v1, "--no-recalc", "--state", s.state)
	if r.code != 1 || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "changed on the service since run 1") {
		t.Fatalf("cron apply: exit %d, %d writes; want 1, 0 and the counter held\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	s.want("Stateful", cAMT, 10)
}

// TestSavedChangeSetTakesAccountLock: applying a change set takes the
// accounts' local lock like applying a workbook: with the lock held by
// another run it exits 3 before any write (else a workbook apply and a
// change set could create the same plan at once).
func TestSavedChangeSetTakesAccountLock(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	cset := filepath.Join(e.dir, "changes.json")
	if r := s.eepipe("diff", s.csv("v1.csv", cAMT, 1), "-o", cset); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	held, err := filelock.Dir{Path: e.vars[envLockDir]}.Lock(context.Background(), pipeline.AccountLockKey("mpk_sandbox_acme"),
		pipeline.LockInfo{Command: "eepipe apply other.xlsx", User: "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", cset, "--no-recalc")
	if r.code != ExitFatal || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "of user ops") {
		t.Fatalf("apply of a change set with the account locked: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	held.Unlock()
	if r := s.eepipe("apply", cset, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply once the lock is free: exit %d\n%s", r.code, r.err)
	}
}
