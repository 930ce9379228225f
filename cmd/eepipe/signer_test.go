package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
	"github.com/xuri/excelize/v2"
)

// newSigner runs `eepipe signer new` for name and returns its key file
// and the public key it printed.
func newSigner(t *testing.T, e *env, name string) (keyFile, publicKey string) {
	t.Helper()
	keyFile = filepath.Join(e.dir, strings.ReplaceAll(strings.ToLower(name), " ", "-")+".key")
	r := e.run("signer", "new", "--name", name, "-o", keyFile)
	if r.code != 0 {
		t.Fatalf("signer new: exit %d\n%s", r.code, r.err)
	}
	return keyFile, strings.TrimSuffix(r.out, "\n")
}

// TestSignerNew: signer new writes a key file of its owner's alone and
// prints its public key as one line, as the configuration takes it; it
// never replaces a file, and refuses a name no report could show and a
// folder that does not exist (exit 2).
func TestSignerNew(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	key, pub := newSigner(t, e, "Thandi Nkosi")
	if strings.Contains(pub, "\n") || !strings.HasPrefix(pub, "ed25519:") {
		t.Fatalf("printed %q, want one line ed25519:...", pub)
	}
	if _, err := savedset.ParsePublicKey(pub); err != nil {
		t.Fatalf("the printed key does not read as a public_key: %v", err)
	}
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	b, _ := os.ReadFile(key)
	if k, err := savedset.ParseSignerKey(b); err != nil || k.PublicKey() != pub || k.Name != "Thandi Nkosi" {
		t.Fatalf("key file reads as %v, %v", k, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "Other", "-o", key}, "exists; a signing key is never replaced"},
		{[]string{"--name", "=HYPERLINK(1)", "-o", filepath.Join(e.dir, "f.key")}, "starts like a spreadsheet formula"},
		{[]string{"--name", "Esc\x1bape", "-o", filepath.Join(e.dir, "c.key")}, "control character"},
		{[]string{"--name", "Other", "-o", filepath.Join(e.dir, "missing", "o.key")}, "does not exist"},
		{[]string{"-o", filepath.Join(e.dir, "n.key")}, "--name NAME -o FILE"},
	} {
		r := e.run(append([]string{"signer", "new"}, tc.args...)...)
		if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) || r.out != "" {
			t.Errorf("%q: exit %d, want 2 saying %q\n%s%s", tc.args, r.code, tc.want, r.out, r.err)
		}
	}
	if after, _ := os.ReadFile(key); string(after) != string(b) {
		t.Error("the key file was replaced")
	}
	// A key file others may read is refused before anything is read.
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("diff", filepath.Join(e.dir, "none.csv"), "-o", filepath.Join(e.dir, "set.json"), "--sign-with", key)
	if r.code != ExitInvalid || !strings.Contains(r.err, "is readable by group and others (mode 0644)") {
		t.Errorf("a readable key file: exit %d\n%s", r.code, r.err)
	}
	// --sign-with signs off what -o writes.
	r = e.run("diff", filepath.Join(e.dir, "none.csv"), "--sign-with", key)
	if r.code != ExitInvalid || !strings.Contains(r.err, "give -o SET too") {
		t.Errorf("--sign-with without -o: exit %d\n%s", r.code, r.err)
	}
}

// signerConfig writes a configuration of acme with the trusted signers
// (name, public key pairs) and returns its path.
func signerConfig(t *testing.T, e *env, signers ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "base_url: %s\nlookup:\n  url: %s\n  username: consultant\n  password_env: LOOKUP_PASS\n", e.srv.URL, e.srv.URL)
	b.WriteString("accounts:\n  - name: acme\n    company_id: 8ovHrj\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n")
	if len(signers) > 0 {
		b.WriteString("signers:\n")
		for i := 0; i < len(signers); i += 2 {
			fmt.Fprintf(&b, "  - name: %s\n    public_key: %s\n", signers[i], signers[i+1])
		}
	}
	path := filepath.Join(e.dir, fmt.Sprintf("signers-%d.yaml", len(signers)))
	writeFile(t, path, b.String(), 0o600)
	return path
}

// TestSignedOffChangeSet, against SQLite and PostgreSQL stores: with
// signers configured, apply refuses (exit 2, nothing sent) a set no
// listed signer signed off, one edited to 999 and sealed again with the
// accounts' keys, one signed off by a key not listed, and one whose
// sign-off names another signer than the one listed for its key; the set
// a listed signer signed off applies, and the run, history, its reports
// and the run report name the signer from the sign-off.
func TestSignedOffChangeSet(t *testing.T) {
	for name, state := range map[string]func(t *testing.T, e *env) string{
		"sqlite":   func(t *testing.T, e *env) string { return filepath.Join(e.dir, "state.db") },
		"postgres": func(t *testing.T, e *env) string { return statestoretest.PostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sandbox.Options{})
			loc := state(t, e)
			thandiKey, thandi := newSigner(t, e, "Thandi Nkosi")
			malloryKey, _ := newSigner(t, e, "Mallory")
			cfg := signerConfig(t, e, "Thandi Nkosi", thandi)
			run := func(args ...string) result {
				t.Helper()
				return e.run(append([]string{"--config", cfg}, append(args, "--state", loc)...)...)
			}
			file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(2, 1))
			if r := run("apply", file, "--no-recalc"); r.code != 0 {
				t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
			}
			writeCSV(t, file, updateRows(2, 50))
			diffTo := func(set string, more ...string) {
				t.Helper()
				if r := run(append([]string{"diff", file, "-o", set}, more...)...); r.code != ExitDiff {
					t.Fatalf("diff -o %s: exit %d\n%s", set, r.code, r.err)
				}
			}
			signed := filepath.Join(e.dir, "signed.json")
			diffTo(signed, "--sign-with", thandiKey)
			// The sign-off workbook shows the signer from the sign-off, and
			// labels the row a name may be typed into as not verified.
			workbook := filepath.Join(e.dir, "signed.xlsx")
			diffTo(workbook, "--sign-with", thandiKey)
			wb, err := excelize.OpenFile(workbook)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := wb.GetRows(reports.ChangeSetSheet)
			wb.Close()
			var shown []string
			for _, r := range rows {
				if len(r) > 1 && strings.HasPrefix(r[0], "Signed off") {
					shown = append(shown, r[0]+"|"+r[1])
				}
			}
			if want := []string{"Signed off with key by|Thandi Nkosi", "Signed off by (typed: not verified)|"}; strings.Join(shown, ";") != strings.Join(want, ";") {
				t.Errorf("the sign-off workbook shows %q, want %q", shown, want)
			}
			unsigned := filepath.Join(e.dir, "unsigned.json")
			diffTo(unsigned)
			byMallory := filepath.Join(e.dir, "mallory.json")
			diffTo(byMallory, "--sign-with", malloryKey)
			// Thandi's key under another name in its file.
			kb, _ := os.ReadFile(thandiKey)
			renamedKey := filepath.Join(e.dir, "renamed.key")
			writeFile(t, renamedKey, strings.Replace(string(kb), `"Thandi Nkosi"`, `"T. Nkosi"`, 1), 0o600)
			renamed := filepath.Join(e.dir, "renamed.json")
			diffTo(renamed, "--sign-with", renamedKey)
			// Edited to 999 and sealed again with the accounts' keys (as
			// anyone running eepipe for acme can): Thandi's sign-off stays.
			edited, err := readSavedSet(signed)
			if err != nil {
				t.Fatal(err)
			}
			edited.Plans[0].Targets[0].Counters[0].New = 999
			if err := edited.Sign(savedset.SetKeys{"acme": savedset.NewSetKey("acme", "8ovHrj", "mpk_sandbox_acme", "sandbox-secret-acme")}); err != nil {
				t.Fatal(err)
			}
			resealed := filepath.Join(e.dir, "resealed.json")
			if err := reports.WriteChangeSet(resealed, edited); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct{ set, want string }{
				{unsigned, "signed off by none"},
				{resealed, "does not cover the content"},
				{byMallory, `signed off by "Mallory" with the key`},
				{renamed, `names the signer "T. Nkosi", but the configuration lists the key`},
			} {
				e.srv.Sandbox.ResetStats()
				r := run("apply", tc.set, "--no-recalc")
				if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) || !strings.Contains(r.err, "Nothing was sent") {
					t.Errorf("apply %s: exit %d, want 2 saying %q\n%s", filepath.Base(tc.set), r.code, tc.want, r.err)
				}
				if st := e.srv.Sandbox.Stats(); st.Writes != 0 {
					t.Errorf("apply %s: %d writes", filepath.Base(tc.set), st.Writes)
				}
			}
			// Without signers no sign-off is required: the seal proves only
			// that someone holding the accounts' keys wrote the set, so the
			// resealed set would apply, its sign-off said to be unchecked.
			plain := signerConfig(t, e)
			if r := e.run("--config", plain, "apply", resealed, "--no-recalc", "--state", loc, "--dry-run"); r.code != ExitDiff ||
				!strings.Contains(r.err, "sign-off is not checked, nor recorded") {
				t.Errorf("dry run of the resealed set without signers: exit %d\n%s", r.code, r.err)
			}

			report := filepath.Join(e.dir, "run.json")
			if r := run("apply", signed, "--no-recalc", "--report", report); r.code != 0 {
				t.Fatalf("apply of the signed set: exit %d\n%s", r.code, r.err)
			}
			var rep struct {
				SignedOffBy string `json:"signed_off_by"`
			}
			if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &rep) != nil || rep.SignedOffBy != "Thandi Nkosi" {
				t.Errorf("run report names %q (%v)", rep.SignedOffBy, err)
			}
			r := run("history")
			if r.code != 0 || !strings.Contains(r.out, "signed off by: Thandi Nkosi (the set's sign-off, verified") {
				t.Fatalf("history: exit %d\n%s\n%s", r.code, r.out, r.err)
			}
			if strings.Count(r.out, "signed off by:") != 1 {
				t.Errorf("history names a signer for other runs:\n%s", r.out)
			}
			csvReport := filepath.Join(e.dir, "history.csv")
			if r := run("history", "--report", csvReport); r.code != 0 {
				t.Fatalf("history --report: exit %d\n%s", r.code, r.err)
			}
			if b, _ := os.ReadFile(csvReport); !strings.Contains(string(b), ",signed_off_by,") || !strings.Contains(string(b), ",Thandi Nkosi,") {
				t.Errorf("history report:\n%.800s", b)
			}
		})
	}
}

// TestSignersConfigProblems: a signer without a name or with a key that is
// not a public key, a key listed twice and a private key in the file are
// configuration problems (exit 2), reported together.
func TestSignersConfigProblems(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	_, pub := newSigner(t, e, "Thandi Nkosi")
	cfg := signerConfig(t, e, "Thandi Nkosi", pub, "Thandi again", pub, "Bad key", "ssh-ed25519 AAAA", `""`, pub+"x")
	b, _ := os.ReadFile(cfg)
	writeFile(t, cfg, string(b)+"  - name: Leaky\n    private_key: abc\n", 0o600)
	r := e.run("--config", cfg, "diff", filepath.Join(e.dir, "none.csv"))
	for _, want := range []string{"signers[2]: public_key: the key of signers[1] (Thandi Nkosi) again", `signers[3]: public_key: "ssh-ed25519 AAAA" is not a signer's public key`,
		"signers[4]: name: the signer's name is empty", "signers[4]: public_key:", `unknown key "private_key" in a signer (a signer's private key never goes in the configuration`} {
		if r.code != ExitInvalid || !strings.Contains(r.err, want) {
			t.Errorf("exit %d, want 2 saying %q\n%s", r.code, want, r.err)
		}
	}
}
