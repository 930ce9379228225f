package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/run"
)

// TestApplyInterruptedBeforeRunRecorded: a run interrupted after the
// served-catalog check passed and before the run is recorded in the state
// store (its Begin, which fails with the cancelled context) exits 3 and
// still writes its --report: interrupted, no fatal error, every plan not
// applied, nothing sent.
func TestApplyInterruptedBeforeRunRecorded(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	seed := writeCSV(t, filepath.Join(e.dir, "seed.csv"), updateRows(1, 1))
	if r := e.run("apply", seed, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	// Plans to create only: no plan is read to compare, so the catalog
	// check reads the seeded plan (which tells the served catalog), and
	// the run is interrupted as that read is answered.
	rows := updateRows(2, 5)
	for i := range rows {
		rows[i].name = "Fresh " + rows[i].name
	}
	file := writeCSV(t, filepath.Join(e.dir, "new.csv"), rows)
	e.srv.Sandbox.ResetStats()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && planPath.MatchString(req.URL.Path) {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			if rerr != nil {
				return nil, rerr
			}
			once.Do(cancel)
		}
		return resp, err
	})}
	report := filepath.Join(e.dir, "run.json")
	r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--no-recalc", "--report", report)
	if r.code != ExitFatal {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitFatal, r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no run report: %v\n%s", err, r.err)
	}
	var rep reports.RunReportJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Fatal != "" || len(rep.Plans) != len(rows) {
		t.Errorf("report: interrupted %v, fatal %q, %d plans; want interrupted, no fatal error, %d plans\n%s", rep.Interrupted, rep.Fatal, len(rep.Plans), len(rows), b)
	}
	for _, p := range rep.Plans {
		if p.Outcome != run.OutcomeNotApplied {
			t.Errorf("%s: %s %q, want not applied", p.Plan, p.Outcome, p.Error)
		}
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes after the interruption", w)
	}
}

// cancelOnWrite is stderr that cancels the run once what was written
// contains mark.
type cancelOnWrite struct {
	mu     sync.Mutex
	b      bytes.Buffer
	mark   string
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.b.Write(p)
	if strings.Contains(c.b.String(), c.mark) {
		c.cancel()
	}
	return n, err
}

// TestApplySavedInterruptedBeforeRunRecorded: a saved change set whose
// run is interrupted after its drift check passed (as the terminal is told
// so) and before the run is recorded exits 3 and still
// writes its --report: interrupted, nothing applied, nothing sent.
func TestApplySavedInterruptedBeforeRunRecorded(t *testing.T) {
	e, set := updatedSetEnv(t, 2)
	e.srv.Sandbox.ResetStats()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{mark: "passed the drift check", cancel: cancel}
	var out bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: stderr, ErrTTY: true}, Now: time.Now, Getenv: e.getenv}
	report := filepath.Join(e.dir, "run.json")
	cmd := NewCmdApply(f, func(o *applyOptions) error { _, err := runApply(ctx, f, o); return err })
	code := executeCmd(ctx, cmd, f, []string{set, "--no-recalc", "--report", report})
	stderr.mu.Lock()
	errText := stderr.b.String()
	stderr.mu.Unlock()
	if code != ExitFatal {
		t.Fatalf("exit %d, want %d\n%s", code, ExitFatal, errText)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no run report: %v\n%s", err, errText)
	}
	var rep reports.RunReportJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Fatal != "" || len(rep.Plans) != 2 {
		t.Errorf("report: interrupted %v, fatal %q, %d plans; want interrupted, no fatal error, 2 plans\n%s", rep.Interrupted, rep.Fatal, len(rep.Plans), b)
	}
	for _, p := range rep.Plans {
		if p.Outcome != run.OutcomeNotApplied {
			t.Errorf("%s: %s %q, want not applied", p.Plan, p.Outcome, p.Error)
		}
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes after the interruption", w)
	}
}

// TestApplySavedInterruptedDuringDriftCheck: a saved change set whose run
// is interrupted while its plans are read back (the drift check) exits 3
// and still writes its --report: every plan of the set not applied.
func TestApplySavedInterruptedDuringDriftCheck(t *testing.T) {
	e, set := updatedSetEnv(t, 3)
	e.srv.Sandbox.ResetStats()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && planPath.MatchString(req.URL.Path) {
			once.Do(cancel) // the first plan read back is interrupted
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	report := filepath.Join(e.dir, "run.json")
	r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, set, "--no-recalc", "--report", report)
	if r.code != ExitFatal {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitFatal, r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no run report: %v\n%s", err, r.err)
	}
	var rep reports.RunReportJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Fatal != "" || len(rep.Plans) != 3 {
		t.Errorf("report: interrupted %v, fatal %q, %d plans; want interrupted, no fatal error, 3 plans\n%s", rep.Interrupted, rep.Fatal, len(rep.Plans), b)
	}
	for _, p := range rep.Plans {
		if p.Outcome != run.OutcomeNotApplied || !strings.Contains(p.Error, "interrupted") || !strings.Contains(p.Plan, `"Pipelined 0`) {
			t.Errorf("%s: %s %q, want not applied: interrupted", p.Plan, p.Outcome, p.Error)
		}
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes after the interruption", w)
	}
}
