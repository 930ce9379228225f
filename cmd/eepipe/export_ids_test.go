package main

import (
	"os"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

const exBluecraneReg = "2015/123456/07"

// twoAccountConfig writes a configuration of the sandbox's two accounts;
// extra is appended to each account's line (identifiers).
func (e *exEnv) twoAccountConfig(acmeExtra, blueExtra string) string {
	e.t.Helper()
	cfg := e.path("eepipe.yaml")
	err := os.WriteFile(cfg, []byte(`base_url: `+e.srv.URL+`
lookup:
  url: `+e.srv.URL+`
  username: consultant
  password_env: LOOKUP_PW
accounts:
  - {name: acme, company_id: 8ovHrj, api_key: mpk_sandbox_acme, api_secret_env: ACME_SECRET`+acmeExtra+`}
  - {name: bluecrane, company_id: Q2wE9z, api_key: mpk_sandbox_bluecrane, api_secret_env: BLUE_SECRET`+blueExtra+`}
`), 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	e.env = map[string]string{"LOOKUP_PW": "sandbox-lookup-pass", "ACME_SECRET": "sandbox-secret-acme", "BLUE_SECRET": "sandbox-secret-bluecrane"}
	return cfg
}

// TestExportConfiguredIdentifiersReimport exports every configured
// account without --company: the identifiers come from the configuration
// (completed through the lookup), so the file re-imports onto the same
// plans of the same accounts with no write, in every layout apply reads.
func TestExportConfiguredIdentifiersReimport(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(e.acme, "Acme", 2)
	e.createPlans(blue, "Blue Crane", 2)
	cfg := e.twoAccountConfig(`, vat_number: "`+exAcmeVAT+`"`, `, registration_number: "`+exBluecraneReg+`"`)
	acme, _ := e.serverState("acme")
	bc, _ := e.serverState("bluecrane")
	for k, v := range bc {
		acme[k] = v
	}
	// The identifiers are written by every layout's writer; the grid keeps
	// them in labelled cells, the flat table in columns.
	for _, name := range []string{"all.csv", "all.xlsx"} {
		t.Run(name, func(t *testing.T) {
			out := e.path(name)
			args := []string{"--config", cfg, "export", "-o", out, "--log-format", "json", "--no-charts"}
			code, stdout, stderr := e.run(args...)
			if code != 0 {
				t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
			}
			if strings.Contains(stderr, "no company identifiers") {
				t.Errorf("export warns of missing identifiers although the configuration gives them:\n%s", stderr)
			}
			batch, got := fileState(t, out)
			if d := diffStates(acme, got); d != "" {
				t.Fatalf("export differs from the two accounts:\n%s", d)
			}
			for _, p := range batch.Plans {
				want := pipeline.CompanyIDs{VAT: exAcmeVAT, Registration: exAcmeReg}
				if strings.HasPrefix(p.Name, "Blue") {
					want = pipeline.CompanyIDs{VAT: exBluecraneVAT, Registration: exBluecraneReg}
				}
				if p.Company != want {
					t.Errorf("plan %q has identifiers %+v, want %+v (configured, completed by the lookup)", p.Name, p.Company, want)
				}
			}
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("--config", cfg, "apply", out)
			if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 {
				t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
			}
			if code, stdout, _ := e.run("--config", cfg, "reconcile", out); code != 0 {
				t.Fatalf("reconcile of the export: exit %d\n%s", code, stdout)
			}
		})
	}

	// Identifiers of another company than the account's are a
	// configuration error, found before any file is written.
	cfg = e.twoAccountConfig(`, vat_number: "`+exBluecraneVAT+`"`, ``)
	code, _, stderr := e.run("--config", cfg, "export", "-o", e.path("wrong.csv"))
	if code != ExitInvalid || !strings.Contains(stderr, "Blue Crane Logistics") || !strings.Contains(stderr, "8ovHrj") {
		t.Fatalf("identifiers of another company: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(e.path("wrong.csv")); err == nil {
		t.Error("an export was written despite the configuration error")
	}
	// Identifiers the lookup does not know.
	cfg = e.twoAccountConfig(`, vat_number: "4999999999"`, ``)
	code, _, stderr = e.run("--config", cfg, "export", "-o", e.path("unknown.csv"))
	if code != ExitInvalid || !strings.Contains(stderr, "4999999999") {
		t.Fatalf("unknown identifiers: exit %d\n%s", code, stderr)
	}
	// Only one account with identifiers: the export still re-imports (the
	// plan id and the account route each plan), so nothing is warned of.
	cfg = e.twoAccountConfig(`, vat_number: "`+exAcmeVAT+`"`, ``)
	half := e.path("half.csv")
	code, _, stderr = e.run("--config", cfg, "export", "-o", half, "--log-format", "json")
	if code != 0 || strings.Contains(stderr, "no company identifiers") {
		t.Fatalf("half the identifiers: exit %d\n%s", code, stderr)
	}
	e.srv.Sandbox.ResetStats()
	if code, stdout, stderr := e.run("--config", cfg, "apply", half); code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply of half the identifiers: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestExportEnvironmentIdentifiers: the single environment account's
// EEPIPE_COMPANY_* variables fill the company columns; with the lookup
// they are completed, without it they are written as given.
func TestExportEnvironmentIdentifiers(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 1)
	e.env[envCompanyRegistration] = exAcmeReg
	out := e.path("env.csv")
	if code, _, stderr := e.run("export", "-o", out); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	batch, _ := fileState(t, out)
	if got := batch.Plans[0].Company; got != (pipeline.CompanyIDs{VAT: exAcmeVAT, Registration: exAcmeReg}) {
		t.Errorf("with the lookup: identifiers %+v", got)
	}
	e.srv.Sandbox.ResetStats()
	if code, _, stderr := e.run("apply", out); code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply of the export: exit %d, %d writes\n%s", code, e.srv.Sandbox.Stats().Writes, stderr)
	}

	// --company naming another company than the configured identifiers:
	// refused, rather than exporting this account's plans under another
	// company's identifiers.
	code, _, stderr := e.run("export", "-o", e.path("other.csv"), "--company", exBluecraneVAT)
	if code != ExitInvalid || !strings.Contains(stderr, "another company's") {
		t.Fatalf("--company of another company: exit %d\n%s", code, stderr)
	}
	// --company naming the configured company: its record's identifiers.
	if code, _, stderr := e.run("export", "-o", out, "--force", "--company", exAcmeVAT); code != 0 || strings.Contains(stderr, "cannot be checked") {
		t.Fatalf("--company of the configured company: exit %d\n%s", code, stderr)
	}

	delete(e.env, envLookupURL)
	delete(e.env, envLookupUsername)
	delete(e.env, envLookupPassword)
	if code, _, stderr := e.run("export", "-o", out, "--force"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	batch, _ = fileState(t, out)
	if got := batch.Plans[0].Company; got != (pipeline.CompanyIDs{Registration: exAcmeReg}) {
		t.Errorf("without the lookup: identifiers %+v, want the registration number as configured", got)
	}
}
