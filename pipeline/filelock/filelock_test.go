package filelock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pace/pacetest"
	"github.com/eepipe/eepipe/pipeline"
)

func TestAcquireExclusiveNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	ctx := context.Background()
	l, err := Acquire(ctx, path, pipeline.LockInfo{Command: "eepipe apply a.xlsx"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctx, path, pipeline.LockInfo{Command: "eepipe apply b.xlsx"}, 0)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second acquire: %v, want *LockHeldError", err)
	}
	h := held.Holder
	if h.PID != os.Getpid() || h.Command != "eepipe apply a.xlsx" || h.Host == "" || h.Since.IsZero() {
		t.Fatalf("holder %+v", h)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("process %d", os.Getpid()), "eepipe apply a.xlsx", "since "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(ctx, path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("acquire after unlock: %v", err)
	}
	l2.Unlock()
}

// TestStaleRecordOfLiveProcessDoesNotBlock: the lock file records a pid
// that now belongs to a live, unrelated process (here the test's parent);
// no process holds the OS lock, so the lock is taken.
func TestStaleRecordOfLiveProcessDoesNotBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	rec := fmt.Sprintf(`{"pid":%d,"host":"this","since":"2026-01-01T00:00:00Z","command":"eepipe apply"}`, os.Getppid())
	if err := os.WriteFile(path, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), path, pipeline.LockInfo{Command: "eepipe apply"}, 0)
	if err != nil {
		t.Fatalf("a record naming a live unrelated process blocked the lock: %v", err)
	}
	defer l.Unlock()
	h, err := ReadHolder(path)
	if err != nil || h.PID != os.Getpid() {
		t.Fatalf("lock file now %+v, %v; want this process", h, err)
	}
}

// t0 is the fake clock's start in the tests of waits.
var t0 = time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)

// fakeClock makes the package's waits run on a fake clock for the test:
// each wait is recorded and passes at once; onSleep (when not nil) is
// called after each, with its number.
func fakeClock(t *testing.T, onSleep func(n int)) *pacetest.Clock {
	t.Helper()
	c := pacetest.New(t0)
	if onSleep != nil {
		c.OnSleep = func(n int, _ time.Duration) { onSleep(n) }
	}
	clock = c.Clock()
	t.Cleanup(func() { clock = pace.Clock{} })
	return c
}

// repeat returns n times d, as the fake clock prints its waits.
func repeat(n int, d time.Duration) string {
	return fmt.Sprint(slices.Repeat([]time.Duration{d}, n))
}

// TestWaitForRelease: a run that waits for a held lock tries it again
// every 200 ms (retryDelay) and takes it at the first try after its holder
// released it (here during the third wait).
func TestWaitForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	ctx := context.Background()
	l, err := Acquire(ctx, path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	c := fakeClock(t, func(n int) {
		if n == 3 {
			released = true
			l.Unlock()
		}
	})
	l2, err := Acquire(ctx, path, pipeline.LockInfo{}, time.Hour)
	if err != nil {
		t.Fatalf("waiting acquire: %v", err)
	}
	defer l2.Unlock()
	if !released {
		t.Fatal("acquired while the first lock was held")
	}
	if got := fmt.Sprint(c.Slept()); got != "[200ms 200ms 200ms]" {
		t.Errorf("waits %s, want three of 200ms", got)
	}
}

// TestWaitGivesUpAndCancel: a run that waits for a lock held throughout
// tries it every retryDelay, the last wait cut to end at the limit, where
// it tries once more and gives up, naming the holder at once (its record
// is there); a cancelled wait returns the context's error.
func TestWaitGivesUpAndCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, pipeline.LockInfo{Command: "eepipe apply a.xlsx"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	c := fakeClock(t, nil)
	_, err = Acquire(context.Background(), path, pipeline.LockInfo{}, 500*time.Millisecond)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || held.Waited != 500*time.Millisecond || !strings.Contains(err.Error(), "waited 500ms") ||
		held.Holder.Command != "eepipe apply a.xlsx" {
		t.Fatalf("got %v, want a held lock after waiting, its holder named", err)
	}
	if got := fmt.Sprint(c.Slept()); got != "[200ms 200ms 100ms]" || !c.Now().Equal(t0.Add(500*time.Millisecond)) {
		t.Errorf("waits %s, ending at t0+%v; want [200ms 200ms 100ms] ending at the limit", got, c.Now().Sub(t0))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Acquire(ctx, path, pipeline.LockInfo{}, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestDirLockKeys(t *testing.T) {
	d := Dir{Path: filepath.Join(t.TempDir(), "nested", "locks")}
	ctx := context.Background()
	a, err := d.Lock(ctx, pipeline.AccountLockKey("mpk_a"), pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unlock()
	b, err := d.Lock(ctx, pipeline.AccountLockKey("mpk_b"), pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("another account's lock: %v", err)
	}
	b.Unlock()
	if _, err := d.Lock(ctx, pipeline.AccountLockKey(" mpk_a"), pipeline.LockInfo{}, 0); err == nil {
		t.Fatal("the same key pair, spaced, was not locked")
	}
	entries, _ := os.ReadDir(d.Path)
	for _, e := range entries {
		if strings.Contains(e.Name(), "mpk_") || strings.Contains(e.Name(), "127.0.0.1") {
			t.Fatalf("lock file name %q shows the key or URL", e.Name())
		}
	}
}

// TestLockDiesWithProcess: a child process takes the lock and is killed;
// the next acquire succeeds at once, with no stale-lock logic.
func TestLockDiesWithProcess(t *testing.T) {
	if os.Getenv("EEPIPE_FILELOCK_CHILD") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderChild$")
	cmd.Env = append(os.Environ(), "EEPIPE_FILELOCK_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child process: %v", err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "locked") {
		cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	if _, err := Acquire(context.Background(), path, pipeline.LockInfo{}, 0); err == nil {
		t.Fatal("the child's lock was not held")
	} else if h, _ := ReadHolder(path); h.PID != cmd.Process.Pid {
		t.Fatalf("holder %+v, want the child %d", h, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(context.Background(), path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("the lock outlived its process: %v", err)
	}
	l.Unlock()
}

// TestLockHolderChild is the child of TestLockDiesWithProcess.
func TestLockHolderChild(t *testing.T) {
	path := os.Getenv("EEPIPE_FILELOCK_CHILD")
	if path == "" {
		t.Skip("helper process only")
	}
	if _, err := Acquire(context.Background(), path, pipeline.LockInfo{Command: "child"}, 0); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Hour)
}

// FuzzReadHolder: whatever a lock file holds (another tool's, a damaged
// one, a huge one), reading its holder never panics, reads at most a small
// prefix, and an unreadable record is an error, never a made-up holder.
func FuzzReadHolder(f *testing.F) {
	f.Add([]byte(`{"pid":42,"host":"h","user":"u","since":"2026-11-22T03:00:00Z","command":"eepipe apply"}`))
	f.Add([]byte("4242\n"))
	f.Add([]byte(""))
	f.Add([]byte(`{"pid":"x"}`))
	f.Add([]byte(strings.Repeat(" ", 5000) + `{"pid":1}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "x.lock")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		h, err := ReadHolder(path)
		if err != nil && !h.IsZero() {
			t.Fatalf("an error with a holder: %+v, %v", h, err)
		}
		if len(b) > 4096 && err == nil && !h.IsZero() && !strings.Contains(string(b[:4096]), "}") {
			t.Fatalf("read past the first 4096 bytes: %+v", h)
		}
	})
}

// holdBare takes the OS lock on path the way a run does at its first
// instant, before it has written its record.
func holdBare(t *testing.T, path string) *flock.Flock {
	t.Helper()
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("bare lock: %v, %v", ok, err)
	}
	t.Cleanup(func() { fl.Unlock() })
	return fl
}

func writeRecord(t *testing.T, path string, info pipeline.LockInfo) {
	t.Helper()
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeContent(path, append(b, '\n')); err != nil {
		t.Error(err)
	}
}

// TestHolderRecordWrittenLate: a run finds the lock held by a run that has
// locked the file but not yet written its record (the race behind "held by
// a run that is just starting"); it reads the record again every 10 ms
// (holderPoll), and the message names the holder once written (here during
// the fifth wait).
func TestHolderRecordWrittenLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holdBare(t, path)
	c := fakeClock(t, func(n int) {
		if n == 5 {
			writeRecord(t, path, pipeline.LockInfo{PID: os.Getpid(), Host: "h", Command: "eepipe apply late.xlsx", Since: time.Now()})
		}
	})
	_, err := Acquire(context.Background(), path, pipeline.LockInfo{Command: "eepipe apply other.xlsx"}, 0)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || held.Holder.Command != "eepipe apply late.xlsx" || !strings.Contains(err.Error(), "eepipe apply late.xlsx") {
		t.Fatalf("got %v, want the lock held by the late writer, named", err)
	}
	if got := fmt.Sprint(c.Slept()); got != repeat(5, 10*time.Millisecond) {
		t.Errorf("waits %s, want five of 10ms", got)
	}
}

// TestHolderRecordNeverWritten: a holder that writes no record is waited
// for 2 s (holderWait), its record read every 10 ms (holderPoll), and is
// then refused
// as an unknown holder.
func TestHolderRecordNeverWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holdBare(t, path)
	c := fakeClock(t, nil)
	_, err := Acquire(context.Background(), path, pipeline.LockInfo{}, 0)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || !held.Holder.IsZero() || held.Waited != 0 {
		t.Fatalf("got %v, want the lock held by an unknown holder", err)
	}
	if got := fmt.Sprint(c.Slept()); got != repeat(200, 10*time.Millisecond) {
		t.Errorf("waited %v in %d waits, want 2s in waits of 10ms", c.Total(), len(c.Slept()))
	}
}

// TestHolderReleasedBeforeItsRecord: the holder releases the lock before
// its record was read (here during the first wait for it); the lock is
// then free and is taken at the next try.
func TestHolderReleasedBeforeItsRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	fl := holdBare(t, path)
	c := fakeClock(t, func(n int) {
		if n == 1 {
			fl.Unlock()
		}
	})
	l, err := Acquire(context.Background(), path, pipeline.LockInfo{Command: "eepipe apply b.xlsx"}, 0)
	if err != nil {
		t.Fatalf("the released lock was not taken: %v", err)
	}
	defer l.Unlock()
	if h, _ := ReadHolder(path); h.Command != "eepipe apply b.xlsx" {
		t.Fatalf("holder %+v", h)
	}
	if got := fmt.Sprint(c.Slept()); got != "[10ms]" {
		t.Errorf("waits %s, want one of 10ms", got)
	}
}

// TestKilledHoldersRecordIsNotNamed: the file still holds the record of a
// holder that was killed (its process is gone) when a new run locks it; a
// third run names the new holder once it has written its record (here
// during the fourth wait), never the dead one.
func TestKilledHoldersRecordIsNotNamed(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	host, _ := os.Hostname()
	path := filepath.Join(t.TempDir(), "x.lock")
	holdBare(t, path)
	writeRecord(t, path, pipeline.LockInfo{PID: dead.Process.Pid, Host: host, Command: "eepipe apply killed.xlsx", Since: time.Now()})
	c := fakeClock(t, func(n int) {
		if n == 4 {
			writeRecord(t, path, pipeline.LockInfo{PID: os.Getpid(), Host: host, Command: "eepipe apply new.xlsx", Since: time.Now()})
		}
	})
	_, err := Acquire(context.Background(), path, pipeline.LockInfo{}, 0)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || held.Holder.Command != "eepipe apply new.xlsx" {
		t.Fatalf("got %v, want the lock held by the new holder, named", err)
	}
	if got := fmt.Sprint(c.Slept()); got != repeat(4, 10*time.Millisecond) {
		t.Errorf("waits %s, want four of 10ms", got)
	}
}
