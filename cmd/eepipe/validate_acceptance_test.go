package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAnnotateUnreadableInput: a workbook that cannot be opened at
// all (truncated, not a zip, empty) is invalid input, exit 2 with its one
// clear error in the report, not a fatal exit 3 from the annotation step;
// no annotated copy is written.
func TestValidateAnnotateUnreadableInput(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty.xlsx":     nil,
		"text.xlsx":      []byte("plan_id,year_number\n7,1\n"),
		"truncated.xlsx": []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"),
	} {
		in := vtWrite(t, filepath.Join(dir, name), string(data))
		out := filepath.Join(dir, "annotated-"+name)
		code, stdout, stderr := vtRun(t, "validate", in, "--annotate", out)
		if code != ExitInvalid {
			t.Errorf("%s: exit %d, want 2\n%s\n%s", name, code, stdout, stderr)
		}
		if !strings.Contains(stdout, name+": 1 error") || !strings.Contains(stderr, "No annotated copy written") {
			t.Errorf("%s: stdout:\n%s\nstderr:\n%s", name, stdout, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: an annotated copy was written (%v)", name, err)
		}
	}
}

// TestValidateSeveralAccountsNeedCompany: with a --config that names several
// accounts, a plan without company columns, account and plan_id is an error
// (docs/formats.md: one of them decides the account), and so is an
// account column naming no configured account; a plan_id alone routes (to
// the account that holds it). With one account a plan without them is
// fine. No secret is read (the secret variables are unset).
func TestValidateSeveralAccountsNeedCompany(t *testing.T) {
	dir := t.TempDir()
	in := vtWrite(t, filepath.Join(dir, "plans.csv"),
		"account,plan_id,plan_name,start_date,end_date,company_vat_number,year_number,target_type,number_of_african_male_top_managers\n"+
			",7,,,,,1,all_employees,5\n"+
			",8,,,,4012345678,1,all_employees,5\n"+
			",,Nowhere,2025-09-01,2030-08-31,,1,all_employees,5\n"+
			"b,,By account,2025-09-01,2030-08-31,,1,all_employees,5\n")
	bad := vtWrite(t, filepath.Join(dir, "bad.csv"),
		"account,plan_id,year_number,target_type,number_of_african_male_top_managers\nzed,7,1,all_employees,5\n")
	plain := vtWrite(t, filepath.Join(dir, "plain.csv"),
		"plan_id,company_vat_number,year_number,target_type,number_of_african_male_top_managers\n7,,1,all_employees,5\n")
	account := func(name string) string {
		return "  - name: " + name + "\n    company_id: X" + name + "\n    api_key: k_" + name + "\n    api_secret_env: SECRET_" + name + "\n"
	}
	two := vtWrite(t, filepath.Join(dir, "two.yaml"), "base_url: http://127.0.0.1:1\naccounts:\n"+account("a")+account("b"))
	one := vtWrite(t, filepath.Join(dir, "one.yaml"), "base_url: http://127.0.0.1:1\naccounts:\n"+account("a"))
	code, out, stderr := vtRun(t, "--config", two, "validate", in)
	if code != ExitInvalid || !strings.Contains(out, "line 4: error: plan \"Nowhere\"") || strings.Contains(out, "plan 7") ||
		strings.Contains(out, "plan 8") || strings.Contains(out, "By account") {
		t.Errorf("two accounts: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = vtRun(t, "--config", two, "validate", bad)
	if code != ExitInvalid || !strings.Contains(out, `names account "zed", which is not configured; the configured accounts are a, b`) {
		t.Errorf("unknown account: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := vtRun(t, "--config", one, "validate", in); code != ExitInvalid || !strings.Contains(out, `names account "b"`) {
		t.Errorf("one account, a file naming another: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := vtRun(t, "--config", one, "validate", plain); code != ExitOK {
		t.Errorf("one account: exit %d\n%s\n%s", code, out, stderr)
	}
}
