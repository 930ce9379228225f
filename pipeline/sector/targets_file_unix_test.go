//go:build unix

package sector

import (
	"github.com/eepipe/eepipe/pipeline"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSmallFilesRegularAndBounded: a catalog or targets file that is a
// named pipe or a device is refused at once; one past 16 MiB fails.
func TestSmallFilesRegularAndBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "catalog.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := pipeline.LoadCatalog(fifo); err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
		t.Errorf("FIFO catalog: %v", err)
	}
	if _, err := LoadSectorTargets("/dev/zero"); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/zero targets: %v", err)
	}
	big := filepath.Join(dir, "targets.csv")
	if err := os.WriteFile(big, []byte("sector,level,male,female\n"+strings.Repeat(" ", pipeline.MaxSmallFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSectorTargets(big); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("big targets: %v", err)
	}
}
