package xlsx

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// outputMode is the mode of a file written to path: 0600, as the state
// store's, since what eepipe writes holds client data (plans, counters,
// who ran what); a file it replaces that its owner restricted further
// (0400) stays so, and one that was readable by others is not any more.
func outputMode(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if m := fi.Mode().Perm() & 0o600; m&0o400 != 0 {
			return m
		}
	}
	return 0o600
}

// WriteFileAtomic writes a file through write to a temporary name in the
// same folder and renames it to path only when write and the flush succeed,
// so that a crash or an error never leaves a partial file under the final
// name. On failure the temporary file is removed. The file is its owner's
// alone (outputMode: 0600).
//
// Temporary files of the same output that a killed run left behind are
// removed first (RemoveOrphanTemps says which).
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	_, _ = RemoveOrphanTemps(dir, filepath.Base(path), time.Now())
	tmp, err := os.CreateTemp(dir, atomicTempPattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err = write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), outputMode(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
