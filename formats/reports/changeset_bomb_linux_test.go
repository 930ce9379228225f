package reports

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
)

// procWrittenBytes returns the bytes this process has written (wchar of
// /proc/self/io).
func procWrittenBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no wchar in /proc/self/io")
	return 0
}

// TestReadChangeSetLeavesInputBombsAlone: apply with one .xlsx argument
// first asks ReadChangeSet whether it is a sign-off workbook. An input
// workbook (here a sheet of 64 MiB of whitespace) is not one, and must be
// answered without unpacking its sheets: excelize would write every sheet
// past 16 MiB to a temporary file (a 2 GiB bomb: 2 GiB of disk) before
// the bounded reader ever saw the file.
func TestReadChangeSetLeavesInputBombsAlone(t *testing.T) {
	dir := t.TempDir()
	small := xlsxtest.Parts(t, xlsxtest.SmallFlat(t, nil))
	path := xlsxtest.WriteHostile(t, dir, "bomb.xlsx", small, map[string]xlsxtest.Part{xlsxtest.SheetPart: {
		Prefix: []byte(`<worksheet><sheetData>`), Chunk: bytes.Repeat([]byte(" "), 1<<20), N: 64, Suffix: []byte(`</sheetData></worksheet>`)}})
	before := procWrittenBytes(t)
	_, err := readChangeSet(path)
	written := procWrittenBytes(t) - before
	if !errors.Is(err, errNotChangeSet) {
		t.Fatalf("ReadChangeSet(input bomb) = %v, want ErrNotChangeSet", err)
	}
	if written > 1<<20 {
		t.Errorf("ReadChangeSet wrote %d bytes while deciding that an input workbook is not a change set; want none (its sheets are never unpacked)", written)
	}
}

// TestReadChangeSetNotRegular: a change set path that is a named pipe is
// refused saying what it is, without blocking on it.
func TestReadChangeSetNotRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	_, err := readChangeSet(path)
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadChangeSet(FIFO) = %v, want an error saying it is a named pipe", err)
	}
}
