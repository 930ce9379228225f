package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// updatedSetEnv is a single-account env whose n plans were applied with
// their counters at 1, and the change set (returned) that diff -o saved
// of the file then raising them to 50.
func updatedSetEnv(t *testing.T, n int) (*env, string) {
	t.Helper()
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(n, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	writeCSV(t, file, updateRows(n, 50))
	set := filepath.Join(e.dir, "changes.json")
	if r := e.run("diff", file, "-o", set); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	return e, set
}

// TestChangeSetEditedDuringApplyRefused: apply reads a saved change set
// again for its drift check and for its writes; a set edited on disk while
// it is being applied (here as its plans are read back from the service)
// stops the run with exit 3, and nothing of the edited set is sent.
func TestChangeSetEditedDuringApplyRefused(t *testing.T) {
	e, set := updatedSetEnv(t, 3)
	b, err := os.ReadFile(set)
	if err != nil || !strings.Contains(string(b), `"new": 50`) {
		t.Fatalf("set: %v\n%s", err, b)
	}
	e.srv.Sandbox.ResetStats()
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && planPath.MatchString(req.URL.Path) {
			once.Do(func() {
				os.WriteFile(set, []byte(strings.ReplaceAll(string(b), `"new": 50`, `"new": 500`)), 0o600)
			})
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	r := e.runApply(t.Context(), "", func(o *applyOptions) { o.HTTPClient = hc }, set, "--no-recalc")
	if r.code != ExitFatal || !strings.Contains(r.err, "changed while it was being applied") {
		t.Fatalf("exit %d, want %d naming the change\n%s", r.code, ExitFatal, r.err)
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes from an edited set", w)
	}
	// The set as it was signed applies.
	os.WriteFile(set, b, 0o600)
	if r := e.run("apply", set, "--no-recalc"); r.code != 0 {
		t.Fatalf("the set as signed: exit %d\n%s", r.code, r.err)
	}
}

// TestChangeSetDriftDuringWritesNotWritten: apply compares each plan with
// the service again just before writing it; a plan changed on the service
// after the drift check passed (here while the first plan is written) is
// not written: it fails, the others are written, and the run exits 1.
func TestChangeSetDriftDuringWritesNotWritten(t *testing.T) {
	e, set := updatedSetEnv(t, 3)
	fixture := ""
	for _, a := range sandbox.DefaultFixtures().Accounts {
		if a.APIKey == e.vars[envAPIKey] {
			fixture = a.Name
		}
	}
	client, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: e.vars[envAPIKey], APISecret: e.vars[envAPISecret]})
	if err != nil {
		t.Fatal(err)
	}
	var last apiclient.Plan
	for _, p := range e.srv.Sandbox.Plans(fixture) {
		if p.Name == "Pipelined 02" {
			last = p
		}
	}
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch {
			once.Do(func() {
				m := last.Milestones[0]
				if _, err := client.UpdateTarget(context.Background(), last.ID, m.ID, m.Targets[0].ID, counters(cAMT, 7)); err != nil {
					t.Error(err)
				}
			})
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	r := e.runApply(t.Context(), "", func(o *applyOptions) { o.HTTPClient = hc }, set, "--no-recalc", "--concurrency", "1")
	if r.code != ExitDiff || !strings.Contains(r.err, "the service changed during the run") {
		t.Fatalf("exit %d, want %d naming the change\n%s", r.code, ExitDiff, r.err)
	}
	got := map[string]int64{}
	for _, p := range e.srv.Sandbox.Plans(fixture) {
		got[p.Name] = p.Milestones[0].Targets[0].Counters[cAMT]
	}
	if got["Pipelined 00"] != 50 || got["Pipelined 01"] != 51 || got["Pipelined 02"] != 7 {
		t.Errorf("service after the run: %v; want 50, 51 written and 7 left alone", got)
	}
}
