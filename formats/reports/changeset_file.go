package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// ChangeSetSheet is the sign-off workbook's readable sheet; ChangeSetData
// is its hidden sheet holding the signed change set itself (column A,
// split into cells of at most changeSetChunk characters).
const (
	ChangeSetSheet = "Change set"
	ChangeSetData  = "eepipe-change-set"
	changeSetChunk = 30000
)

// maxChangeSetBytes bounds what is read of a change set file.
const maxChangeSetBytes = 256 << 20

// WriteChangeSet writes s to path: JSON for .json, a sign-off workbook for
// .xlsx (a readable sheet of every change with the service value it was
// computed against, and the signed change set on a hidden sheet).
func WriteChangeSet(path string, s *savedset.SavedChangeSet) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return savedset.EncodeSaved(w, s) })
	case ".xlsx":
		b, err := savedset.MarshalSaved(s)
		if err != nil {
			return err
		}
		return writeChangeSetXLSX(path, s, string(b))
	}
	return fmt.Errorf("%s: a change set is written as .json or .xlsx", path)
}

// ErrNotChangeSet is returned by ChangeSetFile.Read for a file that is not a
// saved change set (a workbook of plans).
var ErrNotChangeSet = savedset.ErrNotChangeSet

// ChangeSetFile is a change set file read again for each pass of its
// apply (pipeline.OpenSaved): Read is its pipeline.SavedReader. The first
// Read records the file's size and SHA-256, and checks a sign-off
// workbook's readable sheet; a later Read of a file of another size or
// SHA-256 fails with pipeline.ErrSetChanged (and each plan read again is
// compared with the one verified by pipeline.StreamedSet.Plans, before it
// is used).
type ChangeSetFile struct {
	Path string
	// Size and SHA256 are the file's, as the first Read found it.
	Size   int64
	SHA256 string
	read   bool
}

// Read reads the file once, handing each plan to fn as it is read. A JSON
// change set holds one plan at a time, and so does a sign-off workbook,
// its rows streamed; on the first Read the workbook's readable sheet is
// read beside it and checked plan by plan.
func (f *ChangeSetFile) Read(fn func(h *savedset.SavedChangeSet, i int, p *savedset.SavedPlan, digest [sha256.Size]byte) error) (*savedset.SavedChangeSet, error) {
	return scanChangeSet(f.Path, f, !f.read, fn)
}

// scanChangeSet reads the change set at path, handing each plan to fn.
// With f, it computes the file's size and SHA-256 as it reads: the first
// time they are recorded in f, later they must be f's. With sheet, a
// sign-off workbook's readable sheet is checked against its plans, one at
// a time as they are read.
func scanChangeSet(path string, f *ChangeSetFile, sheet bool, fn func(*savedset.SavedChangeSet, int, *savedset.SavedPlan, [sha256.Size]byte) error) (*savedset.SavedChangeSet, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		if strings.EqualFold(filepath.Ext(path), ".json") {
			what, _, _ := strings.Cut(xlsx.NotRegular(st.Mode()), ";")
			return nil, fmt.Errorf("%s: %s; a change set is a regular .json or .xlsx file", path, what)
		}
		return nil, ErrNotChangeSet
	}
	if st.Size() > maxChangeSetBytes {
		return nil, fmt.Errorf("%s: %d bytes is more than a change set may hold", path, st.Size())
	}
	changed := func(what string) error {
		return fmt.Errorf("%s: %w: %s; nothing more was sent. Check who is writing the file, then apply it again",
			path, savedset.ErrSetChanged, what)
	}
	if f != nil && f.read && st.Size() != f.Size {
		return nil, changed(fmt.Sprintf("it held %d bytes when it was verified and now holds %d", f.Size, st.Size()))
	}
	sum := sha256.New()
	var n int64
	done := func() error {
		if f == nil {
			return nil
		}
		got := hex.EncodeToString(sum.Sum(nil))
		if !f.read {
			f.read, f.Size, f.SHA256 = true, n, got
			return nil
		}
		if n != f.Size || got != f.SHA256 {
			return changed("its SHA-256 is not the one verified")
		}
		return nil
	}
	var s *savedset.SavedChangeSet
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		// Read as it is decoded, plan by plan: the file is not held.
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		cr := &countingReader{r: io.TeeReader(io.LimitReader(fh, maxChangeSetBytes+1), sum)}
		if s, err = savedset.ScanSaved(cr, fn); err != nil {
			return nil, savedErr(path, err)
		}
		if _, err := io.Copy(io.Discard, cr); err != nil {
			return nil, err
		}
		n = cr.n
	case ".xlsx":
		// Opened with the flat reader's zip scanner, within the change set
		// bound; its rows are streamed, so one plan is held at a time.
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		if st, err = fh.Stat(); err != nil {
			return nil, err
		}
		if f != nil {
			if n, err = io.Copy(sum, io.NewSectionReader(fh, 0, st.Size())); err != nil {
				return nil, err
			}
		}
		cb, err := openChangeSetBook(fh, st.Size())
		if err != nil {
			return nil, err
		}
		if s, err = cb.scan(sheet, fn); err != nil {
			return nil, savedErr(path, err)
		}
	default:
		return nil, ErrNotChangeSet
	}
	if err := done(); err != nil {
		return nil, err
	}
	return s, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// savedErr names the file in a change set's error, keeping ErrNotChangeSet
// as it is.
func savedErr(path string, err error) error {
	if errors.Is(err, savedset.ErrNotChangeSet) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
