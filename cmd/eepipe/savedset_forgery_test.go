package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// savedSetEnv applies two plans ("Pipelined 00" and "Pipelined 01", amt 1
// and 2) and writes a change set updating both (amt 50 and 51) and
// creating "Fresh": the set, the file it was computed from.
func savedSetEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	return e, writeSavedSet(e)
}

// writeSavedSet is savedSetEnv's set-up in e, failing e.t.
func writeSavedSet(e *env) string {
	t := e.t
	t.Helper()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), updateRows(2, 1))
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	rows := append(updateRows(2, 50), row{name: "Fresh", start: "2026-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
		counters: counters(cAMT, 7, cWFS, 3)})
	writeCSV(t, file, rows)
	set := filepath.Join(e.dir, "changes.json")
	if r := e.run("diff", file, "-o", set); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	return set
}

// TestForgedChangeSetsRefused: an edited change set, whatever was edited
// and however its signature was remade, and a set taken to another
// service or account, is refused with exit 2 and nothing is sent.
func TestForgedChangeSetsRefused(t *testing.T) {
	e, set := savedSetEnv(t)
	b, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	orig := string(b)
	var signed struct {
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal(b, &signed); err != nil || len(signed.Signature) != 64 {
		t.Fatalf("signature %q: %v", signed.Signature, err)
	}
	// resign replaces the signature by the plain SHA-256 of the content,
	// as anyone could compute it.
	resign := func(text string) string {
		sum := sha256.Sum256([]byte(strings.Replace(text, signed.Signature, "", 1)))
		return strings.Replace(text, signed.Signature, hex.EncodeToString(sum[:]), 1)
	}
	edit := func(old, new string) string {
		if !strings.Contains(orig, old) {
			t.Fatalf("the change set holds no %q:\n%s", old, orig)
		}
		return strings.Replace(orig, old, new, 1)
	}
	for _, tc := range []struct {
		name string
		text string
		vars map[string]string
		want string
	}{
		{"value changed", edit(`"new": 50`, `"new": 999`), nil, "signature does not match"},
		{"value changed, SHA-256 recomputed", resign(edit(`"new": 50`, `"new": 999`)), nil, "signature does not match"},
		{"int64 max, SHA-256 recomputed", resign(edit(`"new": 50`, `"new": 9223372036854775807`)), nil, "signature does not match"},
		{"plan renamed", resign(edit(`"name": "Fresh"`, `"name": "=HYPERLINK(\"http://evil\",\"x\")"`)), nil, "signature does not match"},
		{"signature stripped", strings.Replace(orig, signed.Signature, "", 1), nil, "no signature"},
		{"other service", orig, map[string]string{envBaseURL: strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1)}, "was computed against"},
		{"other account's key pair", orig, map[string]string{envAPIKey: "mpk_sandbox_bluecrane", envAPISecret: "sandbox-secret-bluecrane"}, "holds the key pair mpk_"},
		{"version 1", resign(edit(savedset.SavedSetSchema, "eepipe.changeset/v1")), nil, "plain SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(e.dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			writeFile(t, path, tc.text, 0o600)
			saved := map[string]string{}
			for k, v := range tc.vars {
				saved[k] = e.vars[k]
				e.vars[k] = v
			}
			defer func() {
				for k, v := range saved {
					e.vars[k] = v
				}
			}()
			e.srv.Sandbox.ResetStats()
			r := e.run("apply", path, "--no-recalc")
			if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) || !strings.Contains(strings.ToLower(r.err), "nothing was sent") {
				t.Fatalf("exit %d, want 2 saying %q\n%s", r.code, tc.want, r.err)
			}
			if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
				t.Fatalf("%d requests sent (%d writes)", st.Requests, st.Writes)
			}
			if strings.Contains(r.err, "sandbox-secret") {
				t.Fatalf("a secret is shown:\n%s", r.err)
			}
		})
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 2 {
		t.Fatalf("acme holds %d plans, want the 2 of the set-up", n)
	}
	// The set as signed applies.
	if r := e.run("apply", set, "--no-recalc"); r.code != 0 {
		t.Fatalf("the signed set: exit %d\n%s", r.code, r.err)
	}
}

// TestChangeSetSignedForOneAccountRefusedOnAnother: a configuration whose
// acme holds bluecrane's key pair (and company) cannot apply a set signed
// for acme: nothing is created on bluecrane's account.
func TestChangeSetSignedForOneAccountRefusedOnAnother(t *testing.T) {
	e, set := savedSetEnv(t)
	swapped := filepath.Join(e.dir, "swapped.yaml")
	writeFile(t, swapped, `base_url: `+e.srv.URL+`
accounts:
  - {name: default, company_id: Q2wE9z, api_key: mpk_sandbox_bluecrane, api_secret_env: CRANE_SECRET}
`, 0o600)
	delete(e.vars, envAPIKey)
	delete(e.vars, envAPISecret)
	e.srv.Sandbox.ResetStats()
	r := e.run("--config", swapped, "apply", set, "--no-recalc")
	if r.code != ExitInvalid || !strings.Contains(r.err, `signed for account default of company ""`) {
		t.Fatalf("exit %d, want 2 naming the company\n%s", r.code, r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 || len(e.srv.Sandbox.Plans("bluecrane")) != 0 {
		t.Fatalf("%d requests, %d bluecrane plans", st.Requests, len(e.srv.Sandbox.Plans("bluecrane")))
	}
}

// TestSignedChangeSetWithBadValuesRefused: a set re-signed by someone
// holding the key pair still has every value checked as a workbook cell:
// a content error exits 2 before any request.
func TestSignedChangeSetWithBadValuesRefused(t *testing.T) {
	e, set := savedSetEnv(t)
	keys := savedset.SetKeys{"default": savedset.NewSetKey("default", "", "mpk_sandbox_acme", "sandbox-secret-acme")}
	for _, tc := range []struct {
		name string
		edit func(s *savedset.SavedChangeSet)
		want string
	}{
		{"int64 max", func(s *savedset.SavedChangeSet) { s.Plans[0].Targets[0].Counters[0].New = 9223372036854775807 }, "too large for a counter"},
		{"formula name", func(s *savedset.SavedChangeSet) { s.Plans[2].Create.Name = `=HYPERLINK("http://evil","x")` }, "starts like a spreadsheet formula"},
		{"unknown counter", func(s *savedset.SavedChangeSet) { s.Plans[1].Targets[0].Counters[0].Counter = "number_of_x" }, "not in the counter catalog"},
		{"no create request", func(s *savedset.SavedChangeSet) { s.Plans[2].Create = nil }, "no create request"},
		{"field apply cannot write", func(s *savedset.SavedChangeSet) {
			s.Plans[0].Fields = append(s.Plans[0].Fields, savedset.SavedField{Field: "end_date", Expected: "2030-08-31", New: "2031-08-31"})
		}, "not one apply writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved, err := readSavedSet(set)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved.Plans) != 3 {
				t.Fatalf("%d plans in the set, want 3", len(saved.Plans))
			}
			tc.edit(saved)
			if err := saved.Sign(keys); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(e.dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := reports.WriteChangeSet(path, saved); err != nil {
				t.Fatal(err)
			}
			e.srv.Sandbox.ResetStats()
			r := e.run("apply", path, "--no-recalc")
			if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) {
				t.Fatalf("exit %d, want 2 saying %q\n%s", r.code, tc.want, r.err)
			}
			if st := e.srv.Sandbox.Stats(); st.Writes != 0 {
				t.Fatalf("%d writes sent", st.Writes)
			}
		})
	}
}

// TestChangeSetOtherServiceRefusalHidesPassword: a set refused because
// this run's base_url is another service names that address without the
// password it carries (which the client refuses later).
func TestChangeSetOtherServiceRefusalHidesPassword(t *testing.T) {
	e, set := savedSetEnv(t)
	e.vars[envBaseURL] = strings.Replace(e.srv.URL, "127.0.0.1", "ops:hunter2@localhost", 1)
	e.srv.Sandbox.ResetStats()
	r := e.run("apply", set, "--no-recalc")
	if r.code != ExitInvalid || !strings.Contains(r.err, "was computed against") {
		t.Fatalf("exit %d, want 2 naming the other service\n%s", r.code, r.err)
	}
	if strings.Contains(r.err, "hunter2") {
		t.Fatalf("the base URL's password is shown:\n%s", r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
		t.Fatalf("%d requests sent", st.Requests)
	}
}
