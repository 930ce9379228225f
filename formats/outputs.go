package formats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// StampLayout is the UTC time stamp of scheduled output names, to the
// minute: plans-2026-11-22T0300Z.xlsx.
const StampLayout = "2006-01-02T1504Z"

// StampedName inserts the UTC time t into base before its extension:
// StampedName("plans.xlsx", t) is "plans-2026-11-22T0300Z.xlsx".
func StampedName(base string, t time.Time) string {
	ext := stampExt(base)
	stem := strings.TrimSuffix(base, ext)
	return stem + "-" + t.UTC().Format(StampLayout) + ext
}

// stampExt returns the extension of a name, treating ".tar.gz"-style double
// extensions as one only for .gz.
func stampExt(base string) string {
	ext := filepath.Ext(base)
	if ext == ".gz" {
		ext = filepath.Ext(strings.TrimSuffix(base, ext)) + ext
	}
	return ext
}

// ParseStampedName reports whether name is base stamped by StampedName, and
// the time of the stamp.
func ParseStampedName(base, name string) (time.Time, bool) {
	ext := stampExt(base)
	stem := strings.TrimSuffix(base, ext)
	rest, ok := strings.CutPrefix(name, stem+"-")
	if !ok {
		return time.Time{}, false
	}
	stamp, ok := strings.CutSuffix(rest, ext)
	if !ok || len(stamp) != len(StampLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(StampLayout, stamp)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// PruneStamped removes the oldest files in dir stamped from base (see
// StampedName) so that at most keep remain, and returns the paths removed.
// keep <= 0 removes nothing. Files of other names are never touched; the
// age is the stamp in the name, not the modification time.
func PruneStamped(dir, base string, keep int) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("prune old exports in %s: %w", dir, err)
	}
	type stamped struct {
		name string
		at   time.Time
	}
	var found []stamped
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if at, ok := ParseStampedName(base, e.Name()); ok {
			found = append(found, stamped{e.Name(), at})
		}
	}
	if len(found) <= keep {
		return nil, nil
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].at.Equal(found[j].at) {
			return found[i].at.After(found[j].at)
		}
		return found[i].name > found[j].name
	})
	var removed []string
	var errs []error
	for _, s := range found[keep:] {
		p := filepath.Join(dir, s.name)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("prune %s: %w", p, err))
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
