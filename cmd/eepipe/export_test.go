package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

func TestExportRoundTripEveryLayout(t *testing.T) {
	e := newExEnv(t, nil)
	created := e.createPlans(e.acme, "Acme", 3)
	want, _ := e.serverState("acme")
	tests := []struct {
		name, file string
		args       []string
		long       bool
	}{
		{"xlsx grid", "plans.xlsx", nil, false},
		{"xlsx flat", "flat.xlsx", []string{"--layout", "flat"}, false},
		{"csv flat", "plans.csv", nil, false},
		{"csv long", "long.csv", []string{"--layout", "long"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := e.path(tc.file)
			code, stdout, stderr := e.run(append([]string{"export", "-o", out, "--company", exAcmeVAT}, tc.args...)...)
			if code != 0 {
				t.Fatalf("export exit %d\nstdout:%s\nstderr:%s", code, stdout, stderr)
			}
			if strings.TrimSpace(stdout) != out {
				t.Errorf("stdout %q, want the path written", stdout)
			}
			if tc.long {
				// Checked independently of eepipe's reader too.
				if d := diffStates(want, longState(t, out)); d != "" {
					t.Fatalf("long export differs from the server:\n%s", d)
				}
			}
			batch, got := fileState(t, out)
			if d := diffStates(want, got); d != "" {
				t.Fatalf("export differs from the server:\n%s", d)
			}
			if len(batch.Plans) != len(created) {
				t.Fatalf("%d plans in the file, want %d", len(batch.Plans), len(created))
			}
			byID := map[int64]bool{}
			for _, p := range created {
				byID[p.ID] = true
			}
			for _, p := range batch.Plans {
				if !byID[p.PlanID] || p.Company.VAT != exAcmeVAT || p.Company.Registration != exAcmeReg {
					t.Errorf("plan %q: id %d, company %+v; want the plan's id and the company's identifiers", p.Name, p.PlanID, p.Company)
				}
			}
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("apply", out)
			if code != 0 {
				t.Fatalf("apply of the export: exit %d\nstdout:%s\nstderr:%s", code, stdout, stderr)
			}
			if w := e.srv.Sandbox.Stats().Writes; w != 0 {
				t.Fatalf("apply of an unchanged export sent %d writes", w)
			}
		})
	}
}

// longState reads a long CSV export into targets.
func longState(t *testing.T, path string) map[exTargetKey]map[string]int64 {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[exTargetKey]map[string]int64{}
	for _, r := range rows[1:] {
		id, _ := strconv.ParseInt(r[col["plan_id"]], 10, 64)
		year, _ := strconv.Atoi(r[col["year_number"]])
		v, err := strconv.ParseInt(r[col["value"]], 10, 64)
		if err != nil {
			t.Fatalf("value %q: %v", r[col["value"]], err)
		}
		k := exTargetKey{id, year, r[col["target_type"]]}
		if out[k] == nil {
			out[k] = map[string]int64{}
		}
		out[k][r[col["counter"]]] = v
	}
	return out
}

// TestExportEditOneCellPatchesThatCounter edits one counter of an export
// (grid and flat XLSX, flat and long CSV) and checks that apply sends exactly one write
// that changes exactly that counter.
func TestExportEditOneCellPatchesThatCounter(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 2)
	for _, tc := range []struct {
		file   string
		layout []string
	}{{"edit.xlsx", nil}, {"edit-flat.xlsx", []string{"--layout", "flat"}}, {"edit.csv", nil}, {"edit-long.csv", []string{"--layout", "long"}}} {
		t.Run(tc.file, func(t *testing.T) {
			out := e.path(tc.file)
			if code, _, stderr := e.run(append([]string{"export", "-o", out, "--no-charts"}, tc.layout...)...); code != 0 {
				t.Fatalf("export exit %d: %s", code, stderr)
			}
			before, _ := e.serverState("acme")
			batch, _ := fileState(t, out)
			p := batch.Plans[1]
			tg := p.Targets[3]
			name := pipeline.CounterName("indian", "female", "middle_managers")
			origin := tg.CellOf(name)
			year, _ := tg.Year(p.StartDate)
			key := exTargetKey{p.PlanID, year, tg.TargetType}
			newValue := tg.Counters.Map()[name] + 41
			setCell(t, out, origin, newValue)

			e.srv.Sandbox.ResetStats()
			code, stdout, stderr := e.run("apply", out, "--no-recalc")
			if code != 0 {
				t.Fatalf("apply exit %d\n%s\n%s", code, stdout, stderr)
			}
			st := e.srv.Sandbox.Stats()
			if st.Writes != 1 {
				t.Fatalf("apply sent %d writes, want 1 (%v)", st.Writes, st.ByRoute)
			}
			after, _ := e.serverState("acme")
			before[key] = cloneWith(before[key], name, newValue)
			if d := diffStates(before, after); d != "" {
				t.Fatalf("server state after apply, beyond the edited counter:\n%s", d)
			}
		})
	}
}

func cloneWith(m map[string]int64, k string, v int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for n, x := range m {
		out[n] = x
	}
	out[k] = v
	return out
}

// setCell writes a number into the cell an origin names: an XLSX sheet and
// cell, or a CSV line and column.
func setCell(t *testing.T, path string, o pipeline.Origin, v int64) {
	t.Helper()
	if o.Sheet != "" {
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.SetCellInt(o.Sheet, o.Cell, v); err != nil {
			t.Fatal(err)
		}
		if err := f.Save(); err != nil {
			t.Fatal(err)
		}
		return
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows[o.Row-1][o.Column-1] = strconv.FormatInt(v, 10)
	if err := xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.WriteAll(rows)
		return cw.Error()
	}); err != nil {
		t.Fatal(err)
	}
}

// TestExportSeveralAccounts exports every configured account's plans with
// their companies' identifiers; applying the export routes each plan back
// to its own account and sends nothing; reconcile of a plan only on the
// server of one company reports it.
func TestExportSeveralAccounts(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(e.acme, "Acme", 2)
	e.createPlans(blue, "Blue Crane", 2)
	cfg := e.path("eepipe.yaml")
	os.WriteFile(cfg, []byte(`base_url: `+e.srv.URL+`
lookup:
  url: `+e.srv.URL+`
  username: consultant
  password_env: LOOKUP_PW
accounts:
  - name: acme
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme
    api_secret_env: ACME_SECRET
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: BLUE_SECRET
`), 0o600)
	e.env = map[string]string{"LOOKUP_PW": "sandbox-lookup-pass", "ACME_SECRET": "sandbox-secret-acme", "BLUE_SECRET": "sandbox-secret-bluecrane"}
	out := e.path("all.csv")
	code, stdout, stderr := e.run("--config", cfg, "export", "-o", out, "--company", exAcmeVAT, "--company", exBluecraneVAT)
	if code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	acme, _ := e.serverState("acme")
	bc, _ := e.serverState("bluecrane")
	for k, v := range bc {
		acme[k] = v
	}
	batch, got := fileState(t, out)
	if d := diffStates(acme, got); d != "" {
		t.Fatalf("export differs from the two accounts:\n%s", d)
	}
	for _, p := range batch.Plans {
		want := exAcmeVAT
		if strings.HasPrefix(p.Name, "Blue") {
			want = exBluecraneVAT
		}
		if p.Company.VAT != want {
			t.Errorf("plan %q has VAT %q, want %q", p.Name, p.Company.VAT, want)
		}
	}
	e.srv.Sandbox.ResetStats()
	if code, stdout, stderr := e.run("--config", cfg, "apply", out); code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
	}

	// Without --company every account is exported; without identifiers
	// the plan id and the account route each plan back (nothing to warn of).
	code, _, stderr = e.run("--config", cfg, "export", "-o", e.path("noids.csv"), "--log-format", "json")
	if code != 0 || strings.Contains(stderr, "no company identifiers") {
		t.Fatalf("export without --company: exit %d\n%s", code, stderr)
	}
	if _, got := fileState(t, e.path("noids.csv")); len(got) != len(acme) {
		t.Fatalf("export without --company holds %d targets, want %d", len(got), len(acme))
	}

	// A company that no configured account owns is refused.
	code, _, stderr = e.run("--config", cfg, "export", "-o", e.path("karoo.csv"), "--company", "0412345678")
	if code != ExitInvalid || !strings.Contains(stderr, "no configured account belongs") || !strings.Contains(stderr, "Mk3Pq7") {
		t.Fatalf("--company without an account: exit %d\n%s", code, stderr)
	}

	// A plan created after the export is only on the server for acme.
	extra := e.createPlans(e.acme, "Late", 1)[0]
	code, stdout, _ = e.run("--config", cfg, "reconcile", out)
	if code != ExitDiff || !strings.Contains(stdout, "only on the service") || !strings.Contains(stdout, extra.Name) {
		t.Fatalf("reconcile: exit %d, want 1 and the plan only on the service:\n%s", code, stdout)
	}
}

func TestExportSelectsPlans(t *testing.T) {
	e := newExEnv(t, nil)
	plans := e.createPlans(e.acme, "Acme", 3)
	out := e.path("some.csv")
	code, _, stderr := e.run("export", "-o", out, "--plan", fmt.Sprint(plans[2].ID), "--plan", fmt.Sprint(plans[0].ID))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	batch, _ := fileState(t, out)
	var ids []int64
	for _, p := range batch.Plans {
		ids = append(ids, p.PlanID)
	}
	if len(ids) != 2 || !slices.Contains(ids, plans[0].ID) || !slices.Contains(ids, plans[2].ID) {
		t.Fatalf("exported plans %v, want %d and %d", ids, plans[0].ID, plans[2].ID)
	}
	// An unknown id: the others are written, exit 1, the id is named.
	code, _, stderr = e.run("export", "-o", out, "--force", "--plan", fmt.Sprint(plans[1].ID), "--plan", "99999")
	if code != ExitDiff || !strings.Contains(stderr, "99999") || !strings.Contains(stderr, "the other plans were exported") {
		t.Fatalf("unknown --plan: exit %d\n%s", code, stderr)
	}
	if batch, _ := fileState(t, out); len(batch.Plans) != 1 {
		t.Fatalf("%d plans written, want 1", len(batch.Plans))
	}
	// Only unknown ids: no claim about "the other plans", since there are none.
	code, _, stderr = e.run("export", "-o", e.path("none.csv"), "--plan", "99999")
	if code != ExitDiff || !strings.Contains(stderr, "no plan was exported") || strings.Contains(stderr, "other plans") {
		t.Fatalf("only an unknown --plan: exit %d\n%s", code, stderr)
	}
	// A company no account owns is refused before anything is written.
	// The single account from the environment names no company: the
	// company is taken on trust, with a warning.
	code, _, stderr = e.run("export", "-o", e.path("x.csv"), "--company", exBluecraneVAT)
	if code != 0 || !strings.Contains(stderr, "cannot be checked") {
		t.Fatalf("--company with an account without company_id: exit %d\n%s", code, stderr)
	}
	code, _, stderr = e.run("export", "-o", e.path("y.csv"), "--company", "4999999999")
	if code != ExitInvalid || !strings.Contains(stderr, "knows no company") {
		t.Fatalf("unknown --company: exit %d\n%s", code, stderr)
	}
}
