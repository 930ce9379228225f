package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

var updateMessages = flag.Bool("update-messages", false, "rewrite the golden message files under testdata/messages")

// checkMessageGolden compares got with testdata/messages/name.
func checkMessageGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "messages", name)
	if *updateMessages {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update-messages)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update-messages rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// TestCheckPartlyAssessedIsNotAPass: a plan whose final year has figures
// that cannot be assessed is not headlined as meeting its targets and the
// check exits 1; --report is repeatable.
func TestCheckPartlyAssessedIsNotAPass(t *testing.T) {
	e := newCkEnv(t)
	edu := ckCounters(t, map[string]int64{
		"african_male_top_managers": 3, "african_female_top_managers": 5, "foreign_male_top_managers": 2,
		"coloured_male_senior_managers": 7, "white_female_senior_managers": 10, "white_male_senior_managers": 3,
		"african_male_middle_managers": 10, "african_male_junior_managers": 10,
	})
	delete(edu, "number_of_white_male_middle_managers")
	delete(edu, "number_of_white_male_junior_managers")
	plans := []*pipeline.InputPlan{{Name: "Partly assessed", Sector: "Education", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(edu)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(ckCounters(t, map[string]int64{"african_female_junior_managers": 1}))},
		}}}
	file := e.path("partly.csv")
	if err := table.WriteFlatCSV(file, plans, nil); err != nil {
		t.Fatal(err)
	}
	reports := []string{e.path("a.json"), e.path("b.csv"), e.path("c.xlsx")}
	r := e.run("check", file, "--report", reports[0], "--report", reports[1], "--report", reports[2])
	if r.code != ExitDiff {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.out, r.err)
	}
	if strings.Contains(r.out, "MEETS") {
		t.Errorf("a partly assessed plan is headlined as meeting its targets:\n%s", r.out)
	}
	for _, p := range reports {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("--report %s: %v", filepath.Base(p), err)
		}
	}
	checkMessageGolden(t, "check-partly.stdout", r.out)
	if !strings.HasSuffix(r.err, "eepipe: no figure falls short, but 1 plan was not assessed in full (the reasons are above), so the targets are not shown to be met\n") {
		t.Errorf("stderr does not end with the outcome:\n%s", r.err)
	}

	if r := e.run("check", file, "--report", reports[0], "--report", reports[0]); r.code != ExitInvalid || !strings.Contains(r.err, "given twice") {
		t.Errorf("the same --report twice: exit %d %s", r.code, r.err)
	}
}

// TestUsageMessages: usage errors exit 2 and say what to do, with the
// command's usage line.
func TestUsageMessages(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.csv")
	if err := os.WriteFile(existing, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimSuffix(existing, ".csv")+".xlsx", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, args := range [][]string{
		{"apply"},
		{"diff"},
		{"validate"},
		{"reconcile"},
		{"recalc"},
		{"template"},
		{"template", "plan.xlsx"},
		{"template", "a", "b"},
		{"export"},
		{"companies"},
		{"check"},
		{"export", "plans.csv"},
		{"--log-format", "xml", "version"},
		{"apply", "--no-such-flag", "x.xlsx"},
		{"aply", "x.xlsx"},
		{"export", "--layout", "foo", "-o", "plans.csv"},
		{"export", "-o", "plans.csv", "--plan", "abc"},
		{"export", "-o", "plans.csv", "--plan", "99999999999999999999"},
		{"apply", "x.csv", "--max-duration", "5"},
		{"export", "-o", existing, "--base-url", "http://127.0.0.1:1"},
		{"template", "-o", strings.TrimSuffix(existing, ".csv") + ".xlsx"},
	} {
		var out, errb strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
		code := Execute(context.Background(), f, args)
		shown := strings.ReplaceAll(strings.Join(args, " "), dir+string(filepath.Separator), "")
		fmt.Fprintf(&b, "$ eepipe %s\n%s(exit %d)\n\n", shown, strings.ReplaceAll(errb.String(), dir+string(filepath.Separator), ""), code)
		if code != ExitInvalid {
			t.Errorf("eepipe %s: exit %d, want 2\n%s", shown, code, errb.String())
		}
	}
	checkMessageGolden(t, "usage.txt", b.String())
}

// TestCompletionAndHelp: enumerated flags complete their values, file
// flags their file kinds; help shows no raw backticks, no "(default [])"
// and no empty "(default )".
func TestCompletionAndHelp(t *testing.T) {
	run := func(args ...string) string {
		var out, errb strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
		if code := Execute(context.Background(), f, args); code != 0 {
			t.Fatalf("eepipe %v: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "template", "--layout", ""}, "grid\nflat\n:4\n"},
		{[]string{"__complete", "export", "--layout", ""}, "grid\nflat\nlong\n:4\n"},
		{[]string{"__complete", "apply", "--log-format", ""}, "auto\nconsole\njson\n:4\n"},
		{[]string{"__complete", "check", "--report", ""}, "xlsx\ncsv\njson\n:8\n"},
		{[]string{"__complete", "validate", ""}, "xlsx\ncsv\n:8\n"},
		{[]string{"__complete", "export", "--plan", ""}, ":4\n"},
	} {
		if got := run(tc.args...); !strings.HasPrefix(got, tc.want) {
			t.Errorf("eepipe %s: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out := run("completion", shell); len(out) < 100 {
			t.Errorf("completion %s: %q", shell, out)
		}
	}
	root := NewCmdRoot(&Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, Now: time.Now, Getenv: func(string) string { return "" }})
	for _, cmd := range append(root.Commands(), root) {
		help := run(append(strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "eepipe")), "--help")...)
		if strings.Contains(help, "`") || strings.Contains(help, "(default [])") || strings.Contains(help, "(default )") {
			t.Errorf("eepipe %s --help shows a backtick, (default []) or an empty (default ):\n%s", cmd.Name(), help)
		}
	}
}

// TestRecalcFindsTheOwner: with several accounts and no --account, recalc
// finds each scorecard's account itself (one GET per account).
func TestRecalcFindsTheOwner(t *testing.T) {
	e := newEnv(t, sandbox.Options{RecalcDuration: 50 * time.Millisecond})
	e.srv.Sandbox.ResetStats()
	r := e.run("--config", e.config, "recalc", "scorecard_acme_2025", "scorecard_bluecrane_2025")
	if r.code != 0 || strings.Count(r.out, "recalculation accepted") != 2 {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	st := e.srv.Sandbox.Stats()
	if n := st.ByRoute["GET /api/public/v1/scorecards/{id}"]; n != 4 {
		t.Errorf("%d scorecard GETs, want one per account and scorecard (4); routes %v", n, st.ByRoute)
	}
}

// TestMissingCompanyOnAGridSheet: with several accounts, a grid sheet
// without a company identifier is reported at its company block: the
// label cells and the value cells beside them (A6:B8 on a template sheet),
// saying which cells to fill in; never at the first grid's label, nor at
// the value cell B6 alone. The annotated copy fills each cell of the
// block and comments on its first (the labels), and the problems sheet
// names the block.
func TestMissingCompanyOnAGridSheet(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "plan.xlsx")
	plan := &pipeline.InputPlan{Name: "No company", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 2})}}}
	if err := writeGridXLSX(grid, []*pipeline.InputPlan{plan}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: http://127.0.0.1:1\nlookup:\n  url: http://127.0.0.1:1\n  username: u\n  password_env: P\naccounts:\n"+
		"  - name: acme\n    company_id: 8ovHrj\n    api_key: k1\n    api_secret_env: S1\n  - name: bluecrane\n    company_id: Q2wE9z\n    api_key: k2\n    api_secret_env: S2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	validate := func(args ...string) string {
		t.Helper()
		var out, errb strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
		if code := Execute(context.Background(), f, append([]string{"--config", cfg, "validate"}, args...)); code != ExitInvalid {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		return out.String()
	}
	annotated := filepath.Join(dir, "checked.xlsx")
	out := validate(grid, "--annotate", annotated)
	checkMessageGolden(t, "missing-company-grid.txt", strings.ReplaceAll(out, dir+string(filepath.Separator), ""))
	if !strings.Contains(out, "No company!A6:B8: error:") || !strings.Contains(out, "value cells B6:B8, beside the labels") || !strings.Contains(out, "in A6:A8") {
		t.Errorf("the missing company is not reported at the company block:\n%s", out)
	}

	f, err := excelize.OpenFile(annotated)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cache := map[int]string{}
	for _, ref := range []string{"A6", "B6", "A7", "B7", "A8", "B8"} {
		if got := cellFill(t, f, "No company", ref, cache); got != "FFC7CE" {
			t.Errorf("annotated %s has fill %q, want the error fill FFC7CE", ref, got)
		}
	}
	for _, ref := range []string{"A5", "B5", "A9", "B9", "C6"} {
		if got := cellFill(t, f, "No company", ref, cache); got == "FFC7CE" {
			t.Errorf("annotated %s is marked, outside the company block", ref)
		}
	}
	comments, err := f.GetComments("No company")
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || comments[0].Cell != "A6" {
		t.Errorf("want one comment, on A6 (the first cell of the block); got %+v", comments)
	}
	rows, err := f.GetRows(reports.AnnotateSheet)
	if err != nil || len(rows) < 2 || len(rows[1]) < 3 || rows[1][2] != "A6:B8" {
		t.Errorf("the problems sheet does not name the block A6:B8: %q (%v)", rows, err)
	}

	// Labels moved out of their block: the first label and the cell
	// beside it.
	x, err := excelize.OpenFile(grid)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.SetCellValue("No company", "A7", ""); err != nil {
		t.Fatal(err)
	}
	if err := x.SetCellValue("No company", "D7", "Company registration number"); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "moved.xlsx")
	if err := x.SaveAs(moved); err != nil {
		t.Fatal(err)
	}
	x.Close()
	out = validate(moved)
	if !strings.Contains(out, "No company!A6:B6: error:") || !strings.Contains(out, "fill in B6, beside the company label in A6") {
		t.Errorf("with the labels apart, want the first label and its value cell:\n%s", out)
	}
}

// TestRecalcOwnerWithARefusedKey: with several accounts and one key pair
// refused, recalc still finds and recalculates the scorecard another
// account sees; the one it cannot place fails naming the refused account
// (exit 1), and when every scorecard is the refused account's, exit 3.
func TestRecalcOwnerWithARefusedKey(t *testing.T) {
	e := newEnv(t, sandbox.Options{RecalcDuration: 50 * time.Millisecond})
	e.vars["CRANE_SECRET"] = "wrong-secret"
	r := e.run("--config", e.config, "recalc", "scorecard_acme_2025", "scorecard_bluecrane_2025")
	if r.code != ExitDiff {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.out, "scorecard_acme_2025: recalculation accepted") {
		t.Errorf("the other account's scorecard was not recalculated:\n%s", r.out)
	}
	want := "scorecard_bluecrane_2025: not recalculated: no account that answered sees scorecard_bluecrane_2025; account bluecrane: key mpk_san… refused: check its secret"
	if !strings.Contains(r.out, want) {
		t.Errorf("want %q in\n%s", want, r.out)
	}
	if strings.Contains(r.out+r.err, "wrong-secret") {
		t.Error("the secret is shown")
	}
	if r := e.run("--config", e.config, "recalc", "scorecard_bluecrane_2025"); r.code != ExitFatal || !strings.Contains(r.out, "account bluecrane: key mpk_san… refused") {
		t.Errorf("only the refused account's scorecard: exit %d, want 3\n%s%s", r.code, r.out, r.err)
	}
}

// TestCheckServerOneAccountRefused: check --server with one account's key
// pair refused names that account, checks the other account's plans and
// exits 1 (the targets are not shown to be met for every plan).
func TestCheckServerOneAccountRefused(t *testing.T) {
	e := newCkEnv(t)
	createAccountPlans(t, e.srv.URL)
	cfg := e.path("eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: "+e.srv.URL+"\naccounts:\n  - name: acme\n    company_id: 8ovHrj\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n"+
		"  - name: bluecrane\n    company_id: Q2wE9z\n    api_key: mpk_sandbox_bluecrane\n    api_secret_env: CRANE_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme", "CRANE_SECRET": "wrong-secret"}
	r := e.run("--config", cfg, "check", "--server")
	if r.code != ExitDiff {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "eepipe: account bluecrane: key mpk_san… refused: check its secret") || !strings.Contains(r.err, "its plans were not checked") {
		t.Errorf("the refused account is not named:\n%s", r.err)
	}
	if !strings.Contains(r.out, `"Acme plan"`) || strings.Contains(r.out, `"Crane plan"`) {
		t.Errorf("want acme's plan checked and bluecrane's not:\n%s", r.out)
	}
	if strings.Contains(r.out+r.err, "wrong-secret") {
		t.Error("the secret is shown")
	}
}

// TestValidateConfigProblemsLaidOut: validate --config reports a file's
// problems as every other command does: one per line, indented under the
// file, with "did you mean".
func TestValidateConfigProblemsLaidOut(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: http://127.0.0.1:1\naccounts:\n  - name: acme\n    api_kye: k\n    comapny_id: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
	code := Execute(context.Background(), f, []string{"--config", cfg, "validate", filepath.Join("..", "..", "testdata", "bad", "bad_sector.csv")})
	want := "eepipe: configuration CONFIG:\n" +
		"  line 4: unknown key \"api_kye\" in an account; did you mean \"api_key\"?\n" +
		"  line 5: unknown key \"comapny_id\" in an account; did you mean \"company_id\"?\n"
	if got := strings.ReplaceAll(errb.String(), cfg, "CONFIG"); code != ExitInvalid || got != want {
		t.Errorf("exit %d\n--- got\n%s--- want\n%s", code, got, want)
	}
}

// TestApplyOneErrorNamesValidateWithTheConfig: an input error found with
// the configuration (a plan no account can be told for) says "Fix it" and
// names the validate command with the same --config, which shows it.
func TestApplyOneErrorNamesValidateWithTheConfig(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "plan.xlsx")
	plan := &pipeline.InputPlan{Name: "No company", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 2})}}}
	if err := writeGridXLSX(grid, []*pipeline.InputPlan{plan}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: http://127.0.0.1:1\nlookup:\n  url: http://127.0.0.1:1\n  username: u\n  password_env: P\naccounts:\n"+
		"  - name: acme\n    company_id: 8ovHrj\n    api_key: k1\n    api_secret_env: S1\n  - name: bluecrane\n    company_id: Q2wE9z\n    api_key: k2\n    api_secret_env: S2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"P": "p", "S1": "s1", "S2": "s2"}
	var out, errb strings.Builder
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(k string) string { return env[k] }}
	code := Execute(context.Background(), f, []string{"--config", cfg, "apply", grid, "--no-state"})
	want := "eepipe: the input has 1 error; nothing was sent. Fix it (eepipe --config " + cfg + " validate shows it too) and run again\n"
	if code != ExitInvalid || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, want 2 and %q:\n%s", code, want, errb.String())
	}
}

// TestExportOneAccountRefused: export with one account's key pair refused
// writes the other account's plans, names the refused account (its plans
// are not in the file) and exits 1; with every key refused it exits 3
// and writes nothing.
func TestExportOneAccountRefused(t *testing.T) {
	e := newCkEnv(t)
	createAccountPlans(t, e.srv.URL)
	cfg := e.path("eepipe.yaml")
	if err := os.WriteFile(cfg, []byte("base_url: "+e.srv.URL+"\nlookup:\n  url: "+e.srv.URL+"\n  username: consultant\n  password_env: LOOKUP_PASS\naccounts:\n  - name: acme\n    company_id: 8ovHrj\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n"+
		"  - name: bluecrane\n    company_id: Q2wE9z\n    api_key: mpk_sandbox_bluecrane\n    api_secret_env: CRANE_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme", "CRANE_SECRET": "wrong-secret", "LOOKUP_PASS": "sandbox-lookup-pass"}
	out := e.path("plans.csv")
	r := e.run("--config", cfg, "export", "-o", out)
	if r.code != ExitDiff {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "eepipe: account bluecrane: key mpk_san… refused: check its secret") || !strings.Contains(r.err, "its plans are not in "+out) {
		t.Errorf("the refused account is not named:\n%s", r.err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Acme plan") || strings.Contains(string(b), "Crane plan") {
		t.Errorf("want acme's plan exported and bluecrane's not:\n%s", b)
	}
	if strings.Contains(r.out+r.err, "wrong-secret") {
		t.Error("the secret is shown")
	}
	// A workbook says so on its Overview, for whoever reads it later.
	xlsx := e.path("plans.xlsx")
	if r := e.run("--config", cfg, "export", "-o", xlsx); r.code != ExitDiff {
		t.Fatalf("xlsx: exit %d, want 1\n%s", r.code, r.err)
	}
	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := wb.GetCellValue(export.OverviewSheet, "A2")
	wb.Close()
	if !strings.Contains(a2, "NOT IN THIS FILE: the plans of account bluecrane (its key was refused).") {
		t.Errorf("the Overview does not say what is missing: %q", a2)
	}
	e.vars["ACME_SECRET"] = "wrong-too"
	none := e.path("none.csv")
	if r := e.run("--config", cfg, "export", "-o", none); r.code != ExitFatal {
		t.Errorf("every key refused: exit %d, want 3\n%s", r.code, r.err)
	}
	if _, err := os.Stat(none); err == nil {
		t.Error("a file was written although no account could be read")
	}
}

// createAccountPlans creates one plan on each of the sandbox's two example
// accounts ("Acme plan" on acme, "Crane plan" on bluecrane).
func createAccountPlans(t *testing.T, url string) {
	t.Helper()
	for _, a := range []struct{ key, secret, name string }{
		{"mpk_sandbox_acme", "sandbox-secret-acme", "Acme plan"},
		{"mpk_sandbox_bluecrane", "sandbox-secret-bluecrane", "Crane plan"},
	} {
		c, err := apiclient.New(apiclient.Options{BaseURL: url, APIKey: a.key, APISecret: a.secret})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreatePlan(context.Background(), apiclient.PlanCreate{Name: a.name, StartDate: "2025-09-01", EndDate: "2026-08-31", Sector: "Construction"}); err != nil {
			t.Fatal(err)
		}
	}
}
