package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// recreateSetup applies one plan, then rewrites the file with its plan_id
// and a new start date: the next apply --recreate-on-date-change recreates
// it. It returns the file and the old plan's id.
func recreateSetup(t *testing.T, e *env) (string, int64) {
	t.Helper()
	rows := []row{{name: "Window", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 2)}}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	old := e.srv.Sandbox.Plans("acme")[0].ID
	rows[0].planID = fmt.Sprint(old)
	rows[0].start = "2026-09-01"
	rows[0].counters = counters(cAMT, 5)
	writeCSV(t, file, rows)
	return file, old
}

// deleteHook returns an HTTP client that hands every request to the
// sandbox except DELETE, which onDelete answers instead.
func deleteHook(onDelete func(*http.Request) (*http.Response, error)) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodDelete {
			return onDelete(req)
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
}

// TestRecreateKilledBetweenCreateAndDelete: the process dies after the new
// plan is created and before the old one is deleted (the context is
// cancelled and the DELETE never reaches the service). The next run adopts
// the new plan and deletes the old one, creating nothing; the run after
// that, whose workbook still holds the old plan_id, is told the plan was
// recreated as the new id and sends nothing.
func TestRecreateKilledBetweenCreateAndDelete(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file, old := recreateSetup(t, e)

	ctx, kill := context.WithCancel(context.Background())
	hc := deleteHook(func(*http.Request) (*http.Response, error) {
		kill()
		return nil, context.Canceled
	})
	r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--recreate-on-date-change", "--no-recalc")
	if r.code != ExitFatal {
		t.Fatalf("killed recreate: exit %d\n%s", r.code, r.err)
	}
	plans := e.srv.Sandbox.Plans("acme")
	if len(plans) != 2 {
		t.Fatalf("%d plans after the kill, want the old and the new", len(plans))
	}
	var newID int64
	for _, p := range plans {
		if p.ID != old {
			newID = p.ID
		}
	}

	e.srv.Sandbox.ResetStats()
	r = e.run("apply", file, "--recreate-on-date-change", "--no-recalc")
	if r.code != 0 {
		t.Fatalf("run after the kill: exit %d\n%s", r.code, r.err)
	}
	plans = e.srv.Sandbox.Plans("acme")
	if len(plans) != 1 || plans[0].ID != newID || plans[0].StartDate != "2026-09-01" {
		var ids []int64
		for _, p := range plans {
			ids = append(ids, p.ID)
		}
		t.Fatalf("plans after the rerun: %v, want only plan %d", ids, newID)
	}
	if st := e.srv.Sandbox.Stats(); st.ByRoute[routeCreate] != 0 {
		t.Fatalf("the rerun created %d plans, want 0 (adopt)", st.ByRoute[routeCreate])
	}
	if !strings.Contains(r.err, fmt.Sprintf("plan %d with the new dates was left by an earlier recreate", newID)) {
		t.Errorf("the adoption is not reported:\n%s", r.err)
	}
	if c := storedTarget(t, plans[0], 1, pipeline.TargetAll); c[cAMT] != 5 {
		t.Errorf("adopted plan's counter %d, want 5", c[cAMT])
	}

	// The workbook still names the old plan_id: no failure, no write, and
	// the user is told where the plan went and how to refresh the file.
	e.srv.Sandbox.ResetStats()
	r = e.run("apply", file, "--no-recalc")
	if r.code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("run with the stale plan_id: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	for _, want := range []string{fmt.Sprintf("plan_id %d is no longer on account default", old), fmt.Sprintf("recreated as plan %d", newID),
		fmt.Sprintf("eepipe export --plan %d", newID)} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stale plan_id message lacks %q:\n%s", want, r.err)
		}
	}
	// reconcile tells the auditor the workbook's plan_id is out of date.
	report := filepath.Join(e.dir, "drift.json")
	r = e.run("reconcile", file, "--report", report)
	if r.code != ExitDiff {
		t.Fatalf("reconcile with the stale plan_id: exit %d\n%s", r.code, r.err)
	}
	drift := exReadFile(t, report)
	for _, want := range []string{`"field": "plan_id"`, fmt.Sprintf(`"workbook": "%d"`, old), fmt.Sprintf(`"server": "%d"`, newID), "recreated as plan"} {
		if !strings.Contains(drift, want) {
			t.Errorf("reconcile report lacks %q:\n%s", want, drift)
		}
	}
}

// TestRecreateFailedDeleteAdviceHolds: the DELETE of a recreate fails; the
// message's advice (run the same apply again) is followed and holds: one
// plan, nothing created twice.
func TestRecreateFailedDeleteAdviceHolds(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file, old := recreateSetup(t, e)
	hc := deleteHook(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"message":"internal error"}`)), Request: req}, nil
	})
	r := e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--recreate-on-date-change", "--no-recalc")
	if r.code != ExitDiff {
		t.Fatalf("recreate with a failing delete: exit %d\n%s", r.code, r.err)
	}
	advice := "run the same apply --recreate-on-date-change again"
	if !strings.Contains(r.err, fmt.Sprintf("the old plan %d could not be deleted", old)) || !strings.Contains(r.err, advice) {
		t.Fatalf("the failure does not advise %q:\n%s", advice, r.err)
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 2 {
		t.Fatalf("%d plans, want 2", n)
	}
	e.srv.Sandbox.ResetStats()
	if r := e.run("apply", file, "--recreate-on-date-change", "--no-recalc"); r.code != 0 {
		t.Fatalf("following the advice: exit %d\n%s", r.code, r.err)
	}
	if plans := e.srv.Sandbox.Plans("acme"); len(plans) != 1 || plans[0].ID == old || e.srv.Sandbox.Stats().ByRoute[routeCreate] != 0 {
		t.Fatalf("after following the advice: %d plans, %d creates", len(plans), e.srv.Sandbox.Stats().ByRoute[routeCreate])
	}
}
