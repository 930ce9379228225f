package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// LockInfo is what a lock file records about the run holding it.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Command string    `json:"command,omitempty"`
}

// String describes the holder for messages.
func (i LockInfo) String() string {
	s := fmt.Sprintf("process %d on host %s", i.PID, i.Host)
	if i.Command != "" {
		s += fmt.Sprintf(" (%s)", i.Command)
	}
	if !i.Since.IsZero() {
		s += " since " + i.Since.UTC().Format(time.RFC3339)
	}
	return s
}

// LockHeldError says that another live run holds the lock.
type LockHeldError struct {
	Path   string
	Holder LockInfo // zero when the lock file could not be read
}

func (e *LockHeldError) Error() string {
	if e.Holder.PID == 0 {
		return fmt.Sprintf("another eepipe run holds the lock %s; wait for it to finish, or delete the file if no eepipe run is active", e.Path)
	}
	return fmt.Sprintf("another eepipe run holds the lock %s: %s; wait for it to finish, or delete the file if that process is not an eepipe run", e.Path, e.Holder)
}

// Lock is a held lock file. Release it when the run ends.
type Lock struct {
	path  string
	info  LockInfo
	stale *LockInfo
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// TookOver returns the holder of the stale lock this lock replaced, or nil.
func (l *Lock) TookOver() *LockInfo { return l.stale }

// emptyLockGrace is how long an empty or unreadable lock file counts as
// being written by a starting run rather than left by a crash.
const emptyLockGrace = time.Minute

// AcquireLock creates the lock file at path exclusively (O_EXCL) and writes
// info into it. When the file exists, the lock is taken over if its holder
// is a process on this host that no longer runs (or the file is empty and
// older than a minute); otherwise a *LockHeldError is returned. PID and
// Host of info default to the current process and host.
func AcquireLock(path string, info LockInfo) (*Lock, error) {
	if info.PID == 0 {
		info.PID = os.Getpid()
	}
	if info.Host == "" {
		info.Host = hostname()
	}
	if info.Since.IsZero() {
		info.Since = time.Now()
	}
	info.Since = info.Since.UTC()
	content, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	content = append(content, '\n')

	var tookOver *LockInfo
	for attempt := 0; attempt < 3; attempt++ {
		err := createExclusive(path, content)
		if err == nil {
			if info.PID == os.Getpid() {
				heldLocks.Store(lockKey(path), true)
			}
			return &Lock{path: path, info: info, stale: tookOver}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		raw, holder, readErr := readLock(path)
		if errors.Is(readErr, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if !isStale(path, holder, readErr) {
			return nil, &LockHeldError{Path: path, Holder: holder}
		}
		if err := removeIfUnchanged(path, raw); err != nil {
			return nil, &LockHeldError{Path: path, Holder: holder}
		}
		h := holder
		tookOver = &h
	}
	_, holder, _ := readLock(path)
	return nil, &LockHeldError{Path: path, Holder: holder}
}

// Release removes the lock file if it is still this run's.
func (l *Lock) Release() error {
	heldLocks.Delete(lockKey(l.path))
	raw, holder, err := readLock(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || holder.PID != l.info.PID || holder.Host != l.info.Host || !holder.Since.Equal(l.info.Since) {
		return fmt.Errorf("lock %s is no longer this run's; left in place", l.path)
	}
	if err := removeIfUnchanged(l.path, raw); err != nil {
		return fmt.Errorf("release lock %s: %w", l.path, err)
	}
	return nil
}

func createExclusive(path string, content []byte) (err error) {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fh.Close()
			os.Remove(path)
		}
	}()
	if _, err = fh.Write(content); err != nil {
		return err
	}
	if err = fh.Sync(); err != nil {
		return err
	}
	return fh.Close()
}

// readLock reads a lock file: eepipe's JSON, or the plain forms other
// tools write (a PID alone, or "PID HOST" on one line), which name a
// process on this host when they name no host.
func readLock(path string) ([]byte, LockInfo, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, LockInfo{}, err
	}
	var info LockInfo
	text := bytes.TrimSpace(raw)
	if err := json.Unmarshal(text, &info); err == nil && info.PID > 0 {
		if info.Host == "" {
			info.Host = hostname()
		}
		return raw, info, nil
	}
	fields := strings.Fields(string(text))
	if len(fields) >= 1 && len(fields) <= 2 {
		if pid, err := strconv.Atoi(fields[0]); err == nil && pid > 0 {
			info = LockInfo{PID: pid, Host: hostname()}
			if len(fields) == 2 {
				info.Host = fields[1]
			}
			return raw, info, nil
		}
	}
	return raw, LockInfo{}, fmt.Errorf("lock file %s is not an eepipe lock", path)
}

// isStale decides whether a lock file may be taken over: its holder ran on
// this host and is gone, or the file is unreadable and old.
func isStale(path string, holder LockInfo, readErr error) bool {
	if readErr != nil {
		st, err := os.Stat(path)
		return err == nil && time.Since(st.ModTime()) > emptyLockGrace
	}
	if holder.Host != hostname() {
		return false // cannot tell whether a process on another host runs
	}
	if holder.PID == os.Getpid() {
		// This process's pid: a lock it holds, or one a previous process
		// with the same pid left (a container's PID 1 after a crash).
		_, held := heldLocks.Load(lockKey(path))
		return !held
	}
	return !processAlive(holder.PID)
}

// heldLocks are the lock files this process holds, by lockKey.
var heldLocks sync.Map

func lockKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// removeIfUnchanged takes a stale lock out of the way without removing a
// lock another run created meanwhile: it renames the file aside, checks that
// what it moved is the stale content, and puts a fresh lock back otherwise.
func removeIfUnchanged(path string, stale []byte) error {
	aside := fmt.Sprintf("%s.stale-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	moved, err := os.ReadFile(aside)
	if err == nil && bytes.Equal(moved, stale) {
		return os.Remove(aside)
	}
	// Another run replaced the lock between our read and the rename: restore
	// it unless yet another lock appeared, and report the lock as held.
	if linkErr := os.Link(aside, path); linkErr == nil {
		os.Remove(aside)
	} else {
		os.Rename(aside, path)
	}
	return errors.New("lock changed hands while being taken over")
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}
