package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// sandboxSecretsDir is the folder beside a --write-config file that holds
// its secrets: sandbox.yaml keeps them in sandbox-secrets/.
func sandboxSecretsDir(configPath string) string {
	base := filepath.Base(configPath)
	return strings.TrimSuffix(base, filepath.Ext(base)) + "-secrets"
}

// unsafeFileChars are what an account's name loses (each becomes _) as a
// secret file's name: all but letters, digits, dots, dashes and underscores.
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// writeSandboxConfig writes, for sandbox --write-config, a configuration
// of every account of the fixtures (its company_id, and its company's VAT
// and registration numbers) and the first lookup user against the
// sandbox at url: the file names each secret by reference (api_secret_file,
// lookup.password_file), never inline, and the secrets go to files of
// their own in sandboxSecretsDir, all readable by their owner only
// (docs/sandbox.md). The secret files are written first: the configuration
// never names a file that is not there.
func writeSandboxConfig(path, url string, fx *sandbox.Fixtures) error {
	secretsDir := sandboxSecretsDir(path)
	dir := filepath.Join(filepath.Dir(path), secretsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	secret := func(name, value string) (string, error) {
		if err := writePrivateFile(filepath.Join(dir, name), value+"\n"); err != nil {
			return "", err
		}
		return secretsDir + "/" + name, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# eepipe configuration for the sandbox at %s (eepipe sandbox --write-config).\n", url)
	fmt.Fprintf(&b, "# Every account of its fixtures; the secrets are in %s/, never in this file.\n", secretsDir)
	fmt.Fprintf(&b, "base_url: %s\n", yamlScalar(url))
	if len(fx.LookupUsers) > 0 {
		u := fx.LookupUsers[0]
		ref, err := secret("lookup.password", u.Password)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "lookup:\n  url: %s\n  username: %s\n  password_file: %s\n", yamlScalar(url), yamlScalar(u.Username), yamlScalar(ref))
	}
	b.WriteString("accounts:\n")
	for i, a := range fx.Accounts {
		ref, err := secret(fmt.Sprintf("%d-%s.secret", i+1, unsafeFileChars.ReplaceAllString(a.Name, "_")), a.Secret)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  - name: %s\n", yamlScalar(a.Name))
		if a.CompanyID != "" {
			fmt.Fprintf(&b, "    company_id: %s\n", yamlScalar(a.CompanyID))
		}
		// The company's identifiers, so that an export fills its company
		// columns (the lookup is searched by them, never by id).
		for _, c := range fx.Companies {
			if c.ID != a.CompanyID || a.CompanyID == "" {
				continue
			}
			if c.VATNumber != "" {
				fmt.Fprintf(&b, "    vat_number: %s\n", yamlScalar(c.VATNumber))
			}
			if c.RegistrationNumber != nil && *c.RegistrationNumber != "" {
				fmt.Fprintf(&b, "    registration_number: %s\n", yamlScalar(*c.RegistrationNumber))
			}
		}
		fmt.Fprintf(&b, "    api_key: %s\n    api_secret_file: %s\n", yamlScalar(a.APIKey), yamlScalar(ref))
	}
	return writePrivateFile(path, b.String())
}

// yamlScalar is s as a YAML scalar, quoted when YAML would read it as
// something else.
func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(out), "\n")
}
