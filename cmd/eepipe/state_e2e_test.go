package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// stateEnv is a sandbox with acme's single-account settings, a state
// store and a client acting as the client company in the web app.
type stateEnv struct {
	*env
	state  string
	client *apiclient.Client
}

func newStateEnv(t *testing.T, state string) *stateEnv {
	t.Helper()
	return newStateEnvWith(t, sandbox.Options{}, state)
}

// newStateEnvWith is newStateEnv with sandbox options.
func newStateEnvWith(t *testing.T, opts sandbox.Options, state string) *stateEnv {
	t.Helper()
	e := newEnv(t, opts)
	e.singleAccount()
	if state == "" {
		state = filepath.Join(e.dir, "state.db")
	}
	c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		t.Fatal(err)
	}
	return &stateEnv{env: e, state: state, client: c}
}

// target returns the plan named name and its year-1 all_employees target.
func (s *stateEnv) target(name string) (plan, milestone, target int64, counters map[string]int64) {
	s.t.Helper()
	ctx := context.Background()
	list, err := s.client.ListPlans(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	p := planNamed(s.t, list, name)
	full, err := s.client.GetPlan(ctx, p.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, m := range full.Milestones {
		for _, tg := range m.Targets {
			if m.YearNumber == 1 && tg.TargetType == pipeline.TargetAll {
				return full.ID, m.ID, tg.ID, tg.Counters
			}
		}
	}
	s.t.Fatalf("plan %q has no year 1 all_employees target", name)
	return
}

// serviceEdit changes counters as the client would in the web app.
func (s *stateEnv) serviceEdit(name string, kv ...any) {
	s.t.Helper()
	p, m, tg, _ := s.target(name)
	if _, err := s.client.UpdateTarget(context.Background(), p, m, tg, counters(kv...)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stateEnv) want(name string, kv ...any) {
	s.t.Helper()
	_, _, _, got := s.target(name)
	for k, v := range counters(kv...) {
		if got[k] != v {
			s.t.Errorf("service %s = %d, want %d", k, got[k], v)
		}
	}
}

func (s *stateEnv) csv(file string, kv ...any) string {
	return writeCSV(s.t, filepath.Join(s.dir, file), []row{{name: "Stateful", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(kv...)}})
}

func (s *stateEnv) eepipe(args ...string) result {
	s.t.Helper()
	return s.run(append(args, "--state", s.state)...)
}

// TestThreeWayEndToEnd is the scenario against the sandbox: apply
// v1, change two counters through the API, apply v1 again (they are left
// alone, exit 1, named with their cells and the run), overwrite them on
// request, reconcile classifies, and a saved change set applies exactly
// once and never over a drifted target.
func TestThreeWayEndToEnd(t *testing.T) {
	s := newStateEnv(t, "")
	testThreeWay(t, s)
}

func testThreeWay(t *testing.T, s *stateEnv) {
	sb := s.srv.Sandbox
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2, cIFU, 3, cCMJ, 4)

	// (1) apply v1.
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	// (2) the client changes two counters in the web app.
	s.serviceEdit("Stateful", cAMT, 10, cWFS, 20)

	// (3) apply v1 again: the two are not overwritten, exit 1, named.
	sb.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 {
		t.Fatalf("apply v1 again: exit %d, %d writes; want 1 and 0\n%s", r.code, sb.Stats().Writes, r.err)
	}
	s.want("Stateful", cAMT, 10, cWFS, 20, cIFU, 3, cCMJ, 4)
	for _, w := range []string{"2 counters changed on the service", cAMT, cWFS, "v1.csv line 2, column", "file 1, service 10, last applied 1 by run 1 on",
		"file 2, service 20", "changed on the service since run 1", "--overwrite-service-changes"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("the message lacks %q:\n%s", w, r.err)
		}
	}
	if strings.Contains(r.err, cIFU) {
		t.Errorf("an unchanged counter is reported:\n%s", r.err)
	}
	// diff says the same, and apply would send nothing.
	if r := s.eepipe("diff", v1); r.code != 1 || !strings.Contains(r.out, "changed on the service since run 1") || !strings.Contains(r.out, "0 counters to change") {
		t.Errorf("diff: exit %d\n%s\n%s", r.code, r.out, r.err)
	}

	// (5) reconcile classifies them as changed on the service by run 1.
	rec := s.reconcile(v1)
	classes := rec.classes()
	if classes[cAMT] != diff.ClassService || classes[cWFS] != diff.ClassService || len(classes) != 2 {
		t.Errorf("reconcile classes = %v", classes)
	}
	if l := rec.last(cAMT); l == nil || l.RunID != 1 || l.Value != 1 {
		t.Errorf("reconcile last applied of %s = %+v, want 1 by run 1", cAMT, l)
	}

	// (4) --overwrite-service-changes restores them.
	if r := s.eepipe("apply", v1, "--no-recalc", "--overwrite-service-changes"); r.code != 0 || !strings.Contains(r.err, "overwritten (--overwrite-service-changes)") {
		t.Fatalf("overwrite: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cAMT, 1, cWFS, 2)

	// (5) continued: a file change, and a conflict.
	s.serviceEdit("Stateful", cIFU, 30)
	v2 := s.csv("v2.csv", cAMT, 1, cWFS, 2, cIFU, 33, cCMJ, 44)
	classes = s.reconcile(v2).classes()
	if classes[cIFU] != diff.ClassBoth || classes[cCMJ] != diff.ClassFile || len(classes) != 2 {
		t.Errorf("reconcile v2 classes = %v", classes)
	}
	// Without history (--no-state) the counter is simply different.
	if r := s.run("reconcile", v2, "--no-state"); r.code != 1 || strings.Contains(r.out, "last applied") || !strings.Contains(r.err, "--no-state") {
		t.Errorf("reconcile --no-state: exit %d\n%s\n%s", r.code, r.out, r.err)
	}

	// (6) a saved change set: drift refuses it, unchanged it applies once.
	cs := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", v2, "-o", cs, "--overwrite-service-changes"); r.code != 1 || !strings.Contains(r.err, "Change set written to") {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	s.serviceEdit("Stateful", cCMJ, 50) // a service-side change to a target of the set
	sb.ResetStats()
	r = s.eepipe("apply", cs, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "nothing was sent") || !strings.Contains(r.err, cCMJ) ||
		!strings.Contains(r.err, "computed against 4 on the service, it now holds 50") {
		t.Fatalf("drifted change set: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	s.want("Stateful", cIFU, 30, cCMJ, 50)
	s.serviceEdit("Stateful", cCMJ, 4) // back to what the set was computed against
	if r := s.eepipe("apply", cs, "--no-recalc"); r.code != 0 {
		t.Fatalf("change set: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cAMT, 1, cWFS, 2, cIFU, 33, cCMJ, 44)
	sb.ResetStats()
	r = s.eepipe("apply", cs, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "already applied by run") {
		t.Fatalf("second apply of the change set: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	// An edited change set is refused.
	b, _ := os.ReadFile(cs)
	edited := filepath.Join(s.dir, "edited.json")
	writeFile(t, edited, strings.Replace(string(b), `"new": 44`, `"new": 45`, 1), 0o644)
	if r := s.eepipe("apply", edited, "--no-recalc"); r.code != 2 || !strings.Contains(r.err, "signature does not match") {
		t.Fatalf("edited change set: exit %d\n%s", r.code, r.err)
	}

	// history lists the runs, with the change set's (and the apply that
	// held both counters back: it wrote nothing but recorded the two it
	// found in sync).
	if r := s.eepipe("history"); r.code != 0 || !strings.Contains(r.out, "4 runs.") || !strings.Contains(r.out, "changes.json") ||
		!strings.Contains(r.out, `plan 1 "Stateful": create`) {
		t.Errorf("history: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// By default a run's counters are counted per plan; -v lists each.
	r = s.eepipe("history")
	if !regexp.MustCompile(`plan 1 "Stateful": \d+ counters? sent in \d+ targets?\n`).MatchString(r.out) || strings.Contains(r.out, cCMJ) ||
		!strings.Contains(r.out, "-v lists each one") {
		t.Errorf("history summary:\n%s", r.out)
	}
	if r := s.eepipe("history", "-v"); !strings.Contains(r.out, cCMJ+": 0 -> 4") || strings.Contains(r.out, "-v lists each one") {
		t.Errorf("history -v:\n%s", r.out)
	}
	// history lists what was written, per counter.
	r = s.eepipe("history", "--counter", cCMJ)
	if r.code != 0 || !strings.Contains(r.out, "v1.csv") || !strings.Contains(r.out, "v2.csv") || !strings.Contains(r.out, "0 -> 4 ") || !strings.Contains(r.out, "4 -> 44") {
		t.Errorf("history: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
}

type reconcileJSON struct{ diff.Reconciliation }

func (s *stateEnv) reconcile(file string) reconcileJSON {
	s.t.Helper()
	out := filepath.Join(s.dir, "rec.json")
	r := s.eepipe("reconcile", file, "--report", out)
	if r.code != 1 {
		s.t.Fatalf("reconcile: exit %d\n%s", r.code, r.err)
	}
	var rec reconcileJSON
	b, err := os.ReadFile(out)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		s.t.Fatal(err)
	}
	return rec
}

func (r reconcileJSON) classes() map[string]diff.ChangeClass {
	m := map[string]diff.ChangeClass{}
	for _, p := range r.Plans {
		for _, t := range p.Targets {
			for _, c := range t.Counters {
				m[c.Counter] = c.Class
			}
		}
	}
	return m
}

func (r reconcileJSON) last(counter string) *pipeline.LastWrite {
	for _, p := range r.Plans {
		for _, t := range p.Targets {
			for _, c := range t.Counters {
				if c.Counter == counter {
					return c.LastApplied
				}
			}
		}
	}
	return nil
}

// TestApplyBadStateStores: a damaged store exits 3 before any request with
// a message saying what to do; --no-state applies as before, with a warning.
func TestApplyBadStateStores(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1)
	writeFile(t, s.state, strings.Repeat("not a database\n", 300), 0o600)
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 3 || s.srv.Sandbox.Stats().Requests != 0 || !strings.Contains(r.err, "damaged or not an eepipe state store") ||
		!strings.Contains(r.err, s.state) {
		t.Fatalf("damaged store: exit %d, %d requests\n%s", r.code, s.srv.Sandbox.Stats().Requests, r.err)
	}
	r = s.run("apply", v1, "--no-recalc", "--no-state")
	if r.code != 0 || !strings.Contains(r.err, "NOT protected") {
		t.Fatalf("--no-state: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cAMT, 1)
	// The configuration's state: is used, and refuses a password.
	cfg := filepath.Join(s.dir, "cfg.yaml")
	writeFile(t, cfg, "state: postgres://u:secret@127.0.0.1/db\n", 0o600)
	if r := s.run("--config", cfg, "apply", v1); r.code != 2 || !strings.Contains(r.err, "PGPASSWORD") || strings.Contains(r.err, "secret@") {
		t.Fatalf("password in the file: exit %d\n%s", r.code, r.err)
	}
}

// TestSignOffWorkbook: diff -o writes a sign-off .xlsx that apply takes;
// a plan the change set creates that exists meanwhile is drift.
func TestSignOffWorkbook(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	cs := filepath.Join(s.dir, "signoff.xlsx")
	if r := s.eepipe("diff", v1, "-o", cs); r.code != 1 || !strings.Contains(r.err, "Change set written") {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	// Someone creates the plan before the sign-off is applied.
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", cs, "--no-recalc")
	if r.code != 1 || s.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "now holds plan") {
		t.Fatalf("drifted create: exit %d, %d writes\n%s", r.code, s.srv.Sandbox.Stats().Writes, r.err)
	}
	// A fresh sign-off of a change applies once.
	v2 := s.csv("v2.csv", cAMT, 7, cWFS, 2)
	if r := s.eepipe("diff", v2, "-o", cs); r.code != 1 {
		t.Fatalf("diff -o v2: exit %d\n%s", r.code, r.err)
	}
	if r := s.eepipe("apply", cs, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply sign-off: exit %d\n%s", r.code, r.err)
	}
	s.want("Stateful", cAMT, 7, cWFS, 2)
	if r := s.eepipe("apply", cs, "--no-recalc"); r.code != 1 || !strings.Contains(r.err, "already applied by run") {
		t.Fatalf("second apply: exit %d\n%s", r.code, r.err)
	}
}
