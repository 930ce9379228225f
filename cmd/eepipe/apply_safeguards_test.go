package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// TestCompaniesNeedsOnlyTheLookup: `eepipe companies` needs only the lookup settings: a configuration file
// whose accounts' secrets are not in the environment still works, and it
// says which configured account the company's plans go to.
func TestCompaniesNeedsOnlyTheLookup(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.vars = map[string]string{"LOOKUP_PASS": "sandbox-lookup-pass", envAPIKey: "mpk_stray"} // no account secrets
	r := e.run("--config", e.config, "companies", "--vat", vatCrane)
	if r.code != 0 || !strings.Contains(r.out, "Blue Crane Logistics") || !strings.Contains(r.err, "account bluecrane") {
		t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	r = e.run("--config", e.config, "companies", "--vat", vatKaroo)
	if r.code != 0 || !strings.Contains(r.err, "No configured account has company_id Mk3Pq7") {
		t.Errorf("company without an account: exit %d\n%s%s", r.code, r.out, r.err)
	}
	// One account from the environment: its company is not known.
	env := newEnv(t, sandbox.Options{})
	env.singleAccount()
	if r := env.run("companies", "--vat", vatAcme); r.code != 0 || !strings.Contains(r.err, "account (default) has no company_id") {
		t.Errorf("single account: exit %d\n%s", r.code, r.err)
	}
	// apply still needs them.
	if r = e.run("--config", e.config, "apply", filepath.Join(e.dir, "x.csv")); r.code != ExitInvalid || !strings.Contains(r.err, "ACME_SECRET is not set") {
		t.Errorf("apply without secrets: exit %d\n%s", r.code, r.err)
	}
}

// TestApplyStopsBeforeAnyRequest: input and report problems found before the first request: exit 2 and
// nothing sent, with messages that name what to fix.
func TestApplyStopsBeforeAnyRequest(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	noCompany := writeCSV(t, filepath.Join(e.dir, "nocompany.csv"), []row{{name: "X", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	withCompany := writeCSV(t, filepath.Join(e.dir, "company.csv"), []row{{vat: vatAcme, name: "X", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	for _, tc := range []struct {
		name string
		args []string
		has  string
	}{
		{"several accounts without company columns", []string{"--config", e.config, "apply", noCompany}, "several accounts configured (acme, bluecrane)"},
		{"diff too", []string{"--config", e.config, "diff", noCompany}, "several accounts configured (acme, bluecrane)"},
		{"report folder missing", []string{"--config", e.config, "apply", withCompany, "--report", filepath.Join(e.dir, "nope", "run.json")}, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.srv.Sandbox.ResetStats()
			r := e.run(tc.args...)
			if r.code != ExitInvalid || !strings.Contains(r.err, tc.has) {
				t.Errorf("exit %d, want 2 with %q\n%s", r.code, tc.has, r.err)
			}
			if n := e.srv.Sandbox.Stats().Requests; n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// TestSingleEnvAccountChecksCompanies: one account from the environment with the lookup configured: company
// columns are checked, and plans of several companies are not written with
// the one key pair (it belongs to one of them at most).
func TestSingleEnvAccountChecksCompanies(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "Acme", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: "4999999999", name: "Unknown", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	r := e.run("apply", file)
	if r.code != ExitDiff || !strings.Contains(r.err, "company not found") || len(e.srv.Sandbox.Plans("acme")) != 1 {
		t.Fatalf("exit %d, %d plans\n%s", r.code, len(e.srv.Sandbox.Plans("acme")), r.err)
	}
	two := writeCSV(t, filepath.Join(e.dir, "two.csv"), []row{
		{vat: vatAcme, name: "Acme 2", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatCrane, name: "Crane", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	e.srv.Sandbox.ResetStats()
	r = e.run("apply", two)
	if r.code != ExitDiff || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(r.err, "2 different companies") {
		t.Errorf("two companies, one account: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
	}
}

// TestLookupCredentialsWithoutURLWarn: lookup credentials exported without a lookup URL do not stop a run that
// does not need the lookup.
func TestLookupCredentialsWithoutURLWarn(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	delete(e.vars, envLookupURL)
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "P", start: "2025-09-01", end: "2030-08-31", year: 1,
		typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	r := e.run("apply", file)
	if r.code != 0 || !strings.Contains(r.err, "no lookup URL") {
		t.Errorf("exit %d\n%s", r.code, r.err)
	}
	if r = e.run("companies", "--vat", vatAcme); r.code != ExitInvalid || !strings.Contains(r.err, "no company lookup") {
		t.Errorf("companies without a lookup URL: exit %d\n%s", r.code, r.err)
	}
}

// TestVerboseRunsNeverShowSecrets: secrets never appear in anything a --debug run writes: stdout, stderr
// (debug logs), reports, errors of a refused key or lookup password.
func TestVerboseRunsNeverShowSecrets(t *testing.T) {
	fx := sandbox.DefaultFixtures()
	const acmeSecret, craneSecret, lookupPass = "Zk81-acme-SECRET-q", "Pw77-crane-SECRET-r", "Lp55-lookup-PASS-s"
	for i := range fx.Accounts {
		switch fx.Accounts[i].Name {
		case "acme":
			fx.Accounts[i].Secret = acmeSecret
		case "bluecrane":
			fx.Accounts[i].Secret = craneSecret
		}
	}
	fx.LookupUsers[0].Password = lookupPass
	e := newEnv(t, sandbox.Options{Fixtures: fx})
	e.vars = map[string]string{"ACME_SECRET": acmeSecret, "LOOKUP_PASS": lookupPass}
	secretFile := filepath.Join(e.dir, "crane.secret")
	writeFile(t, secretFile, craneSecret+"\n", 0o600)
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, e.config, strings.Replace(string(cfg), "api_secret_env: CRANE_SECRET", "api_secret_file: crane.secret", 1), 0o644)

	rows := baseRows(t)
	rows = append(rows, row{vat: "4999999999", name: "Unknown", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
		counters: counters(cAMT, 1)})
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	var all strings.Builder
	for _, args := range [][]string{
		{"--debug", "--config", e.config, "diff", file, "--report", filepath.Join(e.dir, "diff.json")},
		{"--debug", "--config", e.config, "apply", file, "--report", filepath.Join(e.dir, "run.json"), "--no-recalc"},
		{"--debug", "--log-format", "console", "--config", e.config, "apply", file, "--report", filepath.Join(e.dir, "run.csv"), "--no-recalc"},
		{"--debug", "--config", e.config, "recalc", "--account", "bluecrane", "scorecard_bluecrane_2025"},
		{"--debug", "--config", e.config, "companies", "--vat", vatAcme, "--json"},
		{"--debug", "--config", e.config, "keys", "status", "--json"},
		{"--debug", "--config", e.config, "keys", "rotate", "--account", "bluecrane", "--expires-in", "30d"},
		{"--debug", "--config", e.config, "keys", "status"},
	} {
		r := e.run(args...)
		if r.code == ExitFatal || r.code == ExitInvalid {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.err)
		}
		all.WriteString(r.out + r.err)
	}
	// Refused secrets: the wrong values must not be echoed either.
	e.vars["ACME_SECRET"] = "Wr0ng-acme-SECRET-x"
	e.vars["LOOKUP_PASS"] = "Wr0ng-lookup-PASS-y"
	for _, args := range [][]string{
		{"--debug", "--config", e.config, "apply", file, "--report", filepath.Join(e.dir, "fatal.json")},
		{"--debug", "--config", e.config, "companies", "--vat", vatAcme},
	} {
		r := e.run(args...)
		if r.code != ExitFatal {
			t.Errorf("%v: exit %d, want 3\n%s", args, r.code, r.err)
		}
		all.WriteString(r.out + r.err)
	}
	if !strings.Contains(all.String(), `"level":"debug"`) {
		t.Fatal("no debug logs were written")
	}
	for _, name := range []string{"diff.json", "run.json", "run.csv", "fatal.json"} {
		b, err := os.ReadFile(filepath.Join(e.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	// keys rotate put the new key's secret in crane.secret: it is never shown either.
	rotated, err := os.ReadFile(secretFile)
	if err != nil || strings.TrimSpace(string(rotated)) == craneSecret {
		t.Fatalf("keys rotate did not replace the secret file (%v)", err)
	}
	for _, s := range []string{acmeSecret, craneSecret, lookupPass, "Wr0ng-acme-SECRET-x", "Wr0ng-lookup-PASS-y", strings.TrimSpace(string(rotated))} {
		if strings.Contains(all.String(), s) {
			t.Errorf("output shows the secret %q", s)
		}
	}
}

// TestApplyInputWithoutPlansIsNothingToDo: valid input that describes no plan (a header-only file, an empty
// folder: warnings, not errors) is nothing to do: exit 0, no request, and
// the report is still written.
func TestApplyInputWithoutPlansIsNothingToDo(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	header := filepath.Join(e.dir, "header.csv")
	writeFile(t, header, "\ufeffplan_name;start_date;end_date;year_number;target_type\r\n", 0o644)
	empty := filepath.Join(e.dir, "drop")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(e.dir, "run.csv")
	for _, args := range [][]string{
		{"apply", header, "--report", report},
		{"apply", empty},
		{"diff", header, empty},
		{"apply", "--dry-run", empty},
	} {
		e.srv.Sandbox.ResetStats()
		r := e.run(args...)
		if r.code != 0 || !strings.Contains(r.err, "nothing to do") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.err)
		}
		if n := e.srv.Sandbox.Stats().Requests; n != 0 {
			t.Errorf("%v: %d requests", args, n)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil || !strings.HasPrefix(string(b), "file,location,") {
		t.Errorf("report %q %v", b, err)
	}
}

// TestApplyWarnsOfReportInInputFolder: a CSV or XLSX report written into an input folder would be read as a
// workbook by the next run over that folder: the run warns.
func TestApplyWarnsOfReportInInputFolder(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	in := filepath.Join(e.dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	writeCSV(t, filepath.Join(in, "p.csv"), []row{{name: "P", start: "2025-09-01", end: "2030-08-31", year: 1,
		typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	for _, tc := range []struct {
		report string
		warn   bool
	}{
		{filepath.Join(in, "run.csv"), true},
		{filepath.Join(in, "sub", "..", "run.xlsx"), true},
		{filepath.Join(in, "run.json"), false},
		{filepath.Join(e.dir, "run.csv"), false},
		{filepath.Join(e.dir, "in-run.csv"), false},
	} {
		if got := reportInInputFolder(tc.report, []string{in}) != ""; got != tc.warn {
			t.Errorf("%s: warn %v, want %v", tc.report, got, tc.warn)
		}
	}
	r := e.run("apply", in, "--report", filepath.Join(in, "run.csv"))
	if r.code != 0 || !strings.Contains(r.err, "will read it as a workbook") {
		t.Errorf("exit %d\n%s", r.code, r.err)
	}
}

// TestRecalcWaitZeroDoesNotWait: --recalc-wait 0 means "do not wait for a running recalculation", not
// the 75-minute default.
func TestRecalcWaitZeroDoesNotWait(t *testing.T) {
	e := newEnv(t, sandbox.Options{RecalcDuration: time.Hour})
	e.singleAccount()
	if r := e.run("recalc", "scorecard_acme_2025"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	done := make(chan result, 1)
	go func() { done <- e.run("recalc", "scorecard_acme_2025", "--recalc-wait", "0") }()
	select {
	case r := <-done:
		if r.code != ExitDiff || !strings.Contains(r.out, "still running after waiting 0s") {
			t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--recalc-wait 0 waited for the running recalculation")
	}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "P", start: "2025-09-01", end: "2030-08-31", scorecard: "scorecard_acme_2025",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	go func() { done <- e.run("apply", file, "--recalc-wait", "0") }()
	select {
	case r := <-done:
		if r.code != ExitDiff || !strings.Contains(r.err, "recalculation of scorecard_acme_2025 (account default) failed") {
			t.Errorf("apply: exit %d\n%s", r.code, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("apply --recalc-wait 0 waited for the running recalculation")
	}
}

// TestApplyWarnsOfSameNameOtherStart: a file that moves a plan's start date without giving its plan_id
// describes a new plan (the key is name + start date); apply says that
// the account already has a plan of that name.
func TestApplyWarnsOfSameNameOtherStart(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	rows := []row{{name: "Moved", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}}
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), rows)
	if r := e.run("apply", file); r.code != 0 || strings.Contains(r.err, "already has plan") {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	rows[0].start = "2026-09-01"
	writeCSV(t, file, rows)
	r := e.run("diff", file)
	if r.code != ExitDiff || !strings.Contains(r.err, `already has plan`) || !strings.Contains(r.err, "starting 2025-09-01") || !strings.Contains(r.err, "give its plan_id") {
		t.Errorf("exit %d\n%s", r.code, r.err)
	}
}
