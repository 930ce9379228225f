package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// TestStaleEnvironmentKeyNeverWritesAFileAccount: a one-account file names
// acme's company_id while the shell still holds bluecrane's key pair.
// Nothing is checked against one company and written with the other's
// key: exit 2 before any request, and the message says which keys.
func TestStaleEnvironmentKeyNeverWritesAFileAccount(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	config := filepath.Join(e.dir, "one.yaml")
	writeFile(t, config, fmt.Sprintf(`base_url: %s
lookup: {url: %s, username: consultant, password_env: LOOKUP_PASS}
accounts:
  - {name: acme, company_id: 8ovHrj, api_key: mpk_sandbox_acme, api_secret_env: ACME_SECRET}
`, e.srv.URL, e.srv.URL), 0o600)
	e.vars[envAPIKey] = "mpk_sandbox_bluecrane"
	e.vars[envAPISecret] = "sandbox-secret-bluecrane"
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{vat: vatAcme, name: "Acme Only", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	r := e.run("--config", config, "apply", file)
	if r.code != ExitInvalid {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.err)
	}
	for _, want := range []string{"EEPIPE_API_KEY holds the key mpk_…ecrane", "account acme belongs to company 8ovHrj with the key mpk_…x_acme"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("message lacks %q:\n%s", want, r.err)
		}
	}
	if strings.Contains(r.err, "sandbox-secret") {
		t.Errorf("a secret is shown:\n%s", r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
		t.Fatalf("%d requests sent", st.Requests)
	}
	if n := len(e.srv.Sandbox.Plans("bluecrane")) + len(e.srv.Sandbox.Plans("acme")); n != 0 {
		t.Fatalf("%d plans written", n)
	}
}

// TestEnvironmentAccountWarnsPerCompany: an account from the environment
// has no company_id; each company whose plans it writes gets a warning
// (the key pair cannot be checked against it), and so do plans without
// company columns.
func TestEnvironmentAccountWarnsPerCompany(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "Acme A", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatAcme, name: "Acme B", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{name: "Nobody's", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	r := e.run("apply", file, "--no-recalc", "--log-format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	for _, want := range []string{"2 plans of Acme", "(id 8ovHrj", "are written with the key pair of account default, whose company is not known",
		"1 plan without company columns is written with the key pair of account default"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("warnings lack %q:\n%s", want, r.err)
		}
	}
	s := summaryLine(t, r.err)
	if w, _ := s["warnings"].([]any); len(w) != 2 {
		t.Errorf("summary warnings %v, want the 2", s["warnings"])
	}
}
