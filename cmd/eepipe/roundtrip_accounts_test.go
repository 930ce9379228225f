package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// companyIDOnlyConfig is the shape `eepipe demo` writes: several accounts
// that name only their company_id (no company identifiers), and the lookup.
func (e *exEnv) companyIDOnlyConfig() string {
	e.t.Helper()
	cfg := e.path("ids-only.yaml")
	err := os.WriteFile(cfg, []byte(`base_url: `+e.srv.URL+`
lookup:
  url: `+e.srv.URL+`
  username: consultant
  password_env: LOOKUP_PW
accounts:
  - {name: acme, company_id: 8ovHrj, api_key: mpk_sandbox_acme, api_secret_env: ACME_SECRET}
  - {name: bluecrane, company_id: Q2wE9z, api_key: mpk_sandbox_bluecrane, api_secret_env: BLUE_SECRET}
`), 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	e.env = map[string]string{"LOOKUP_PW": "sandbox-lookup-pass", "ACME_SECRET": "sandbox-secret-acme", "BLUE_SECRET": "sandbox-secret-bluecrane"}
	return cfg
}

// levelsOnlyPlan creates a plan whose targets set the occupational levels
// only: the service keeps its totals at 0 beside non-zero levels.
func (e *exEnv) levelsOnlyPlan(c *apiclient.Client, name string) {
	e.t.Helper()
	ctx := context.Background()
	p, err := c.CreatePlan(ctx, apiclient.PlanCreate{Name: name, StartDate: "2026-09-01", EndDate: "2030-08-31"})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range p.Milestones {
		for _, t := range m.Targets {
			set := map[string]int64{}
			for k, v := range exCounters(int64(m.YearNumber), t.TargetType == pipeline.TargetDisabled) {
				if _, _, level, _ := pipeline.ParseCounterName(k); pipeline.Contains(pipeline.OccupationalLevels, level) {
					set[k] = v
				}
			}
			if _, err := c.UpdateTarget(ctx, p.ID, m.ID, t.ID, set); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// TestExportReimportsWithCompanyIDOnlyAccounts: with several
// accounts that name only company_id, every export layout re-imports with
// no extra configuration: each plan goes back to its account by its
// plan_id and the account the export writes, apply sends no write,
// validate prints no warning (totals the service holds as 0 beside
// non-zero levels travel blank) and reconcile is in sync.
func TestExportReimportsWithCompanyIDOnlyAccounts(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(e.acme, "Acme", 2)
	e.createPlans(blue, "Blue Crane", 1)
	e.levelsOnlyPlan(e.acme, "Acme levels only")
	e.levelsOnlyPlan(blue, "Blue Crane levels only")
	cfg := e.companyIDOnlyConfig()

	for _, tc := range []struct{ file, layout string }{
		{"grid.xlsx", "grid"}, {"flat.xlsx", "flat"}, {"flat.csv", "flat"}, {"long.csv", "long"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out := e.path(tc.file)
			code, stdout, stderr := e.run("--config", cfg, "export", "-o", out, "--layout", tc.layout, "--no-charts")
			if code != 0 {
				t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
			}
			if tc.layout != "long" {
				batch, _ := fileState(t, out)
				if len(batch.Plans) != 5 {
					t.Fatalf("%d plans in the export, want 5", len(batch.Plans))
				}
				for _, p := range batch.Plans {
					want := "acme"
					if strings.HasPrefix(p.Name, "Blue") {
						want = "bluecrane"
					}
					if p.Account != want || p.PlanID == 0 || !p.Company.IsZero() {
						t.Errorf("plan %q: account %q, plan id %d, company %v; want account %s, an id, no identifiers", p.Name, p.Account, p.PlanID, p.Company, want)
					}
				}
			}

			code, stdout, stderr = e.run("--config", cfg, "validate", out)
			if code != 0 || strings.Contains(stdout+stderr, ": warning:") || !strings.Contains(stdout, ": no problems") {
				t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
			}

			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("--config", cfg, "apply", out)
			if st := e.srv.Sandbox.Stats(); code != 0 || st.Writes != 0 {
				t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, st.Writes, stdout, stderr)
			}
			if warned := withoutNewStoreWarning(stderr); strings.Contains(warned, ": warning:") || strings.Contains(warned, `"level":"warn"`) {
				t.Errorf("apply warned:\n%s", stderr)
			}
			code, stdout, stderr = e.run("--config", cfg, "reconcile", out)
			if code != 0 || !strings.Contains(stdout, "in sync") {
				t.Fatalf("reconcile of the export: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if e.srv.Sandbox.Stats().Writes != 0 {
				t.Error("reconcile wrote")
			}
		})
	}

	// The account a file names is checked: an unknown one is an error
	// naming the configured accounts, before any request.
	bad := e.path("unknown-account.csv")
	if err := os.WriteFile(bad, []byte("account,plan_id,year_number,target_type,number_of_african_male_top_managers\nzed,1,1,all_employees,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Sandbox.ResetStats()
	code, _, stderr := e.run("--config", cfg, "apply", bad)
	if code != ExitInvalid || !strings.Contains(stderr, `names account "zed", which is not configured; the configured accounts are acme, bluecrane`) {
		t.Errorf("unknown account: exit %d\n%s", code, stderr)
	}
	if n := e.srv.Sandbox.Stats().Requests; n != 0 {
		t.Errorf("%d requests for a file naming an unknown account", n)
	}
}

// TestApplyRefusedKeyNamesItsAccount: a key refused for one
// account names the account and its key (never the secret), and the other
// account's plans are still applied.
func TestApplyRefusedKeyNamesItsAccount(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(e.acme, "Acme", 1)
	e.createPlans(blue, "Blue Crane", 1)
	cfg := e.companyIDOnlyConfig()
	out := e.path("all.csv")
	if code, _, stderr := e.run("--config", cfg, "export", "-o", out); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	// Edit one counter of every row, so that both accounts have writes to send.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	head := strings.Split(lines[0], ",")
	col := -1
	for i, h := range head {
		if h == "number_of_african_male_top_managers" {
			col = i
		}
	}
	for i := 1; i < len(lines); i++ {
		f := strings.Split(lines[i], ",")
		f[col] = "4321"
		lines[i] = strings.Join(f, ",")
	}
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.env["BLUE_SECRET"] = "wrong-secret-value"
	e.srv.Sandbox.ResetStats()
	report := e.path("run.csv")
	code, stdout, stderr := e.run("--config", cfg, "apply", out, "--report", report)
	if code != ExitDiff {
		t.Fatalf("exit %d, want 1 (bluecrane's plans failed, acme's applied)\n%s\n%s", code, stdout, stderr)
	}
	// The failed plans' rows name their account: routing knew it.
	rb, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rb), "\n") {
		if strings.Contains(line, ",failed,") && !strings.Contains(line, ",bluecrane,") {
			t.Errorf("a failed row without its account: %s", line)
		}
	}
	if !strings.Contains(stderr, "account bluecrane: key mpk_san… refused: check its secret") {
		t.Errorf("the refusal does not name the account and key:\n%s", stderr)
	}
	if strings.Contains(stderr, "wrong-secret-value") || strings.Contains(stdout, "wrong-secret-value") {
		t.Error("the secret is printed")
	}
	if e.srv.Sandbox.Stats().Writes == 0 {
		t.Error("acme's plans were not applied")
	}
}

// withoutNewStoreWarning is stderr without the warning that the state store is new
// (the first apply of a test creates it), which is no warning about the
// file.
func withoutNewStoreWarning(stderr string) string {
	var keep []string
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.Contains(l, "does not exist: this run creates it, with no history") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
