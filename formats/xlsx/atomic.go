package xlsx

import (
	"bufio"
	"errors"
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
	return writeAtomic(path, write, true)
}

// ErrExists is the error of WriteNewFileAtomic for a path that exists
// (errors.Is).
var ErrExists = os.ErrExist

// WriteNewFileAtomic is WriteFileAtomic for a file that must not exist:
// the file is linked to path whole, or not at all, and one that exists
// (even if made while it was written) is left as it is, the error
// wrapping ErrExists. The file is 0600.
func WriteNewFileAtomic(path string, write func(w io.Writer) error) error {
	return writeAtomic(path, write, false)
}

// writeAtomic is WriteFileAtomic, replacing a file at path with replace,
// else refusing to.
func writeAtomic(path string, write func(w io.Writer) error, replace bool) (err error) {
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
	if !replace {
		if err = os.Chmod(tmp.Name(), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		// A hard link fails when path exists: nothing is replaced.
		if err = os.Link(tmp.Name(), path); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s exists: %w", path, ErrExists)
			}
			return fmt.Errorf("write %s: %w", path, err)
		}
		os.Remove(tmp.Name())
		return nil
	}
	if err = os.Chmod(tmp.Name(), outputMode(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
