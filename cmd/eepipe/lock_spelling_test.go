package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// umoyaConfig writes a configuration whose account umoya (spelled as
// name) holds acme's key pair, beside bluecrane, reaching the sandbox at
// baseURL.
func umoyaConfig(t *testing.T, e *env, name, baseURL string) string {
	t.Helper()
	path := filepath.Join(e.dir, "umoya.yaml")
	writeFile(t, path, fmt.Sprintf(`base_url: %s
lookup:
  url: %s
  username: consultant
  password_env: LOOKUP_PASS
accounts:
  - name: %q
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme
    api_secret_env: ACME_SECRET
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: CRANE_SECRET
`, baseURL, e.srv.URL, name), 0o600)
	return path
}

// accountCSV writes one new plan whose account column says account.
func accountCSV(t *testing.T, path, account, plan string) string {
	t.Helper()
	writeFile(t, path, fmt.Sprintf("account,plan_name,start_date,end_date,year_number,target_type,%s\n%s,%s,2025-09-01,2030-08-31,1,%s,3\n",
		cAMT, account, plan, pipeline.TargetAll), 0o644)
	return path
}

// TestAccountLockHoldsUnderEverySpelling: while a run holds umoya's lock
// (taken under the configuration's spelling of the account and of the
// service), an apply whose file names the account UMOYA, " Umoya " or
// umoya, or whose configuration spells the account or the base URL
// otherwise, is refused (exit 3, holder named, outcome locked) before any
// write; once the lock is released the same apply writes its plan.
func TestAccountLockHoldsUnderEverySpelling(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	u, err := url.Parse(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	upperHost := "HTTP://" + strings.ToUpper(u.Host) + "/"
	held, err := filelock.Dir{Path: e.vars[envLockDir]}.Lock(context.Background(), pipeline.AccountLockKey("mpk_sandbox_acme"),
		pipeline.LockInfo{User: "ops", Command: "eepipe apply umoya.xlsx"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, fileAccount, configName, baseURL string }{
		{"file UMOYA", "UMOYA", "umoya", e.srv.URL},
		{"file spaced", " Umoya ", "umoya", e.srv.URL},
		{"config Umoya", "umoya", "Umoya", e.srv.URL},
		{"config UMOYA file umoya", "umoya", "UMOYA", e.srv.URL},
		{"service spelled in capitals with a slash", "UMOYA", "umoya", upperHost},
		{"service with a trailing slash", "umoya", "umoya", e.srv.URL + "/"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := umoyaConfig(t, e, c.configName, c.baseURL)
			file := accountCSV(t, filepath.Join(e.dir, fmt.Sprintf("p%d.csv", i)), c.fileAccount, fmt.Sprintf("Spelt %d", i))
			e.srv.Sandbox.ResetStats()
			r := e.run("apply", file, "--config", cfg, "--no-recalc", "--log-format", "json")
			if r.code != ExitFatal || !strings.Contains(r.err, "holds the lock of account "+c.configName) || !strings.Contains(r.err, "of user ops") || !strings.Contains(r.err, "(eepipe apply umoya.xlsx)") {
				t.Fatalf("apply with umoya locked: exit %d\n%s", r.code, r.err)
			}
			if s := summaryLine(t, r.err); s["outcome"] != "locked" {
				t.Errorf("summary %v, want outcome locked", s)
			}
			if w := e.srv.Sandbox.Stats().Writes; w != 0 {
				t.Fatalf("a refused apply wrote %d times", w)
			}
		})
	}
	held.Unlock()
	file := accountCSV(t, filepath.Join(e.dir, "free.csv"), "UMOYA", "Spelt free")
	if r := e.run("apply", file, "--config", umoyaConfig(t, e, "umoya", e.srv.URL), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply once the lock is free: exit %d\n%s", r.code, r.err)
	}
	found := false
	for _, p := range e.srv.Sandbox.Plans("acme") {
		found = found || p.Name == "Spelt free"
	}
	if !found {
		t.Fatalf("the plan of a file saying UMOYA was not written to umoya (acme's key pair)")
	}
}

// TestConfigRefusesAccountsOfOneName: two accounts whose names differ only
// in letter case or spaces are one account, and the configuration is
// refused.
func TestConfigRefusesAccountsOfOneName(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	cfg := filepath.Join(e.dir, "two.yaml")
	writeFile(t, cfg, fmt.Sprintf(`base_url: %s
lookup:
  url: %s
  username: consultant
  password_env: LOOKUP_PASS
accounts:
  - name: umoya
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme
    api_secret_env: ACME_SECRET
  - name: " UMOYA "
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: CRANE_SECRET
`, e.srv.URL, e.srv.URL), 0o600)
	file := accountCSV(t, filepath.Join(e.dir, "p.csv"), "umoya", "One name")
	r := e.run("apply", file, "--config", cfg, "--no-recalc")
	if r.code != ExitInvalid || !strings.Contains(r.err, "two accounts are named umoya and UMOYA") {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
}
