package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

func configFactory(path string, vars map[string]string) *Factory {
	var out, errb bytes.Buffer
	return &Factory{
		IO:         &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb},
		Now:        time.Now,
		Getenv:     func(k string) string { return vars[k] },
		ConfigPath: path,
	}
}

func TestLoadConfigExampleFile(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../testdata/eepipe.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "eepipe.yaml")
	writeFile(t, path, string(b), 0o600)
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "secrets", "bluecrane-api-secret"), "crane-secret\n", 0o600)
	cfg, err := loadConfig(configFactory(path, map[string]string{"ACME_API_SECRET": "acme-secret", "EEPIPE_LOOKUP_PASSWORD": "pw"}),
		connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "https://compliance.example.co.za" || cfg.Lookup.URL != "https://lookup.example.co.za" || cfg.Lookup.Password != "pw" {
		t.Errorf("config %+v", cfg)
	}
	if len(cfg.Accounts) != 2 || cfg.Accounts[0].APISecret != "acme-secret" || cfg.Accounts[1].APISecret != "crane-secret" ||
		cfg.Accounts[1].CompanyID != "Q2wE9z" || cfg.Accounts[0].Company.VAT != "4012345678" || cfg.Accounts[1].Company.Registration != "2015/123456/07" {
		t.Errorf("accounts %+v", cfg.Accounts)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	if s := cfg.String(); strings.Contains(s, "secret") && strings.Contains(s, "acme-secret") {
		t.Errorf("String shows a secret: %s", s)
	}

	// Group-readable config naming a secret file: a warning.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "secrets", "bluecrane-api-secret"), "crane-secret\n", 0o640)
	cfg, err = loadConfig(configFactory(path, map[string]string{"ACME_API_SECRET": "acme-secret", "EEPIPE_LOOKUP_PASSWORD": "pw"}),
		connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0], "readable by group and others") || !strings.Contains(cfg.Warnings[0], "chmod 600") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	writeFile(t, path, `base_url: http://file.invalid
lookup: {url: http://lookup-file.invalid, username: fileuser, password_env: PW}
accounts:
  - {name: only, company_id: C1, api_key: mpk_file, api_secret_env: SECRET}
`, 0o600)
	vars := map[string]string{"PW": "filepw", "SECRET": "filesecret"}
	cfg, err := loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "http://file.invalid" || cfg.Accounts[0].APIKey != "mpk_file" || cfg.Accounts[0].APISecret != "filesecret" || cfg.Lookup.Password != "filepw" {
		t.Errorf("file values: %+v", cfg)
	}
	vars[envBaseURL] = "http://env.invalid"
	vars[envAPIKey] = "mpk_env"
	vars[envAPISecret] = "envsecret"
	vars[envLookupUsername] = "envuser"
	vars[envLookupPassword] = "envpw"
	// The file's account names its company: another key pair in the
	// environment is refused, never silently used for that company.
	if _, err := loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true}); exitCodeOf(err) != ExitInvalid ||
		!strings.Contains(err.Error(), "belongs to company C1") {
		t.Fatalf("environment key over a file account with company_id: %v", err)
	}
	// The same key in both: the environment's secret is used.
	vars[envAPIKey] = "mpk_file"
	cfg, err = loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true})
	if err != nil || cfg.Accounts[0].APIKey != "mpk_file" || cfg.Accounts[0].APISecret != "envsecret" {
		t.Fatalf("same key in the environment: %v %+v", err, cfg)
	}
	// Without company_id the environment's key pair is used, and a
	// warning says which key.
	writeFile(t, path, `base_url: http://file.invalid
lookup: {url: http://lookup-file.invalid, username: fileuser, password_env: PW}
accounts:
  - {name: only, api_key: mpk_file_key, api_secret_env: SECRET}
`, 0o600)
	vars[envAPIKey] = "mpk_env_key"
	cfg, err = loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "http://env.invalid" || cfg.Accounts[0].APIKey != "mpk_env_key" || cfg.Accounts[0].APISecret != "envsecret" ||
		cfg.Lookup.Username != "envuser" || cfg.Lookup.Password != "envpw" {
		t.Errorf("environment over file: %+v", cfg)
	}
	if !slices.ContainsFunc(cfg.Warnings, func(w string) bool {
		return strings.Contains(w, "(key mpk_env_key) is used instead of the api_key mpk_file_key")
	}) {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	cfg, err = loadConfig(configFactory(path, vars), connFlags{BaseURL: "http://flag.invalid", LookupURL: "http://lflag.invalid"}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "http://flag.invalid" || cfg.Lookup.URL != "http://lflag.invalid" {
		t.Errorf("flags over environment: %+v", cfg)
	}

	// Company identifiers: the file's, replaced by the environment's for
	// the single account (like its key pair).
	writeFile(t, path, `base_url: http://file.invalid
accounts:
  - {name: only, company_id: C1, api_key: mpk_file, api_secret_env: SECRET, vat_number: 0412345678, registration_number: " 2009/012345/07 "}  # unquoted: the leading zero stays
`, 0o600)
	cfg, err = loadConfig(configFactory(path, map[string]string{"SECRET": "s"}), connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Accounts[0].Company; got != (pipeline.CompanyIDs{VAT: "0412345678", Registration: "2009/012345/07"}) {
		t.Errorf("file identifiers: %+v", got)
	}
	cfg, err = loadConfig(configFactory(path, map[string]string{"SECRET": "s", envCompanyIDNumber: "8001015009087"}), connFlags{}, configNeeds{Plans: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Accounts[0].Company; got != (pipeline.CompanyIDs{IDNumber: "8001015009087"}) {
		t.Errorf("environment identifiers over the file's: %+v", got)
	}

	// Environment only.
	cfg, err = loadConfig(configFactory("", map[string]string{envBaseURL: "http://e.invalid", envAPIKey: "k", envAPISecret: "s",
		envCompanyVAT: "4012345678", envCompanyRegistration: "2009/012345/07"}), connFlags{}, configNeeds{Plans: true})
	if err != nil || cfg.Accounts[0].Company != (pipeline.CompanyIDs{VAT: "4012345678", Registration: "2009/012345/07"}) {
		t.Errorf("environment identifiers: %+v %v", cfg, err)
	}
	cfg, err = loadConfig(configFactory("", map[string]string{envBaseURL: "http://e.invalid", envAPIKey: "k", envAPISecret: "s"}), connFlags{}, configNeeds{Plans: true})
	if err != nil || len(cfg.Accounts) != 1 || cfg.Accounts[0].Name != "default" || cfg.Lookup.Configured() {
		t.Errorf("environment only: %+v %v", cfg, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	const secret = "s3cr3t-value-Xy"
	tests := []struct {
		name  string
		yaml  string
		vars  map[string]string
		needs configNeeds
		has   []string
	}{
		{name: "unknown key", yaml: "base_url: http://x.invalid\nbase_ulr: y\n", has: []string{`unknown key "base_ulr" at the top level`}},
		{name: "secret in the file", yaml: "accounts:\n  - {name: a, api_key: k, api_secret: " + secret + "}\n",
			has: []string{`unknown key "api_secret" in an account`, "secrets never go in the configuration file"}},
		{name: "password in the file", yaml: "lookup: {url: http://l.invalid, username: u, password: " + secret + "}\n",
			has: []string{`unknown key "password" in lookup`}},
		{name: "secret instead of a variable name", yaml: "base_url: http://x.invalid\naccounts:\n  - {name: a, api_key: k, api_secret_env: \"" + secret + "!\"}\n",
			needs: configNeeds{Plans: true}, has: []string{"must be the name of an environment variable"}},
		{name: "unset secret variable", yaml: "base_url: http://x.invalid\naccounts:\n  - {name: a, api_key: k, api_secret_env: NOPE}\n",
			needs: configNeeds{Plans: true}, has: []string{"environment variable NOPE is not set"}},
		{name: "several accounts need company ids and the lookup", yaml: "base_url: http://x.invalid\naccounts:\n  - {name: a, api_key: k, api_secret_env: S}\n  - {name: b, api_key: k2, api_secret_env: S}\n",
			vars: map[string]string{"S": secret}, needs: configNeeds{Plans: true},
			has: []string{"account a has no company_id", "account b has no company_id", "company lookup must be too"}},
		{name: "env key with several accounts", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S}\n  - {name: b, company_id: B, api_key: k2, api_secret_env: S}\n",
			vars: map[string]string{"S": secret, envAPIKey: "k"}, needs: configNeeds{Plans: true}, has: []string{"names 2 accounts"}},
		{name: "duplicate names and companies", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S}\n  - {name: a, company_id: A, api_key: k2, api_secret_env: S}\n",
			vars: map[string]string{"S": secret}, needs: configNeeds{Plans: true}, has: []string{"two accounts are named a", "two accounts have company_id A"}},
		{name: "env company identifiers with several accounts", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S}\n  - {name: b, company_id: B, api_key: k2, api_secret_env: S}\n",
			vars: map[string]string{"S": secret, envCompanyVAT: "4012345678"}, needs: configNeeds{Plans: true}, has: []string{envCompanyVAT, "names 2 accounts", "vat_number"}},
		{name: "same identifier on two accounts", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S, vat_number: \"4012345678\"}\n  - {name: b, company_id: B, api_key: k2, api_secret_env: S, vat_number: \" 4012345678\"}\n",
			vars: map[string]string{"S": secret}, needs: configNeeds{Plans: true}, has: []string{"accounts a and b have the same vat_number 4012345678"}},
		{name: "one registration spelt two ways on two accounts", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S, registration_number: \"2009/012345/07\"}\n  - {name: b, company_id: B, api_key: k2, api_secret_env: S, registration_number: \"2009-012345-07\"}\n",
			vars: map[string]string{"S": secret}, needs: configNeeds{Plans: true}, has: []string{"accounts a and b have the same registration_number 2009-012345-07"}},
		{name: "account names differing in case", yaml: "base_url: http://x.invalid\nlookup: {url: http://l.invalid, username: u, password_env: S}\naccounts:\n  - {name: acme, company_id: A, api_key: k, api_secret_env: S}\n  - {name: ACME, company_id: B, api_key: k2, api_secret_env: S}\n",
			vars: map[string]string{"S": secret}, needs: configNeeds{Plans: true}, has: []string{"two accounts are named acme and ACME"}},
		{name: "misspelt identifier key", yaml: "accounts:\n  - {name: a, api_key: k, vat: \"4012345678\"}\n", has: []string{`unknown key "vat" in an account`}},
		{name: "nothing configured", yaml: "", needs: configNeeds{Plans: true}, has: []string{"no service URL", "no account"}},
		{name: "lookup without credentials", yaml: "lookup: {url: http://l.invalid}\n", needs: configNeeds{Lookup: true}, has: []string{"needs a username and a password"}},
		{name: "missing secret file", yaml: "base_url: http://x.invalid\naccounts:\n  - {name: a, api_key: k, api_secret_file: nope.txt}\n",
			needs: configNeeds{Plans: true}, has: []string{"nope.txt"}},
		{name: "bad yaml", yaml: "accounts: [\n", has: []string{"line"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			writeFile(t, path, tc.yaml, 0o600)
			vars := tc.vars
			if vars == nil {
				vars = map[string]string{}
			}
			_, err := loadConfig(configFactory(path, vars), connFlags{}, tc.needs)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitInvalid {
				t.Fatalf("err = %v, want an exit-2 error", err)
			}
			for _, h := range tc.has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("error lacks %q:\n%v", h, err)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}

// FuzzDecodeConfig checks that no configuration file, however broken,
// panics the decoder or makes an error repeat a secret-looking value.
func FuzzDecodeConfig(f *testing.F) {
	for _, seed := range []string{
		"",
		"base_url: http://x.invalid\n",
		"lookup: {url: http://l.invalid, username: u, password_env: PW}\naccounts:\n  - {name: a, company_id: A, api_key: k, api_secret_env: S}\n",
		"accounts:\n  - {name: a, api_key: k, api_secret: hunter2}\n",
		"accounts: [\n",
		"base_url: [1, 2]\n",
		"? a\n: b\n",
		"&a [*a]\n",
		"accounts: !!binary aGVsbG8=\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fc fileConfig
		err := decodeConfig(b, &fc)
		if err != nil && strings.Contains(err.Error(), "`") {
			t.Fatalf("error quotes a value of the file (it could be a secret): %v", err)
		}
	})
}

// decodeConfig decodes the YAML file, rejecting unknown keys with a
// message that names the key and, for secret-like keys, says where
// secrets go instead. See decodeConfigProblems.
func decodeConfig(b []byte, fc *fileConfig) error {
	problems, _ := decodeConfigProblems(b, fc)
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\n"))
}
