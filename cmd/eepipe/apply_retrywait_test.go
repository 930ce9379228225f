package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/run"
)

// TestApplyInterruptCutsRetryWait: once the service answers the target
// writes 503 with a Retry-After of an hour, Ctrl-C (the run's context
// cancelled after the first 503) ends the run at once instead of waiting
// the hour out: exit 3, nothing written, the plan whose write was refused
// reported not applied with the service's answer and the interruption, the
// others not sent, and no request sent after the cancel (at concurrency 1
// the refused write holds the only slot; at 4 no request is sent twice, so
// nothing was retried).
func TestApplyInterruptCutsRetryWait(t *testing.T) {
	for _, conc := range []string{"1", "4"} {
		t.Run("concurrency "+conc, func(t *testing.T) {
			const plans = 6
			e := newEnv(t, sandbox.Options{})
			e.singleAccount()
			file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(plans, 1))
			if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
				t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
			}
			writeCSV(t, file, updateRows(plans, 50))
			e.srv.Sandbox.ResetStats()
			t.Cleanup(func() { e.srv.Sandbox.SetFaults("") })

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var (
				mu          sync.Mutex
				faultsOn    bool
				cancelled   bool
				afterCancel []string       // requests that reached the transport after the cancel
				afterFaults map[string]int // attempts per request once the faults are on
			)
			afterFaults = map[string]int{}
			hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				key := req.Method + " " + req.URL.Path
				mu.Lock()
				if cancelled {
					afterCancel = append(afterCancel, key)
				}
				if !faultsOn && req.Method == http.MethodPatch {
					// The first target write: from now on the service answers
					// everything 503, Retry-After one hour.
					if err := e.srv.Sandbox.SetFaults("503=1,retry-after=3600"); err != nil {
						t.Error(err)
					}
					faultsOn = true
				}
				if faultsOn {
					afterFaults[key]++
				}
				mu.Unlock()
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
					mu.Lock()
					if !cancelled {
						cancelled = true
						cancel()
					}
					mu.Unlock()
				}
				return resp, err
			})}
			report := filepath.Join(e.dir, "run.json")
			r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--concurrency", conc, "--no-recalc", "--report", report)
			if r.code != ExitFatal {
				t.Fatalf("exit %d, want %d\n%s", r.code, ExitFatal, r.err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !cancelled {
				t.Fatal("no 503 was answered")
			}
			if conc == "1" && len(afterCancel) > 0 {
				t.Errorf("requests sent after the cancel: %v", afterCancel)
			}
			for k, n := range afterFaults {
				if n > 1 {
					t.Errorf("%s sent %d times after the 503s began: retried", k, n)
				}
			}
			if w := e.srv.Sandbox.Stats().Writes; w != 0 {
				t.Errorf("%d writes", w)
			}

			var rep reports.RunReportJSON
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.Interrupted || rep.Fatal != "" {
				t.Errorf("report: interrupted %v, fatal %q; want interrupted and no fatal error", rep.Interrupted, rep.Fatal)
			}
			if len(rep.Plans) != plans {
				t.Fatalf("%d plans in the report, want %d", len(rep.Plans), plans)
			}
			refused := 0
			for _, p := range rep.Plans {
				if p.Outcome != run.OutcomeNotApplied {
					t.Errorf("%s: %s %q, want not applied", p.Plan, p.Outcome, p.Error)
					continue
				}
				switch {
				case strings.Contains(p.Error, "503") && strings.HasSuffix(p.Error, "not retried: interrupted"):
					refused++
					if !strings.Contains(p.Error, "retry after 1h0m0s") {
						t.Errorf("%s: %q does not keep the service's answer", p.Plan, p.Error)
					}
				case strings.HasSuffix(p.Error, "not sent: the run was interrupted"):
				default:
					t.Errorf("%s: not applied because %q; want the refused write or the interruption", p.Plan, p.Error)
				}
				if strings.Contains(strings.ToLower(p.Error), "unreachable") {
					t.Errorf("%s: %q calls the interruption an unreachable service", p.Plan, p.Error)
				}
			}
			if refused == 0 {
				t.Errorf("no plan reports its refused write:\n%s", b)
			}
			if rep.Summary.PlansNotApplied != plans {
				t.Errorf("summary: %d not applied, want %d", rep.Summary.PlansNotApplied, plans)
			}
			if !strings.Contains(r.err, "not retried: interrupted") || !strings.Contains(r.err, "The run was interrupted") {
				t.Errorf("stderr does not tell the refused write and the interruption:\n%s", r.err)
			}
		})
	}
}
