package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// TestChangeSetAppliedWhenItsWritesAre: a change set counts as applied
// when its writes are. An apply stopped before its first write leaves it
// appliable; one that wrote part of it is resumed (only the rest is
// written, a plan it created is completed, not created again, and the rest
// is checked for drift); a set written in full is refused as applied.
func TestChangeSetAppliedWhenItsWritesAre(t *testing.T) {
	e, set := savedSetEnv(t)
	sb := e.srv.Sandbox
	client, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		t.Fatal(err)
	}
	amt := func(name string) (plan, milestone, target, value int64) {
		t.Helper()
		list, err := client.ListPlans(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p := planNamed(t, list, name)
		full, err := client.GetPlan(context.Background(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range full.Milestones {
			for _, tg := range m.Targets {
				if m.YearNumber == 1 && tg.TargetType == pipeline.TargetAll {
					return full.ID, m.ID, tg.ID, tg.Counters[cAMT]
				}
			}
		}
		t.Fatalf("plan %q has no year 1 all_employees target", name)
		return
	}

	// (1) Interrupted before its first write: nothing sent, the set is
	// still appliable.
	ctx, cancel := context.WithCancel(context.Background())
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			cancel()
			return nil, context.Canceled
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	sb.ResetStats()
	r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, set, "--no-recalc", "--concurrency", "1")
	cancel()
	if r.code != ExitFatal || sb.Stats().Writes != 0 {
		t.Fatalf("interrupted apply: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}

	// (2) A partial apply: the first target write goes through, every
	// later one is refused (422); the new plan is created.
	var mu sync.Mutex
	patches := 0
	hc = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch || req.Method == http.MethodPut {
			mu.Lock()
			patches++
			n := patches
			mu.Unlock()
			if n > 1 && !planPath.MatchString(req.URL.Path) {
				return &http.Response{StatusCode: http.StatusUnprocessableEntity, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(`{"errors":["injected"]}`)), Request: req}, nil
			}
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	sb.ResetStats()
	r = e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, set, "--no-recalc", "--concurrency", "1")
	if r.code != ExitDiff {
		t.Fatalf("partial apply: exit %d, want 1\n%s", r.code, r.err)
	}
	_, _, _, v0 := amt("Pipelined 00")
	_, _, _, v1 := amt("Pipelined 01")
	_, _, _, fresh := amt("Fresh")
	if v0 != 50 || v1 != 2 || fresh == 7 || len(sb.Plans("acme")) != 3 {
		t.Fatalf("after the partial apply: amt %d, %d, Fresh %d, %d plans; want 50, 2, not 7, 3 plans\n%s", v0, v1, fresh, len(sb.Plans("acme")), r.err)
	}

	// (3) The rest drifted: the resumed set writes nothing.
	p, m, tg, _ := amt("Pipelined 01")
	if _, err := client.UpdateTarget(context.Background(), p, m, tg, map[string]int64{cAMT: 9}); err != nil {
		t.Fatal(err)
	}
	sb.ResetStats()
	r = e.run("apply", set, "--no-recalc")
	if r.code != ExitDiff || sb.Stats().Writes != 0 || !strings.Contains(r.err, "computed against 2 on the service, it now holds 9") {
		t.Fatalf("drifted resume: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	if _, err := client.UpdateTarget(context.Background(), p, m, tg, map[string]int64{cAMT: 2}); err != nil {
		t.Fatal(err)
	}

	// (4) Resumed: only the rest is written, no plan created again.
	sb.ResetStats()
	r = e.run("apply", set, "--no-recalc")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.err)
	}
	if w := sb.Stats().Writes; w != 2 {
		t.Errorf("resume sent %d writes, want 2 (Pipelined 01's target and Fresh's)", w)
	}
	_, _, _, v0 = amt("Pipelined 00")
	_, _, _, v1 = amt("Pipelined 01")
	_, _, _, fresh = amt("Fresh")
	if v0 != 50 || v1 != 51 || fresh != 7 || len(sb.Plans("acme")) != 3 {
		t.Fatalf("after the resume: amt %d, %d, Fresh %d, %d plans; want 50, 51, 7, 3 plans", v0, v1, fresh, len(sb.Plans("acme")))
	}

	// (5) Applied in full: refused as applied, nothing sent.
	sb.ResetStats()
	r = e.run("apply", set, "--no-recalc")
	if r.code != ExitDiff || sb.Stats().Requests != 0 || !strings.Contains(r.err, "already applied by run") {
		t.Fatalf("applied set: exit %d, %d requests\n%s", r.code, sb.Stats().Requests, r.err)
	}
}
