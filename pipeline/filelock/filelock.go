package filelock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"
)

// retryDelay is how often a waiting run tries the lock again.
const retryDelay = 200 * time.Millisecond

// clock is the time the waits for a lock and for its holder's record run
// on (the real one; the package's tests put a fake one).
var clock pace.Clock

// errNotYet is the failed attempt of a poll that asks to be repeated: the
// lock is still held, or its holder's record not yet readable.
var errNotYet = errors.New("not yet")

// Dir is a pipeline.Locker whose locks are files named KEY.lock in the
// folder Path (created when missing).
type Dir struct {
	Path string
}

var _ pipeline.Locker = Dir{}

// DefaultDir returns the folder of account locks: $XDG_STATE_HOME/eepipe/locks
// when XDG_STATE_HOME is set, else eepipe/locks in the user's cache folder
// (~/.cache on Linux, ~/Library/Caches on macOS, %LocalAppData% on Windows).
func DefaultDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "eepipe", "locks"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no folder for lock files (%v): give one with --lock-dir", err)
	}
	return filepath.Join(d, "eepipe", "locks"), nil
}

// Lock takes the lock file Path/key.lock; see Acquire.
func (d Dir) Lock(ctx context.Context, key string, info pipeline.LockInfo, wait time.Duration) (pipeline.Unlocker, error) {
	if d.Path == "" {
		return nil, errors.New("no lock folder")
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return nil, fmt.Errorf("lock folder: %w", err)
	}
	l, err := Acquire(ctx, filepath.Join(d.Path, key+".lock"), info, wait)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// holderWait bounds how long a run that finds the lock held waits for the
// holder's record: the holder writes it just after it locks the file, so a
// run that comes in between finds the file empty (or, after a holder that
// was killed, still holding that holder's record).
const holderWait = 2 * time.Second

// holderPoll is how often the record is read again meanwhile.
const holderPoll = 10 * time.Millisecond

// heldBy returns the holder of the lock at path, which fl could not take.
// The record is read again every holderPoll, for up to holderWait, until it
// names a holder that is not known to be gone; meanwhile the lock is tried
// again, and taken (got true) when its holder released it. After
// holderWait the holder is unknown (zero). The poll is a pace call.
func heldBy(ctx context.Context, fl *flock.Flock, path string) (holder pipeline.LockInfo, got bool, err error) {
	err = clock.Poll(holderPoll, clock.Time().Add(holderWait)).Call(ctx, func(a pace.Attempt) pace.Verdict {
		if a.N > 1 {
			ok, lerr := fl.TryLock()
			if lerr != nil || ok {
				got = ok
				return pace.Done(lerr)
			}
		}
		info, rerr := ReadHolder(path)
		if rerr == nil && !info.IsZero() && !gone(info) {
			holder = info
			return pace.Done(nil)
		}
		return pace.Again(errNotYet)
	})
	var oot *pace.OutOfTime
	var ie *pace.Interrupted
	switch {
	case errors.As(err, &oot):
		return pipeline.LockInfo{}, false, nil
	case errors.As(err, &ie):
		return pipeline.LockInfo{}, false, ie.Cause
	}
	return holder, got, err
}

// gone reports whether the process a lock record names is known to have
// ended: it ran on this host and no such process exists. The record is
// then a killed holder's, left in the file, and not the current holder's.
func gone(info pipeline.LockInfo) bool {
	if info.PID <= 0 || info.PID == os.Getpid() {
		return false
	}
	if h, err := os.Hostname(); err != nil || h != info.Host {
		return false
	}
	return processGone(info.PID)
}

// Lock is a held lock file. Unlock it when the run ends; if the process
// ends first, the operating system releases it.
type Lock struct {
	fl   *flock.Flock
	path string
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Acquire takes an exclusive OS lock on the file at path (created when
// missing), waiting up to wait for a holder to release it, and writes info
// into the file for the message another run shows. A lock still held after
// wait is a *pipeline.LockHeldError naming the holder; a cancelled ctx
// returns ctx's error. PID, Host, User and Since of info default to this
// process, host, user and now. What is in the file does not decide
// anything: a file whose recorded process is gone, or is an unrelated live
// process, is simply locked again.
func Acquire(ctx context.Context, path string, info pipeline.LockInfo, wait time.Duration) (*Lock, error) {
	info = withDefaults(info)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := tryFor(ctx, fl, wait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		holder, got, err := heldBy(ctx, fl, path)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !got {
			return nil, &pipeline.LockHeldError{What: "the lock file " + path, Holder: holder, Waited: max(wait, 0)}
		}
	}
	content, err := json.Marshal(info)
	if err == nil {
		err = writeContent(path, append(content, '\n'))
	}
	if err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{fl: fl, path: path}, nil
}

// tryFor tries the lock fl every retryDelay until it is taken (ok) or wait
// has passed (one try when wait <= 0); a pace call. A cancelled ctx
// returns ctx's error.
func tryFor(ctx context.Context, fl *flock.Flock, wait time.Duration) (ok bool, err error) {
	err = clock.Poll(retryDelay, clock.Time().Add(wait)).Call(ctx, func(pace.Attempt) pace.Verdict {
		got, err := fl.TryLock()
		if err != nil || got {
			ok = got
			return pace.Done(err)
		}
		return pace.Again(errNotYet)
	})
	var oot *pace.OutOfTime
	var ie *pace.Interrupted
	switch {
	case errors.As(err, &oot):
		return false, nil
	case errors.As(err, &ie):
		return false, ie.Cause
	}
	return ok, err
}

// Unlock empties the lock file and releases the lock. The file stays: a
// lock file removed while another run waits on it would let a third run
// lock a new file of the same name at the same time.
func (l *Lock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	terr := os.Truncate(l.path, 0)
	uerr := l.fl.Unlock()
	l.fl = nil
	if uerr != nil {
		return fmt.Errorf("release lock %s: %w", l.path, uerr)
	}
	if terr != nil && !errors.Is(terr, os.ErrNotExist) {
		return fmt.Errorf("release lock %s: %w", l.path, terr)
	}
	return nil
}

// ReadHolder reads the holder recorded in a lock file. An empty file (a
// run that has just locked it and not yet written) gives a zero LockInfo.
func ReadHolder(path string) (pipeline.LockInfo, error) {
	var info pipeline.LockInfo
	f, err := os.Open(path)
	if err != nil {
		return info, err
	}
	defer f.Close()
	// A lock file holds one short JSON line; never read more than a little.
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	if n == 0 {
		return info, nil
	}
	if err := json.Unmarshal(buf[:n], &info); err != nil {
		return pipeline.LockInfo{}, fmt.Errorf("lock file %s holds no eepipe lock record", path)
	}
	return info, nil
}

// writeContent replaces the lock file's content in place (never renamed:
// the lock belongs to the file itself).
func writeContent(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func withDefaults(info pipeline.LockInfo) pipeline.LockInfo {
	if info.PID == 0 {
		info.PID = os.Getpid()
	}
	if info.Host == "" {
		info.Host, _ = os.Hostname()
	}
	if info.User == "" {
		if u, err := user.Current(); err == nil {
			info.User = u.Username
		} else {
			info.User = os.Getenv("USER")
		}
	}
	if info.Since.IsZero() {
		info.Since = time.Now()
	}
	info.Since = info.Since.UTC()
	return info
}
