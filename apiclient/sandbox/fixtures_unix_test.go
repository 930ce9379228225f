//go:build unix

package sandbox

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadFixturesRefusesSpecialFiles: a named pipe given as the fixtures
// file is refused at once, never opened (opening it would block).
func TestLoadFixturesRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fixtures.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if _, err := LoadFixtures(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err %v, want a refusal naming the path as not a regular file", err)
	}
}
