package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateConfigGolden = flag.Bool("update-config", false, "rewrite cmd/eepipe/testdata/config/*.golden")

// TestConfigMessagesGolden: the messages of configuration files with
// mistakes, as the user reads them (golden files beside each .yaml): no
// YAML library prefix or Go type names, "did you mean" for misspelt keys,
// syntax and semantic problems together, the lookup password problem once,
// no secret repeated, and the warnings of a file that works.
func TestConfigMessagesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/config/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	vars := map[string]string{"LOOKUP_PASS": "lookup-pass-secret", "ACME_SECRET": "acme-secret-value", "CRANE_SECRET": "crane-secret-value"}
	for _, src := range files {
		name := strings.TrimSuffix(filepath.Base(src), ".yaml")
		t.Run(name, func(t *testing.T) {
			// A private copy: the mode and folder of the checkout must not
			// add warnings.
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "eepipe.yaml")
			writeFile(t, path, string(b), 0o600)
			cfg, err := loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true})
			var got strings.Builder
			if err != nil {
				got.WriteString("exit " + string(rune('0'+exitCodeOf(err))) + "\n" + err.Error() + "\n")
			} else {
				got.WriteString("ok\n")
				for _, w := range cfg.Warnings {
					got.WriteString("warning: " + w + "\n")
				}
			}
			text := strings.ReplaceAll(got.String(), path, "CONFIG")
			for _, secret := range vars {
				if strings.Contains(text, secret) {
					t.Fatalf("a secret is shown:\n%s", text)
				}
			}
			if strings.Contains(text, "hunter2") || strings.Contains(text, "yaml:") || strings.Contains(text, "main.") || strings.Contains(text, "unmarshal") {
				t.Errorf("library words or a value of the file in the message:\n%s", text)
			}
			golden := strings.TrimSuffix(src, ".yaml") + ".golden"
			if *updateConfigGolden {
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestConfigMessagesGolden -update-config)", err)
			}
			if text != string(want) {
				t.Errorf("messages differ from %s:\n--- got\n%s--- want\n%s", golden, text, want)
			}
		})
	}
}
