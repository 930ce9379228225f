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
// accounts, a plan without company columns is an error (format section 1:
// the company decides the account); with one account it is fine. No secret
// is read (the secret variables are unset).
func TestValidateSeveralAccountsNeedCompany(t *testing.T) {
	dir := t.TempDir()
	in := vtWrite(t, filepath.Join(dir, "plans.csv"),
		"plan_id,company_vat_number,year_number,target_type,number_of_african_male_top_managers\n7,,1,all_employees,5\n8,4012345678,1,all_employees,5\n")
	account := func(name string) string {
		return "  - name: " + name + "\n    company_id: X" + name + "\n    api_key: k_" + name + "\n    api_secret_env: SECRET_" + name + "\n"
	}
	two := vtWrite(t, filepath.Join(dir, "two.yaml"), "base_url: http://127.0.0.1:1\naccounts:\n"+account("a")+account("b"))
	one := vtWrite(t, filepath.Join(dir, "one.yaml"), "base_url: http://127.0.0.1:1\naccounts:\n"+account("a"))
	code, out, stderr := vtRun(t, "--config", two, "validate", in)
	if code != ExitInvalid || !strings.Contains(out, "line 2: error: plan 7 names no company") || strings.Contains(out, "plan 8") {
		t.Errorf("two accounts: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := vtRun(t, "--config", one, "validate", in); code != ExitOK {
		t.Errorf("one account: exit %d\n%s\n%s", code, out, stderr)
	}
}
