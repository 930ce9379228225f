package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// ckEnv is a sandbox on 127.0.0.1 and the single-account (acme)
// environment that reaches it.
type ckEnv struct {
	t    *testing.T
	srv  *sandbox.Server
	dir  string
	vars map[string]string
}

func newCkEnv(t *testing.T) *ckEnv {
	t.Helper()
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &ckEnv{t: t, srv: srv, dir: t.TempDir(), vars: map[string]string{
		"EEPIPE_BASE_URL":   srv.URL,
		"EEPIPE_API_KEY":    "mpk_sandbox_acme",
		"EEPIPE_API_SECRET": "sandbox-secret-acme",
	}}
}

type ckResult struct {
	code     int
	out, err string
}

func (e *ckEnv) run(args ...string) ckResult {
	e.t.Helper()
	var out, errb bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb},
		Now:    time.Now,
		Getenv: testGetenv(e.dir, e.vars),
	}
	code := Execute(context.Background(), f, args)
	return ckResult{code, out.String(), errb.String()}
}

func (e *ckEnv) path(name string) string { return filepath.Join(e.dir, name) }

// ckCounters returns every default counter at zero, then set (keys without
// the number_of_ prefix).
func ckCounters(t *testing.T, set map[string]int64) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, n := range pipeline.DefaultCatalog().Names() {
		m[n] = 0
	}
	for k, v := range set {
		if !pipeline.DefaultCatalog().Has(pipeline.CounterPrefix + k) {
			t.Fatalf("unknown counter %s", k)
		}
		m[pipeline.CounterPrefix+k] = v
	}
	return m
}

// ckPlans are three plans: Manufacturing over two years, falling short at
// junior management (designated women) in the final year; Education over
// one year, meeting every target; and a plan with no sector.
func ckPlans(t *testing.T) []*pipeline.InputPlan {
	// Manufacturing: top 24.1/25.0, senior 32.4/33.6, middle 40.4/37.7, junior 49.8/39.6.
	base := map[string]int64{
		"african_male_top_managers": 1, "white_female_top_managers": 1, "white_male_top_managers": 2,
		"african_male_senior_managers": 4, "african_female_senior_managers": 4, "white_male_senior_managers": 2,
		"indian_male_middle_managers": 9, "coloured_female_middle_managers": 8, "foreign_male_middle_managers": 3,
		"african_male_junior_managers": 50, "white_female_junior_managers": 40, "white_male_junior_managers": 10,
		"african_male_semi_skilled_employees": 400, "african_female_unskilled_employees": 300,
	}
	y2 := map[string]int64{}
	for k, v := range base {
		y2[k] = v
	}
	y2["white_female_junior_managers"] = 38 // 38 of 98 = 38.8% < 39.6%: one woman short
	y2["white_male_junior_managers"] = 10
	dis := map[string]int64{"african_male_semi_skilled_employees": 30}
	edu := map[string]int64{
		"african_male_top_managers": 3, "african_female_top_managers": 5, "foreign_male_top_managers": 2,
		"coloured_male_senior_managers": 7, "white_female_senior_managers": 10, "white_male_senior_managers": 3,
		"african_male_middle_managers": 43, "indian_female_middle_managers": 47, "white_male_middle_managers": 10,
		"african_male_junior_managers": 50, "african_female_junior_managers": 47, "foreign_female_junior_managers": 3,
	}
	return []*pipeline.InputPlan{
		{Name: "Check Manufacturing", Sector: "Manufacturing", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2027-08-31"),
			Targets: []*pipeline.InputTarget{
				{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(ckCounters(t, base))},
				{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(ckCounters(t, dis))},
				{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(ckCounters(t, y2))},
				{YearNumber: 2, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(ckCounters(t, dis))},
			}},
		{Name: "Check Education", Sector: "Education", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
			Targets: []*pipeline.InputTarget{
				{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(ckCounters(t, edu))},
				{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(ckCounters(t, map[string]int64{"african_female_junior_managers": 10}))},
			}},
		{Name: "Check no sector", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
			Targets: []*pipeline.InputTarget{
				{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(ckCounters(t, edu))},
				{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(ckCounters(t, nil))},
			}},
	}
}

// ckReport reads a JSON sector report.
func ckReport(t *testing.T, path string) sector.SectorCheckReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		sector.SectorCheckReport
		Plans []json.RawMessage `json:"plans"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.SectorCheckReport
}

// ckOutcomes maps plan name to the plan's sector, status and years as JSON,
// the part of a check that must not depend on where the plan was read.
func ckOutcomes(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Plans []struct {
			Name   string          `json:"plan_name"`
			Sector string          `json:"sector"`
			Status string          `json:"status"`
			Reason string          `json:"reason"`
			Years  json.RawMessage `json:"years"`
		} `json:"plans"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range r.Plans {
		out[p.Name] = p.Sector + "|" + p.Status + "|" + p.Reason + "|" + string(p.Years)
	}
	return out
}

func TestCheckEndToEndFileAndServerAgree(t *testing.T) {
	e := newCkEnv(t)
	plans := ckPlans(t)
	workbook := e.path("plans.xlsx")
	if err := writeFlatWorkbook(workbook, plans); err != nil {
		t.Fatal(err)
	}
	if r := e.run("apply", workbook, "--no-recalc"); r.code != ExitOK {
		t.Fatalf("apply exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if got := len(e.srv.Sandbox.Plans("acme")); got != 3 {
		t.Fatalf("%d plans on the sandbox after apply", got)
	}

	fileReport, serverReport := e.path("file.json"), e.path("server.json")
	rf := e.run("check", workbook, "--report", fileReport)
	if rf.code != ExitDiff {
		t.Fatalf("check file exit %d\n%s\n%s", rf.code, rf.out, rf.err)
	}
	rs := e.run("check", "--server", "--report", serverReport)
	if rs.code != ExitDiff {
		t.Fatalf("check --server exit %d\n%s\n%s", rs.code, rs.out, rs.err)
	}
	fromFile, fromServer := ckOutcomes(t, fileReport), ckOutcomes(t, serverReport)
	if len(fromFile) != 3 || len(fromServer) != 3 {
		t.Fatalf("plans: file %d, server %d", len(fromFile), len(fromServer))
	}
	for name, want := range fromFile {
		if got := fromServer[name]; got != want {
			t.Errorf("plan %s differs:\nfile   %s\nserver %s", name, want, got)
		}
	}
	for _, want := range []string{
		`Plan "Check Manufacturing" | Manufacturing | 2025-09-01 to 2027-08-31`,
		"FALLS SHORT", "SHORT: female -0.8 pts, 1 person",
		"NOTHING COULD BE ASSESSED: the plan has no sector",
		"3 plans: 1 meets every final-year target, 1 falls short, 0 meet only the targets that could be assessed, 1 could not be assessed at all.",
		sector.SectorNotice, sector.EmbeddedSectorTargetsSource, "checked against the gazette",
	} {
		if !strings.Contains(rf.out, want) {
			t.Errorf("file output lacks %q", want)
		}
		if !strings.Contains(rs.out, want) && !strings.HasPrefix(want, "Plan ") {
			t.Errorf("server output lacks %q", want)
		}
	}
	if !strings.Contains(rs.out, "account default") {
		t.Errorf("server output does not name the account:\n%s", rs.out)
	}
	if t.Failed() {
		t.Logf("file:\n%s\nserver:\n%s", rf.out, rs.out)
	}

	// The same plans as a grid workbook give the same results.
	grid, gridReport := e.path("grid.xlsx"), e.path("grid.json")
	if err := writeGridXLSX(grid, plans); err != nil {
		t.Fatal(err)
	}
	if r := e.run("check", grid, "--report", gridReport); r.code != ExitDiff {
		t.Fatalf("check grid exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	fromGrid := ckOutcomes(t, gridReport)
	for name, want := range fromFile {
		if got := fromGrid[name]; got != want {
			t.Errorf("plan %s differs:\nflat %s\ngrid %s", name, want, got)
		}
	}

	// One plan by id: Education meets every target.
	var eduID int64
	for _, p := range e.srv.Sandbox.Plans("acme") {
		if p.Name == "Check Education" {
			eduID = p.ID
		}
	}
	r := e.run("check", "--server", "--plan", strconv.FormatInt(eduID, 10))
	if r.code != ExitOK || !strings.Contains(r.out, "MEETS every target") || strings.Contains(r.out, "Check Manufacturing") {
		t.Fatalf("check --plan exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	r = e.run("check", "--server", "--plan", "999999")
	if r.code != ExitInvalid || !strings.Contains(r.err, "plan 999999 is not on any configured account") {
		t.Fatalf("missing plan: exit %d\n%s", r.code, r.err)
	}
}

func TestCheckServerFillsBlanks(t *testing.T) {
	e := newCkEnv(t)
	plans := ckPlans(t)
	full := e.path("full.csv")
	if err := table.WriteFlatCSV(full, plans, nil); err != nil {
		t.Fatal(err)
	}
	if r := e.run("apply", full, "--no-recalc"); r.code != ExitOK {
		t.Fatalf("apply exit %d\n%s", r.code, r.err)
	}
	// The same plans with counters left blank: two at Manufacturing's top
	// management in the final year, and Education's whole disabled target.
	plans[0].Targets[2].Counters.Remove("number_of_white_female_top_managers")
	plans[0].Targets[2].Counters.Remove("number_of_foreign_male_top_managers")
	plans[1].Targets = plans[1].Targets[:1]
	blank := e.path("blank.csv")
	if err := table.WriteFlatCSV(blank, plans, nil); err != nil {
		t.Fatal(err)
	}
	fullReport, blankReport, filledReport := e.path("full.json"), e.path("blank.json"), e.path("filled.json")
	if r := e.run("check", full, "--report", fullReport); r.code != ExitDiff {
		t.Fatalf("exit %d %s", r.code, r.err)
	}
	r := e.run("check", blank, "--report", blankReport)
	if r.code != ExitDiff { // junior management is still short
		t.Fatalf("exit %d %s", r.code, r.err)
	}
	if !strings.Contains(r.out, "not assessable: counters left blank (unknown): number_of_white_female_top_managers, number_of_foreign_male_top_managers") {
		t.Fatalf("blank counters not reported:\n%s", r.out)
	}
	if !strings.Contains(r.out, "not assessable: no disabled_employees figures for this year") {
		t.Fatalf("missing disabled target not reported:\n%s", r.out)
	}
	r = e.run("check", blank, "--server", "--report", filledReport)
	if r.code != ExitDiff {
		t.Fatalf("exit %d %s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.out, "blank values filled from plan") {
		t.Fatalf("no fill note:\n%s", r.out)
	}
	want, got := ckOutcomes(t, fullReport), ckOutcomes(t, filledReport)
	for name := range want {
		if want[name] != got[name] {
			t.Errorf("plan %s: filled check differs from the full file:\nfull   %s\nfilled %s", name, want[name], got[name])
		}
	}
	if rep := ckReport(t, filledReport); rep.Notice != sector.SectorNotice {
		t.Fatalf("notice %q", rep.Notice)
	}
}

func TestCheckTargetsFile(t *testing.T) {
	e := newCkEnv(t)
	plans := ckPlans(t)
	file := e.path("plans.csv")
	if err := table.WriteFlatCSV(file, plans[:1], nil); err != nil {
		t.Fatal(err)
	}
	// Corrected figures under which junior management is met (38.8% >= 38%).
	targets := e.path("corrected.csv")
	if err := os.WriteFile(targets, []byte("sector;level;designated_male_pct;designated_female_pct\n"+
		"Manufacturing;top_managers;24,1;25\nManufacturing;senior_managers;32,4;33,6\n"+
		"Manufacturing;middle_managers;40,4;37,7\nManufacturing;junior_managers;49,8;38\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	xlsx := e.path("check.xlsx")
	r := e.run("check", file, "--targets", targets, "--report", xlsx)
	if r.code != ExitOK || !strings.Contains(r.out, "Figures from: "+targets+".") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	note, _ := f.GetCellValue(reports.SectorSheetName, "A2")
	if !strings.Contains(note, "corrected.csv") || !strings.Contains(note, sector.SectorNotice) {
		t.Fatalf("sheet note %q", note)
	}

	bad := e.path("bad.csv")
	if err := os.WriteFile(bad, []byte("sector,level,designated_male_pct,designated_female_pct\nManufactoring,top_managers,24.1,25\nManufacturing,board,1,2\nManufacturing,junior_managers,49.8x,38\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.run("check", file, "--targets", bad)
	if r.code != ExitInvalid {
		t.Fatalf("bad targets: exit %d", r.code)
	}
	for _, want := range []string{"bad.csv", "line 2, column 1 (sector)", `did you mean "Manufacturing"`, "line 3, column 2 (level)", "line 4, column 3 (designated_male_pct)"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("error lacks %q:\n%s", want, r.err)
		}
	}
	if r.out != "" {
		t.Errorf("output with bad targets: %s", r.out)
	}
}

func TestCheckUsageAndInvalidInput(t *testing.T) {
	e := newCkEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check"}, ExitInvalid, "--server"},
		{[]string{"check", "x.csv", "--plan", "3"}, ExitInvalid, "--plan"},
		{[]string{"check", "--plan", "3"}, ExitInvalid, "use it with --server"},
		{[]string{"check", "x.csv", "--report", "r.txt"}, ExitInvalid, ".xlsx, .csv or .json"},
		{[]string{"check", "--server", "--plan", "-4"}, ExitInvalid, "positive"},
	} {
		r := e.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.err, tc.code, tc.want)
		}
	}
	invalid := e.path("invalid.csv")
	if err := os.WriteFile(invalid, []byte("plan_name,start_date,end_date,sector,year_number,target_type,number_of_african_male_top_managers\n"+
		"P,2025-09-01,2026-08-31,Manufacturing,1,all_employees,-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("check", invalid); r.code != ExitInvalid || !strings.Contains(r.err, "invalid.csv") {
		t.Fatalf("invalid input: exit %d\n%s", r.code, r.err)
	}
	// No configuration for --server.
	e.vars = map[string]string{}
	if r := e.run("check", "--server"); r.code != ExitInvalid || !strings.Contains(r.err, "EEPIPE_BASE_URL") {
		t.Fatalf("no configuration: exit %d\n%s", r.code, r.err)
	}
}

func TestCheckServerUnreachableAndRefused(t *testing.T) {
	e := newCkEnv(t)
	e.vars["EEPIPE_API_SECRET"] = "wrong-secret"
	if r := e.run("check", "--server"); r.code != ExitFatal || strings.Contains(r.err, "wrong-secret") {
		t.Fatalf("refused key: exit %d\n%s", r.code, r.err)
	}
	url := e.srv.URL
	e.srv.Close()
	e.vars["EEPIPE_API_SECRET"] = "sandbox-secret-acme"
	e.vars["EEPIPE_BASE_URL"] = url
	if r := e.run("check", "--server"); r.code != ExitFatal {
		t.Fatalf("unreachable: exit %d\n%s", r.code, r.err)
	}
}

func TestCheckServerTwoAccounts(t *testing.T) {
	e := newCkEnv(t)
	// A plan on each account, created through the client.
	for _, a := range []struct{ key, secret, name string }{
		{"mpk_sandbox_acme", "sandbox-secret-acme", "Acme plan"},
		{"mpk_sandbox_bluecrane", "sandbox-secret-bluecrane", "Crane plan"},
	} {
		c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: a.key, APISecret: a.secret})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreatePlan(context.Background(), apiclient.PlanCreate{Name: a.name, StartDate: "2025-09-01", EndDate: "2026-08-31", Sector: "Construction"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := e.path("eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: "+e.srv.URL+"\naccounts:\n  - name: acme\n    company_id: 8ovHrj\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n"+
		"  - name: bluecrane\n    company_id: Q2wE9z\n    api_key: mpk_sandbox_bluecrane\n    api_secret_env: CRANE_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme", "CRANE_SECRET": "sandbox-secret-bluecrane"}
	r := e.run("--config", cfg, "check", "--server")
	// Plans created without a scorecard hold zeros: every level has no
	// employees, so nothing is assessable: that is not a pass (exit 1).
	if r.code != ExitDiff || !strings.Contains(r.err, "eepipe: nothing could be assessed: not one final-year figure of 2 plans could be measured") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	for _, want := range []string{`"Acme plan" | Construction`, "account acme", `"Crane plan" | Construction`, "account bluecrane", "no employees at this level",
		"NOTHING COULD BE ASSESSED", "2 plans: 0 meet every final-year target, 0 fall short, 0 meet only the targets that could be assessed, 2 could not be assessed at all."} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q\n%s", want, r.out)
		}
	}
}

// mustDate is pipeline.ParseDate for a literal known to be valid.
func mustDate(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// writeGridXLSX writes plans as the grid workbook eepipe export --layout
// grid writes: the Overview first, then one grid sheet per plan.
func writeGridXLSX(path string, plans []*pipeline.InputPlan) error {
	ps := make([]export.Plan, len(plans))
	for i, p := range plans {
		ps[i] = export.Plan{Plan: p}
	}
	wb, err := export.NewWorkbook(ps, export.Options{})
	if err != nil {
		return err
	}
	defer wb.Close()
	return xlsx.WriteWorkbook(path, wb)
}
