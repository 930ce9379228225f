package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const (
	routeCreate = "POST /api/public/v1/employment_equity_plans"
	routeTarget = "PATCH /api/public/v1/employment_equity_plans/{plan_id}/employment_equity_milestones/{milestone_id}/employment_equity_targets/{target_id}"
	routeMeta   = "PATCH /api/public/v1/employment_equity_plans/{id}"
	routeList   = "GET /api/public/v1/employment_equity_plans"
	routeGet    = "GET /api/public/v1/employment_equity_plans/{id}"
	routeRecalc = "PUT /api/public/v1/scorecards/{id}/recalculate"
	routeLookup = "GET /api/companies"

	cAMT = "number_of_african_male_top_managers"
	cWFS = "number_of_white_female_senior_managers"
	cIFU = "number_of_indian_female_unskilled_employees"
	cCMJ = "number_of_coloured_male_junior_managers"
)

const (
	vatAcme  = "4012345678"
	vatCrane = "4098765432"
	regCrane = "2015/123456/07"
	vatKaroo = "0412345678"
)

// env is a test environment: a sandbox on 127.0.0.1 and the settings
// that reach it.
type env struct {
	t      *testing.T
	srv    *sandbox.Server
	dir    string
	vars   map[string]string
	config string // path of a two-account configuration file
}

func newEnv(t *testing.T, opts sandbox.Options) *env {
	t.Helper()
	if opts.Fixtures == nil {
		opts.Fixtures = sandbox.DefaultFixtures()
	}
	srv, err := sandbox.Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e := &env{t: t, srv: srv, dir: t.TempDir(), vars: map[string]string{
		"ACME_SECRET":  "sandbox-secret-acme",
		"CRANE_SECRET": "sandbox-secret-bluecrane",
		"LOOKUP_PASS":  "sandbox-lookup-pass",
	}}
	e.vars[envLockDir] = filepath.Join(e.dir, "locks")
	e.config = filepath.Join(e.dir, "eepipe.yaml")
	writeFile(t, e.config, fmt.Sprintf(`base_url: %s
lookup:
  url: %s
  username: consultant
  password_env: LOOKUP_PASS
accounts:
  - name: acme
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme
    api_secret_env: ACME_SECRET
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: CRANE_SECRET
`, srv.URL, srv.URL), 0o600)
	return e
}

// singleAccount sets the environment for acme alone.
func (e *env) singleAccount() {
	e.vars[envBaseURL] = e.srv.URL
	e.vars[envAPIKey] = "mpk_sandbox_acme"
	e.vars[envAPISecret] = "sandbox-secret-acme"
	e.vars[envLookupURL] = e.srv.URL
	e.vars[envLookupUsername] = "consultant"
	e.vars[envLookupPassword] = "sandbox-lookup-pass"
}

type result struct {
	code     int
	out, err string
}

func (e *env) factory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &syncWriter{w: &errb}},
		Now:    time.Now,
		Getenv: e.getenv,
	}
	return f, &out, &errb
}

// getenv is the environment of the runs: e.vars, with a lock folder and a
// state store in the test's folder (see testGetenv).
func (e *env) getenv(k string) string { return testGetenv(e.dir, e.vars)(k) }

// run executes eepipe in-process with args.
func (e *env) run(args ...string) result {
	e.t.Helper()
	f, out, errb := e.factory()
	code := Execute(context.Background(), f, args)
	return result{code, out.String(), errb.String()}
}

// runApply runs `eepipe apply` through its cobra command with hooks for
// what the command line cannot set (HTTP client, recalculation backoff).
func (e *env) runApply(ctx context.Context, config string, hook func(*applyOptions), args ...string) result {
	e.t.Helper()
	f, out, errb := e.factory()
	f.ConfigPath = config
	cmd := NewCmdApply(f, func(o *applyOptions) error {
		if hook != nil {
			hook(o)
		}
		_, err := runApply(ctx, f, o)
		return err
	})
	code := executeCmd(ctx, cmd, f, args)
	return result{code, out.String(), errb.String()}
}

func executeCmd(ctx context.Context, cmd *cobra.Command, f *Factory, args []string) int {
	cmd.SetArgs(args)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ExitError{Code: ExitInvalid, Err: err} })
	err := cmd.ExecuteContext(ctx)
	return reportExit(f.IO.ErrOut, err)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// row is one flat row: plan columns and counters.
type row struct {
	vat, reg, planID, name, start, end, scorecard, sector string
	year                                                  int
	typ                                                   string
	counters                                              map[string]int64
}

// writeCSV writes rows as a flat CSV with every counter column any row uses.
func writeCSV(t *testing.T, path string, rows []row) string {
	t.Helper()
	counterSet := map[string]bool{}
	var counters []string
	for _, r := range rows {
		for _, n := range pipeline.DefaultCatalog().Names() {
			if _, ok := r.counters[n]; ok && !counterSet[n] {
				counterSet[n] = true
				counters = append(counters, n)
			}
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := append([]string{"company_vat_number", "company_registration_number", "plan_id", "plan_name", "start_date", "end_date",
		"scorecard_id", "sector", "year_number", "target_type"}, counters...)
	w.Write(head)
	for _, r := range rows {
		rec := []string{r.vat, r.reg, r.planID, r.name, r.start, r.end, r.scorecard, r.sector, fmt.Sprint(r.year), r.typ}
		for _, c := range counters {
			if v, ok := r.counters[c]; ok {
				rec = append(rec, fmt.Sprint(v))
			} else {
				rec = append(rec, "")
			}
		}
		w.Write(rec)
	}
	w.Flush()
	writeFile(t, path, b.String(), 0o644)
	return path
}

func counters(kv ...any) map[string]int64 {
	m := map[string]int64{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = int64(kv[i+1].(int))
	}
	return m
}

// storedTarget returns the stored counters of a plan's target.
func storedTarget(t *testing.T, p apiclient.Plan, year int, typ string) map[string]int64 {
	t.Helper()
	for _, m := range p.Milestones {
		if m.YearNumber != year {
			continue
		}
		for _, tg := range m.Targets {
			if tg.TargetType == typ {
				return tg.Counters
			}
		}
	}
	t.Fatalf("plan %d has no year %d %s", p.ID, year, typ)
	return nil
}

func planNamed(t *testing.T, plans []apiclient.Plan, name string) apiclient.Plan {
	t.Helper()
	var found []apiclient.Plan
	for _, p := range plans {
		if p.Name == name {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d plans named %q, want 1", len(found), name)
	}
	return found[0]
}

func prefill(t *testing.T, scorecard, typ string) map[string]int64 {
	t.Helper()
	for _, sc := range sandbox.DefaultFixtures().Scorecards {
		if sc.ID == scorecard {
			if typ == pipeline.TargetDisabled {
				return sc.Workforce.DisabledEmployees
			}
			return sc.Workforce.AllEmployees
		}
	}
	t.Fatalf("no fixture scorecard %s", scorecard)
	return nil
}

// baseRows are three plans over two accounts, one with scorecard prefill.
func baseRows(t *testing.T) []row {
	pf := prefill(t, "scorecard_acme_2025", pipeline.TargetAll)
	return []row{
		{vat: vatAcme, name: "Acme Plain", start: "2025-09-01", end: "2030-08-31", sector: "Manufacturing", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, 3, cWFS, 0, cIFU, 12)},
		{vat: vatAcme, name: "Acme Plain", start: "2025-09-01", end: "2030-08-31", sector: "Manufacturing", year: 2, typ: pipeline.TargetDisabled,
			counters: counters(cAMT, 1)},
		// Prefilled: cAMT equals the prefill (not sent), cWFS differs, cIFU and cCMJ blank (kept).
		{vat: vatAcme, name: "Acme Prefilled", start: "2026-09-01", end: "2029-08-31", scorecard: "scorecard_acme_2025", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, int(pf[cAMT]), cWFS, int(pf[cWFS])+5)},
		{vat: vatCrane, reg: regCrane, name: "Crane Plan", start: "2025-09-01", end: "2027-08-31", year: 2, typ: pipeline.TargetAll,
			counters: counters(cCMJ, 4)},
	}
}

func TestApplyEndToEnd(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	sb := e.srv.Sandbox
	file := writeCSV(t, filepath.Join(e.dir, "plans.csv"), baseRows(t))
	report := filepath.Join(e.dir, "run.json")

	r := e.run("--config", e.config, "apply", file, "--report", report, "--recalc-wait", "1m")
	if r.code != 0 {
		t.Fatalf("apply exit %d\nstderr:\n%s", r.code, r.err)
	}
	st := sb.Stats()
	if got := st.ByRoute[routeCreate]; got != 3 {
		t.Errorf("creates = %d, want 3", got)
	}
	// Targets with something to send: plain y1 (3 and 12), plain y2 disabled (1), prefilled y1 (cWFS only), crane y2 (4).
	if got := st.ByRoute[routeTarget]; got != 4 {
		t.Errorf("target patches = %d, want 4", got)
	}
	if st.ByRoute[routeLookup] != 2 {
		t.Errorf("lookups = %d, want 2 (one per distinct identifier set)", st.ByRoute[routeLookup])
	}
	if st.ByRoute[routeList] != 2 || st.ByRoute[routeGet] != 0 {
		t.Errorf("lists %d, gets %d; want one list per account and no get for new plans", st.ByRoute[routeList], st.ByRoute[routeGet])
	}
	if st.ByRoute[routeRecalc] != 1 {
		t.Errorf("recalculations = %d, want 1 (scorecard_acme_2025)", st.ByRoute[routeRecalc])
	}

	acme := sb.Plans("acme")
	crane := sb.Plans("bluecrane")
	if len(acme) != 2 || len(crane) != 1 {
		t.Fatalf("acme holds %d plans, bluecrane %d; want 2 and 1 (accounts must not cross)", len(acme), len(crane))
	}
	plain := planNamed(t, acme, "Acme Plain")
	if c := storedTarget(t, plain, 1, pipeline.TargetAll); c[cAMT] != 3 || c[cWFS] != 0 || c[cIFU] != 12 || c[cCMJ] != 0 {
		t.Errorf("plain year 1: %v", c)
	}
	if c := storedTarget(t, plain, 2, pipeline.TargetDisabled); c[cAMT] != 1 {
		t.Errorf("plain year 2 disabled: %d", c[cAMT])
	}
	if plain.Sector == nil || *plain.Sector != "Manufacturing" {
		t.Errorf("sector %v", plain.Sector)
	}
	pre := planNamed(t, acme, "Acme Prefilled")
	pf := prefill(t, "scorecard_acme_2025", pipeline.TargetAll)
	c := storedTarget(t, pre, 1, pipeline.TargetAll)
	if c[cWFS] != pf[cWFS]+5 {
		t.Errorf("prefilled plan cWFS = %d, want %d", c[cWFS], pf[cWFS]+5)
	}
	for _, n := range pipeline.DefaultCatalog().Names() {
		if n != cWFS && c[n] != pf[n] {
			t.Errorf("prefilled counter %s = %d, want the prefill %d (the file leaves it blank or equal)", n, c[n], pf[n])
		}
	}
	if c := storedTarget(t, planNamed(t, crane, "Crane Plan"), 2, pipeline.TargetAll); c[cCMJ] != 4 {
		t.Errorf("crane year 2: %v", c[cCMJ])
	}
	if !strings.Contains(r.err, "3 created") || !strings.Contains(r.err, "4 targets patched") {
		t.Errorf("summary missing counts:\n%s", r.err)
	}
	// Every run (not only the demo) explains the gap between the change
	// set's count and the counters sent: cAMT of the prefilled plan
	// already held the file's value once created.
	// The line counts the counters already held as history does (the
	// created plans held two of the file's values) and, of them, the one
	// the change set counted to change (the prefill).
	if !strings.Contains(r.err, pipeline.HeldText(2)+"; 1 of them was counted to change (the created plans held them once created: the scorecard prefill") {
		t.Errorf("summary does not explain the prefill gap:\n%s", r.err)
	}

	var rep reports.RunReportJSON
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 {
		t.Fatalf("report has %d rows, want one per input row (4)", len(rep.Rows))
	}
	for i, row := range rep.Rows {
		if row.Outcome != run.OutcomeCreated || row.PlanID == 0 || row.TargetID == 0 || row.MilestoneID == 0 || row.Location != fmt.Sprintf("line %d", i+2) {
			t.Errorf("report row %d: %+v", i, row)
		}
	}
	if rep.Rows[0].Changed != 2 || rep.Rows[2].Changed != 1 {
		t.Errorf("counters changed per row: %d, %d; want 2 and 1", rep.Rows[0].Changed, rep.Rows[2].Changed)
	}

	// The same file again: nothing is written.
	sb.ResetStats()
	r = e.run("--config", e.config, "apply", file)
	if r.code != 0 || sb.Stats().Writes != 0 {
		t.Fatalf("second apply: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	if !strings.Contains(r.err, "3 unchanged") {
		t.Errorf("second apply summary:\n%s", r.err)
	}

	// Change one counter: the dry run and diff print it and write nothing; apply sends exactly it.
	rows := baseRows(t)
	rows[3].counters[cCMJ] = 9
	rows[0].sector = "Construction"
	rows[1].sector = "Construction"
	writeCSV(t, file, rows)
	sb.ResetStats()
	// By default a summary per plan (fields, counters counted); with -v
	// every counter.
	for _, args := range [][]string{{"apply", "--dry-run", file, "-v"}, {"diff", "-v", file}, {"diff", file}, {"apply", "--dry-run", file}} {
		r = e.run(append([]string{"--config", e.config}, args...)...)
		if r.code != 1 || sb.Stats().Writes != 0 {
			t.Fatalf("%v: exit %d, %d writes\n%s", args, r.code, sb.Stats().Writes, r.err)
		}
		want := []string{`sector: "Manufacturing" -> "Construction"`, "~ update plan", "0 to create, 2 to update"}
		if slices.Contains(args, "-v") {
			want = append(want, cCMJ+"  4 -> 9")
			if strings.Contains(r.out+r.err, `"level":"debug"`) {
				t.Errorf("%v: -v is more detail in the output, not debug logging:\n%s%s", args, r.out, r.err)
			}
		} else {
			want = append(want, "    1 counter in 1 target (1 changed in the file)\n", "-v lists each one")
			if strings.Contains(r.out, cCMJ) {
				t.Errorf("%v lists counters without -v:\n%s", args, r.out)
			}
		}
		for _, w := range want {
			if !strings.Contains(r.out, w) {
				t.Errorf("%v output lacks %q:\n%s", args, w, r.out)
			}
		}
	}
	r = e.run("--config", e.config, "apply", file, "--no-recalc")
	st = sb.Stats()
	if r.code != 0 || st.ByRoute[routeTarget] != 1 || st.ByRoute[routeMeta] != 1 || st.Writes != 2 {
		t.Errorf("apply of one counter and one sector: exit %d, stats %+v\n%s", r.code, st, r.err)
	}
	if c := storedTarget(t, planNamed(t, sb.Plans("bluecrane"), "Crane Plan"), 2, pipeline.TargetAll); c[cCMJ] != 9 {
		t.Errorf("crane year 2 after the change: %d", c[cCMJ])
	}
	sb.ResetStats()
	if r = e.run("--config", e.config, "diff", file); r.code != 0 || sb.Stats().Writes != 0 {
		t.Errorf("diff after apply: exit %d\n%s%s", r.code, r.out, r.err)
	}
}

func TestApplyConcurrencyBound(t *testing.T) {
	e := newEnv(t, sandbox.Options{Latency: 5 * time.Millisecond})
	e.singleAccount()
	var rows []row
	for i := range 12 {
		for y := 1; y <= 3; y++ {
			rows = append(rows, row{vat: vatAcme, name: fmt.Sprint("Plan ", i), start: "2025-09-01", end: "2030-08-31", year: y,
				typ: pipeline.TargetAll, counters: counters(cAMT, y)})
		}
	}
	file := writeCSV(t, filepath.Join(e.dir, "many.csv"), rows)
	for _, n := range []int{1, 3} {
		e.srv.Sandbox.ResetStats()
		name := fmt.Sprintf("concurrency %d", n)
		// A second run after the first only lists and gets; the first creates and patches.
		r := e.run("apply", file, "--concurrency", fmt.Sprint(n))
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.err)
		}
		st := e.srv.Sandbox.Stats()
		if st.MaxInFlight > int64(n) {
			t.Errorf("%s: max in flight %d", name, st.MaxInFlight)
		}
		if n > 1 && st.MaxInFlight < 2 {
			t.Errorf("%s: requests never overlapped (max in flight %d)", name, st.MaxInFlight)
		}
	}
	if got := len(e.srv.Sandbox.Plans("acme")); got != 12 {
		t.Errorf("%d plans, want 12", got)
	}
}

func TestApplyRoutingFailuresFailOnlyTheirPlans(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	rows := []row{
		{vat: vatAcme, name: "Good", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatAcme, reg: regCrane, name: "Ambiguous", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: "4999999999", name: "Unknown", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatKaroo, name: "No account", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	}
	file := writeCSV(t, filepath.Join(e.dir, "mixed.csv"), rows)
	report := filepath.Join(e.dir, "run.csv")
	r := e.run("--config", e.config, "apply", file, "--report", report)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.err)
	}
	if len(e.srv.Sandbox.Plans("acme")) != 1 || len(e.srv.Sandbox.Plans("bluecrane")) != 0 {
		t.Fatal("only the good plan may be written")
	}
	for _, want := range []string{"ambiguous company", "Acme Foods (Pty) Ltd", "Blue Crane Logistics", "company not found",
		"no configured account belongs to Karoo Sole Trader", "1 created", "3 failed"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.err)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[1][9] != "created" || recs[2][9] != "failed" || !strings.Contains(recs[2][15], "ambiguous company") {
		t.Errorf("CSV report:\n%s", b)
	}
}

func TestApplyWaitsThroughRecalculation(t *testing.T) {
	// The recalculation started below runs an hour on the sandbox's clock,
	// which jumps ahead once apply has met its 409: however slow the
	// machine, apply finds it running, waits, and then gets it accepted.
	var ahead atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	watch := &conflictWatch{on409: func(string) { ahead.Store(int64(2 * time.Hour)) }}
	e := newEnv(t, sandbox.Options{RecalcDuration: time.Hour, Now: clock, Logger: zap.New(watch)})
	e.singleAccount()
	c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RecalculateScorecard(context.Background(), "scorecard_acme_2026"); err != nil {
		t.Fatal(err)
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "Recalc", start: "2025-09-01", end: "2030-08-31",
		scorecard: "scorecard_acme_2026", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 2)}})
	report := filepath.Join(e.dir, "run.json")
	r := e.runApply(context.Background(), "", func(o *applyOptions) { o.RecalcBackoff = 50 * time.Millisecond }, file, "--report", report)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	var rep reports.RunReportJSON
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Recalculations) != 1 || !rep.Recalculations[0].Accepted || rep.Recalculations[0].Attempts < 2 {
		t.Fatalf("recalculations %+v", rep.Recalculations)
	}
	if !strings.Contains(r.err, "already running (409)") {
		t.Errorf("the wait is not shown:\n%s", r.err)
	}

}

func TestApplyLostCreateIsNotDuplicated(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "Lost", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 5)}})
	sb := e.srv.Sandbox
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		lose := false
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/employment_equity_plans") {
			once.Do(func() { lose = true })
		}
		if lose {
			if err := sb.SetFaults("lost=1"); err != nil {
				return nil, err
			}
			defer sb.SetFaults("")
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	r := e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, file)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	plans := sb.Plans("acme")
	if len(plans) != 1 {
		t.Fatalf("%d plans after a lost create response, want 1", len(plans))
	}
	if got := sb.Stats().ByRoute[routeCreate]; got != 1 {
		t.Errorf("creates sent %d, want 1", got)
	}
	if c := storedTarget(t, plans[0], 1, pipeline.TargetAll); c[cAMT] != 5 {
		t.Errorf("adopted plan not patched: %d", c[cAMT])
	}
	if !strings.Contains(r.err, "adopted") {
		t.Errorf("the adoption is not reported:\n%s", r.err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestApplyInvalidInputSendsNothing(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	bad := filepath.Join(e.dir, "bad.csv")
	writeFile(t, bad, "company_vat_number,plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers\n"+
		vatAcme+",Bad,2025-09-01,2030-08-31,1,all_employees,-3\n", 0o644)
	noCompany := writeCSV(t, filepath.Join(e.dir, "nocompany.csv"), []row{{name: "X", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	tests := []struct {
		name string
		args []string
		has  string
	}{
		{"negative counter", []string{"--config", e.config, "apply", bad}, "nothing was sent"},
		{"dry run too", []string{"--config", e.config, "apply", "--dry-run", bad}, "nothing was sent"},
		{"missing file", []string{"--config", e.config, "apply", filepath.Join(e.dir, "nope.csv")}, ""},
		{"company columns needed with two accounts", []string{"--config", e.config, "apply", noCompany}, "several accounts"},
		{"no configuration", []string{"apply", noCompany}, "no service URL"},
		{"bad concurrency", []string{"--config", e.config, "apply", noCompany, "--concurrency", "0"}, "--concurrency"},
		{"bad report name", []string{"--config", e.config, "apply", noCompany, "--report", "x.txt"}, "--report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.srv.Sandbox.ResetStats()
			r := e.run(tc.args...)
			if r.code != ExitInvalid {
				t.Errorf("exit %d, want 2\n%s", r.code, r.err)
			}
			if n := e.srv.Sandbox.Stats().Requests; n != 0 {
				t.Errorf("%d requests sent for invalid input", n)
			}
			if !strings.Contains(r.err, tc.has) {
				t.Errorf("stderr lacks %q:\n%s", tc.has, r.err)
			}
		})
	}
}

func TestApplyFatalAndInterrupt(t *testing.T) {
	e := newEnv(t, sandbox.Options{Latency: 2 * time.Millisecond})
	e.singleAccount()
	var rows []row
	for i := range 30 {
		rows = append(rows, row{name: fmt.Sprint("P", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)

	// A refused key is fatal: exit 3, nothing written.
	e.vars[envAPISecret] = "wrong-secret"
	r := e.run("apply", file)
	if r.code != ExitFatal || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "fatal") {
		t.Fatalf("refused key: exit %d, writes %d\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	e.vars[envAPISecret] = "sandbox-secret-acme"

	// Interrupted after some creates: exit 3, the report accounts for every row.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	report := filepath.Join(e.dir, "run.json")
	sb := e.srv.Sandbox
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if req.Method == http.MethodPatch {
			once.Do(cancel)
		}
		return resp, err
	})}
	r = e.runApply(ctx, "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--concurrency", "2", "--report", report)
	if r.code != ExitFatal {
		t.Fatalf("interrupted: exit %d\n%s", r.code, r.err)
	}
	var rep reports.RunReportJSON
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report after interrupt: %v", err)
	}
	if !rep.Interrupted || len(rep.Rows) != 30 {
		t.Fatalf("report interrupted=%v rows=%d", rep.Interrupted, len(rep.Rows))
	}
	created := 0
	for _, row := range rep.Rows {
		switch row.Outcome {
		case run.OutcomeCreated, run.OutcomeFailed:
			if row.PlanID != 0 {
				created++
			}
		case run.OutcomeNotApplied:
		default:
			t.Errorf("row outcome %q after interrupt", row.Outcome)
		}
	}
	if stored := len(sb.Plans("acme")); stored != created || stored == 0 || stored == 30 {
		t.Errorf("service holds %d plans; report names %d plan ids", stored, created)
	}
	if !strings.Contains(r.err, "interrupted") {
		t.Errorf("stderr:\n%s", r.err)
	}
}

func TestRecalcCommand(t *testing.T) {
	// A recalculation runs an hour on the sandbox's clock, which jumps two
	// hours ahead once the third run below has met a 409 for its
	// scorecard: the runs do not race a real timer.
	var ahead atomic.Int64
	var armed atomic.Bool
	clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	on409 := func(path string) {
		if armed.Load() && strings.Contains(path, "scorecard_acme_2026") {
			ahead.Store(int64(2 * time.Hour))
		}
	}
	e := newEnv(t, sandbox.Options{RecalcDuration: time.Hour, Now: clock, Logger: zap.New(&conflictWatch{on409: on409})})
	r := e.run("--config", e.config, "recalc", "--account", "acme", "scorecard_acme_2025", "scorecard_acme_2026")
	if r.code != 0 || strings.Count(r.out, "recalculation accepted") != 2 {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	// Both are running now: one waits through the 409, the other gives up at --recalc-wait.
	r = e.run("--config", e.config, "recalc", "--account", "acme", "scorecard_acme_2025", "--recalc-wait", "100ms")
	if r.code != 1 || !strings.Contains(r.out, "still running after waiting") {
		t.Errorf("short wait: exit %d\n%s%s", r.code, r.out, r.err)
	}
	armed.Store(true)
	r = e.run("--config", e.config, "recalc", "--account", "acme", "scorecard_acme_2026")
	if r.code != 0 || !strings.Contains(r.out, "after waiting") {
		t.Errorf("waited: exit %d\n%s%s", r.code, r.out, r.err)
	}
	for _, tc := range []struct {
		args []string
		code int
		has  string
	}{
		{[]string{"--config", e.config, "recalc", "scorecard_nobody_2025"}, ExitInvalid, "scorecard_nobody_2025 is not a scorecard of any configured account (acme, bluecrane)"},
		{[]string{"--config", e.config, "recalc", "--account", "nobody", "scorecard_acme_2025"}, ExitInvalid, "not a configured account"},
		{[]string{"--config", e.config, "recalc", "--account", "acme", "acme_2025"}, ExitInvalid, "not a scorecard id"},
		{[]string{"--config", e.config, "recalc", "--account", "bluecrane", "scorecard_acme_2025"}, ExitDiff, "not recalculated"},
	} {
		r := e.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.out+r.err, tc.has) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tc.args, r.code, tc.code, tc.has, r.out, r.err)
		}
	}
}

// conflictWatch is a zap core for the sandbox's request log: it calls
// on409 with the path of each request answered 409.
type conflictWatch struct{ on409 func(path string) }

func (c *conflictWatch) Enabled(zapcore.Level) bool        { return true }
func (c *conflictWatch) With([]zapcore.Field) zapcore.Core { return c }
func (c *conflictWatch) Sync() error                       { return nil }
func (c *conflictWatch) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c *conflictWatch) Write(_ zapcore.Entry, fields []zapcore.Field) error {
	var path string
	var status int64
	for _, f := range fields {
		switch f.Key {
		case "path":
			path = f.String
		case "status":
			status = f.Integer
		}
	}
	if status == 409 {
		c.on409(path)
	}
	return nil
}

func TestCompaniesCommand(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	r := e.run("companies", "--vat", vatAcme)
	if r.code != 0 || !strings.Contains(r.out, "Acme Foods (Pty) Ltd") || !strings.Contains(r.out, "2009/012345/07") {
		t.Errorf("table: exit %d\n%s%s", r.code, r.out, r.err)
	}
	r = e.run("companies", "--vat", vatAcme, "--registration", regCrane, "--json")
	var recs []apiclient.Company
	if err := json.Unmarshal([]byte(r.out), &recs); err != nil || len(recs) != 2 {
		t.Errorf("json: %v %d\n%s", err, len(recs), r.out)
	}
	if r.code != 0 || !strings.Contains(r.err, "ambiguous company") {
		t.Errorf("ambiguous: exit %d\n%s", r.code, r.err)
	}
	if r = e.run("companies", "--id-number", "0000000000000"); r.code != 1 || !strings.Contains(r.err, "No company matches") {
		t.Errorf("none: exit %d\n%s", r.code, r.err)
	}
	if r = e.run("companies"); r.code != 2 {
		t.Errorf("no identifier: exit %d", r.code)
	}
	e.vars[envLookupPassword] = "pw-Zq81x"
	if r = e.run("companies", "--vat", vatAcme); r.code != 3 || strings.Contains(r.err, "pw-Zq81x") {
		t.Errorf("refused credentials: exit %d\n%s", r.code, r.err)
	}
}

func TestApplyProgressOnTerminal(t *testing.T) {
	e := newEnv(t, sandbox.Options{Latency: time.Millisecond})
	e.singleAccount()
	var rows []row
	for i := range 6 {
		rows = append(rows, row{name: fmt.Sprint("P", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, i+1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	f, _, errb := e.factory()
	f.IO.ErrTTY = true
	if code := Execute(context.Background(), f, []string{"apply", file}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{"applying plans", "6 / 6", "+ create plan \"P0\"", "6 created"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("terminal output lacks %q:\n%s", want, errb.String())
		}
	}
}

func TestApplyDateChange(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	rows := []row{{name: "Dated", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 2)}}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	if r := e.run("apply", file); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	old := e.srv.Sandbox.Plans("acme")[0].ID
	rows[0].end = "2027-08-31"
	writeCSV(t, file, rows)
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", file)
	if r.code != 1 || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "--recreate-on-date-change") {
		t.Fatalf("date change without the flag: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
	r = e.run("apply", file, "--recreate-on-date-change")
	plans := e.srv.Sandbox.Plans("acme")
	if r.code != 0 || len(plans) != 1 || plans[0].ID == old || plans[0].EndDate != "2027-08-31" || len(plans[0].Milestones) != 2 {
		t.Fatalf("recreate: exit %d, plans %+v\n%s", r.code, plans, r.err)
	}
	if c := storedTarget(t, plans[0], 1, pipeline.TargetAll); c[cAMT] != 2 {
		t.Errorf("recreated plan counters: %d", c[cAMT])
	}
	if !strings.Contains(r.err, fmt.Sprintf("old plan %d was deleted", old)) {
		t.Errorf("the recreate is not reported:\n%s", r.err)
	}
}

func TestApplyProgressLogsOffTerminal(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 20 * time.Millisecond
	e := newEnv(t, sandbox.Options{Latency: 10 * time.Millisecond})
	e.singleAccount()
	var rows []row
	for i := range 8 {
		rows = append(rows, row{name: fmt.Sprint("P", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	r := e.run("apply", file, "--concurrency", "1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	if !strings.Contains(r.err, `"msg":"progress"`) || !strings.Contains(r.err, `"plans":8`) || strings.Contains(r.err, "applying plans") {
		t.Errorf("want JSON progress lines and no bar off a terminal:\n%s", r.err)
	}
}

func TestApplyUnderFaultsNeverDuplicates(t *testing.T) {
	e := newEnv(t, sandbox.Options{Faults: "503=0.05,reset=0.03,lost=0.05,retry-after=0", Seed: 42})
	e.singleAccount()
	var rows []row
	for i := range 25 {
		for y := 1; y <= 2; y++ {
			rows = append(rows, row{name: fmt.Sprint("Faulty ", i), start: "2025-09-01", end: "2030-08-31", year: y, typ: pipeline.TargetAll,
				counters: counters(cAMT, i+y, cWFS, 1)})
		}
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	r := e.run("apply", file, "--no-recalc")
	if r.code == ExitInvalid || r.code == ExitFatal {
		t.Fatalf("exit %d under faults\n%s", r.code, r.err)
	}
	t.Logf("first apply under faults: exit %d\n%s", r.code, r.err)
	if err := e.srv.Sandbox.SetFaults(""); err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		// Whatever failed is finished by a run without faults.
		if r2 := e.run("apply", file, "--no-recalc"); r2.code != 0 {
			t.Fatalf("second apply exit %d\n%s", r2.code, r2.err)
		}
	}
	plans := e.srv.Sandbox.Plans("acme")
	if len(plans) != 25 {
		t.Fatalf("%d plans stored, want 25 (no duplicates)", len(plans))
	}
	for i := range 25 {
		p := planNamed(t, plans, fmt.Sprint("Faulty ", i))
		for y := 1; y <= 2; y++ {
			if c := storedTarget(t, p, y, pipeline.TargetAll); c[cAMT] != int64(i+y) || c[cWFS] != 1 {
				t.Errorf("plan %d year %d: %d, %d", i, y, c[cAMT], c[cWFS])
			}
		}
	}
	e.srv.Sandbox.ResetStats()
	if r := e.run("apply", file); r.code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Errorf("final apply: exit %d, %d writes", r.code, e.srv.Sandbox.Stats().Writes)
	}
}
