//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConfigSpecialFiles: a configuration file or a secret file that is a
// named pipe or a device is refused saying what it is (exit 2), never
// opened: opening a FIFO blocks the run forever (even SIGTERM left it
// hanging), reading /dev/zero never ends.
func TestConfigSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "eepipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	secretFIFO := filepath.Join(dir, "secret.txt")
	if err := syscall.Mkfifo(secretFIFO, 0o600); err != nil {
		t.Skip(err)
	}
	withSecretFile := filepath.Join(dir, "with-secret.yaml")
	writeFile(t, withSecretFile, "base_url: http://127.0.0.1:1\naccounts:\n  - {name: a, company_id: C, api_key: k, api_secret_file: secret.txt}\n", 0o600)
	withDevice := filepath.Join(dir, "with-device.yaml")
	writeFile(t, withDevice, "base_url: http://127.0.0.1:1\naccounts:\n  - {name: a, company_id: C, api_key: k, api_secret_file: /dev/zero}\n", 0o600)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"config FIFO", fifo, "is a named pipe (FIFO), not a regular file"},
		{"config device", "/dev/zero", "is a character device, not a regular file"},
		{"secret FIFO", withSecretFile, "is a named pipe (FIFO), not a regular file"},
		{"secret device", withDevice, "is a character device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(configFactory(tc.path, nil), connFlags{}, configNeeds{Plans: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != ExitInvalid {
				t.Errorf("loadConfig(%s) = %v (exit %d), want exit 2 saying %q", tc.path, err, exitCode(err), tc.want)
			}
		})
	}
	t.Run("validate's account names", func(t *testing.T) {
		_, err := validateAccounts(configFactory(fifo, nil))
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("validateAccounts(FIFO) = %v, want an error saying it is a named pipe", err)
		}
	})
}
