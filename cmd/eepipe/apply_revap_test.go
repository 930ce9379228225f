package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/run"
)

// TestApplyInterruptedWhileClassifyingIsNotAStoreFailure: Ctrl-C right
// after a plan was read makes the state store's read (the plan's
// three-way classification) fail with the cancelled context. That is the
// interruption, not a fatal store failure: the report says interrupted,
// names no fatal error, and every plan not written says it was not sent
// because the run was interrupted.
func TestApplyInterruptedWhileClassifyingIsNotAStoreFailure(t *testing.T) {
	const plans = 4
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(plans, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	writeCSV(t, file, updateRows(plans, 50))
	e.srv.Sandbox.ResetStats()

	// The first plan read is answered whole, then the run is interrupted:
	// its classification runs with the cancelled context.
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
	r := e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--concurrency", "1", "--no-recalc", "--report", report)
	if r.code != ExitFatal {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitFatal, r.err)
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
	for _, p := range rep.Plans {
		if p.Outcome != run.OutcomeNotApplied || p.Error != "not sent: the run was interrupted" && !strings.HasSuffix(p.Error, "not sent: the run was interrupted") {
			t.Errorf("%s: %s %q, want not applied: the run was interrupted", p.Plan, p.Outcome, p.Error)
		}
		if strings.Contains(p.Error, "state store") {
			t.Errorf("%s: %q blames the state store for the interruption", p.Plan, p.Error)
		}
	}
	if strings.Contains(r.err, "state store") {
		t.Errorf("stderr blames the state store:\n%s", r.err)
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes after the interruption", w)
	}
}

// TestApplyServedCatalogFailsBeforeAnyWrite: a file whose plans to create
// come first, then updates, with a counter column the service lacks,
// writes nothing at any concurrency (the check waits for the first plan
// read, which tells the served catalog): exit 2 naming the column.
func TestApplyServedCatalogFailsBeforeAnyWrite(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	seed := writeCSV(t, filepath.Join(e.dir, "seed.csv"), updateRows(3, 1))
	// No history of the set-up: the proxy is another address of the
	// service, which the store would refuse for the same key pair.
	if r := e.run("apply", seed, "--no-recalc", "--no-state"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	e.vars[envBaseURL] = renamingProxy(t, e.srv.URL)
	served := filepath.Join(e.dir, "served.csv")
	if r := e.run("export", "-o", served); r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.err)
	}
	b, err := os.ReadFile(served)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	header := strings.Split(strings.TrimRight(lines[0], "\r"), ",")
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, header)
		return -1
	}
	idCol, nameCol, cCol := col("plan_id"), col("plan_name"), col(servedCounter)
	header[cCol] = builtinCounter // the service serves servedCounter, not this one
	var creates, updates []string
	for i, l := range lines[1:] {
		cells := strings.Split(strings.TrimRight(l, "\r"), ",")
		cells[cCol] = "1"
		updates = append(updates, strings.Join(cells, ","))
		n := slices.Clone(cells)
		n[idCol], n[nameCol] = "", fmt.Sprintf("Brand new %d", i)
		creates = append(creates, strings.Join(n, ","))
	}
	file := filepath.Join(e.dir, "lacking.csv")
	body := strings.Join(header, ",") + "\n" + strings.Join(creates, "\n") + "\n" + strings.Join(updates, "\n") + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, conc := range []string{"1", "8"} {
		e.srv.Sandbox.ResetStats()
		r := e.run("apply", file, "--concurrency", conc)
		code, stderr := r.code, r.err
		if code != ExitInvalid || !strings.Contains(stderr, "is a counter the service does not have") || !strings.Contains(stderr, "nothing was sent") {
			t.Errorf("concurrency %s: exit %d, want %d\n%s", conc, code, ExitInvalid, stderr)
		}
		if w := e.srv.Sandbox.Stats().Writes; w != 0 {
			t.Errorf("concurrency %s: %d writes for a counter the service lacks", conc, w)
		}
	}
}
