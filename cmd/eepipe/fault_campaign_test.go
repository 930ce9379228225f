package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

var campaignSeeds = flag.Int("campaign-seeds", 2, "seeds of TestFaultCampaign (CI runs the default; raise it for a longer campaign)")

// campaignFaults are the faults of every request of the campaign: refused
// (503, 429), connection reset, and lost answers (applied, no response).
const campaignFaults = "503=0.08,429=0.04,reset=0.04,lost=0.06,retry-after=0"

// TestFaultCampaign is a seeded, bounded fault campaign against the
// sandbox on 127.0.0.1 with injected faults. For each seed: two applies of
// the same workbook started together, then a recreate killed between its
// create and its delete; each time runs are repeated (faults still on)
// until one exits 0, and then the service must hold every plan exactly once
// with the file's values, and a run without faults must send nothing.
func TestFaultCampaign(t *testing.T) {
	const plans, moved = 6, 2
	for seed := int64(1); seed <= int64(*campaignSeeds); seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			e := newEnv(t, sandbox.Options{Faults: campaignFaults, Seed: seed})
			e.singleAccount()
			rows := concurrentRows("Campaign", plans)
			file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)

			// 1. Two applies at once.
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.run("apply", file, "--no-recalc", "--lock-wait", "10m")
					if r.code == ExitInvalid {
						t.Errorf("concurrent apply: exit 2\n%s", r.err)
					}
				}()
			}
			wg.Wait()
			converge(t, e, file)
			stored := campaignCheck(t, e, rows)

			// 2. Move the start date of some plans (with their plan_ids)
			// and kill the recreate at its first delete.
			for i := range rows {
				p := stored[rows[i].name]
				rows[i].planID = fmt.Sprint(p.ID)
				if n := campaignIndex(rows[i].name); n < moved {
					rows[i].start = "2026-09-01"
				}
			}
			writeCSV(t, file, rows)
			ctx, kill := context.WithCancel(context.Background())
			hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodDelete {
					kill()
					return nil, context.Canceled
				}
				return http.DefaultTransport.RoundTrip(req)
			})}
			r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--recreate-on-date-change", "--no-recalc")
			if r.code == 0 || r.code == ExitInvalid {
				t.Fatalf("killed recreate: exit %d\n%s", r.code, r.err)
			}
			converge(t, e, file, "--recreate-on-date-change")
			campaignCheck(t, e, rows)

			// 3. Without faults the service matches the file: no write,
			// although the workbook still holds the recreated plans' old ids.
			if err := e.srv.Sandbox.SetFaults(""); err != nil {
				t.Fatal(err)
			}
			e.srv.Sandbox.ResetStats()
			if r := e.run("apply", file, "--no-recalc"); r.code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
				t.Fatalf("final apply: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
			}
		})
	}
}

// converge runs apply (faults on) until it exits 0, at most 6 times; a
// partial failure (1) or a fatal stop (3) is run again, invalid input
// never happens.
func converge(t *testing.T, e *env, file string, flags ...string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := e.run(append([]string{"apply", file, "--no-recalc"}, flags...)...)
		if r.code == 0 {
			return
		}
		if r.code == ExitInvalid || attempt == 6 {
			t.Fatalf("apply attempt %d: exit %d\n%s", attempt, r.code, r.err)
		}
	}
}

// campaignCheck asserts that the account holds every plan of rows exactly
// once, with the rows' start dates and counters, and returns them by name.
func campaignCheck(t *testing.T, e *env, rows []row) map[string]apiclient.Plan {
	t.Helper()
	byName := map[string]apiclient.Plan{}
	for _, p := range e.srv.Sandbox.Plans("acme") {
		if _, dup := byName[p.Name]; dup {
			t.Fatalf("plan %q is stored twice (duplicate)", p.Name)
		}
		byName[p.Name] = p
	}
	want := map[string]bool{}
	for _, r := range rows {
		want[r.name] = true
		p, ok := byName[r.name]
		if !ok {
			t.Fatalf("plan %q is missing", r.name)
		}
		if p.StartDate != r.start {
			t.Errorf("plan %q starts %s, want %s", r.name, p.StartDate, r.start)
		}
		if c := storedTarget(t, p, r.year, pipeline.TargetAll); c[cAMT] != r.counters[cAMT] {
			t.Errorf("plan %q year %d: %d, want %d", r.name, r.year, c[cAMT], r.counters[cAMT])
		}
	}
	if len(byName) != len(want) {
		t.Fatalf("%d plans stored, want %d", len(byName), len(want))
	}
	return byName
}

func campaignIndex(name string) int {
	var n int
	fmt.Sscanf(name, "Campaign %d", &n)
	return n
}
