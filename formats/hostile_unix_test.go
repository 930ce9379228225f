//go:build unix

package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// hostilePeakRSS returns a finished process's peak resident memory.
func hostilePeakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) * 1024 // kilobytes
}

// TestSpecialFilesRefused: a named pipe, a character device and a socket
// are refused, named for what they are, without opening them (a FIFO
// would block for ever); a folder's special entries too.
func TestSpecialFilesRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	cases := map[string]string{fifo: "is a named pipe (FIFO), not a regular file"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases["/dev/zero"] = "" // kind from the name: unsupported
	}
	batch, err := ReadFiles([]string{fifo}, ReadOptions{})
	if err != nil || !strings.Contains(fmt.Sprint(batch.Problems), cases[fifo]) {
		t.Fatalf("fifo: %v %v", err, batch.Problems)
	}
	// A folder holding the FIFO.
	batch, err = ReadFiles([]string{dir}, ReadOptions{})
	if err != nil || !strings.Contains(fmt.Sprint(batch.Problems), "named pipe") {
		t.Fatalf("folder: %v %v", err, batch.Problems)
	}
	// A character device named .csv and .xlsx (through a symbolic link).
	if _, err := os.Stat("/dev/zero"); err == nil {
		for _, name := range []string{"zero.csv", "zero.xlsx"} {
			link := filepath.Join(t.TempDir(), name)
			if err := os.Symlink("/dev/zero", link); err != nil {
				t.Skip(err)
			}
			batch, err := ReadFiles([]string{link}, ReadOptions{})
			if err != nil || !strings.Contains(fmt.Sprint(batch.Problems), "is a character device, not a regular file") {
				t.Fatalf("%s: %v %v", name, err, batch.Problems)
			}
		}
	}
}
