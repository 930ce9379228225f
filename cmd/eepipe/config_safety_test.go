package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestConfigFileSafetyWarnings: a configuration file that others can
// write, that another user owns, or that lies in a folder anyone can
// write, is warned about whatever secret mechanism it uses (here only
// environment variables); permissions are described as they are (a
// write-only mode is not "readable").
func TestConfigFileSafetyWarnings(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix permissions")
	}
	const body = "base_url: http://127.0.0.1:1\naccounts:\n  - {name: a, company_id: C, api_key: k, api_secret_env: S}\n"
	vars := map[string]string{"S": "secret-value"}
	load := func(t *testing.T, path string) []string {
		t.Helper()
		cfg, err := loadConfig(configFactory(path, vars), connFlags{}, configNeeds{Plans: true})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Warnings
	}
	tests := []struct {
		name     string
		fileMode os.FileMode
		dirMode  os.FileMode
		want     []string
		not      []string
	}{
		{"private", 0o600, 0o700, nil, []string{"configuration file"}},
		{"readable by others, no secret files", 0o644, 0o755, nil, []string{"configuration file"}},
		{"group-writable only", 0o620, 0o755, []string{"is writable by group (mode 0620)", "chmod go-w"}, []string{"readable"}},
		{"writable by others", 0o646, 0o755, []string{"is writable by others (mode 0646)", "point base_url or lookup.url at their own server"}, nil},
		{"writable by all", 0o666, 0o755, []string{"is writable by group and others (mode 0666)"}, nil},
		{"world-writable folder", 0o600, 0o777, []string{"is in a folder anyone can write"}, nil},
		{"world-writable sticky folder (/tmp)", 0o600, 0o777 | os.ModeSticky, nil, []string{"folder anyone can write"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "conf")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "eepipe.yaml")
			writeFile(t, path, body, tc.fileMode)
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(load(t, path), "\n")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("warnings lack %q:\n%s", w, text)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("warnings say %q:\n%s", w, text)
				}
			}
		})
	}
	t.Run("owned by another user", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "eepipe.yaml")
		writeFile(t, path, body, 0o644)
		if err := os.Chown(path, 4242, 4242); err != nil {
			t.Skipf("cannot give the file to another user here: %v", err)
		}
		if text := strings.Join(load(t, path), "\n"); !strings.Contains(text, "belongs to another user (uid 4242)") {
			t.Errorf("warnings:\n%s", text)
		}
	})
	t.Run("secret file modes", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "eepipe.yaml")
		writeFile(t, path, "base_url: http://127.0.0.1:1\naccounts:\n  - {name: a, company_id: C, api_key: k, api_secret_file: s.txt}\n", 0o600)
		for mode, want := range map[os.FileMode]string{0o620: "is writable by group (mode 0620)", 0o604: "is readable by others (mode 0604)",
			0o660: "is readable and writable by group (mode 0660)"} {
			writeFile(t, filepath.Join(dir, "s.txt"), "secret-value\n", mode)
			if text := strings.Join(load(t, path), "\n"); !strings.Contains(text, want) {
				t.Errorf("mode %04o: warnings lack %q:\n%s", mode, want, text)
			}
		}
	})
}

func TestClearTextRemote(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://compliance.example.co.za": true, "HTTP://10.0.0.5:8080": true, "https://compliance.example.co.za": false,
		"http://127.0.0.1:8080": false, "http://localhost:1": false, "http://[::1]:80": false, "http://127.8.9.1": false,
		"http://sandbox.localhost": false, "": false,
	} {
		if got := clearTextRemote(raw); got != want {
			t.Errorf("clearTextRemote(%q) = %v, want %v", raw, got, want)
		}
	}
}
