package filelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func TestWaitForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	ctx := context.Background()
	l, err := Acquire(ctx, path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(released)
		l.Unlock()
	}()
	l2, err := Acquire(ctx, path, pipeline.LockInfo{}, time.Hour)
	if err != nil {
		t.Fatalf("waiting acquire: %v", err)
	}
	select {
	case <-released:
	default:
		t.Fatal("acquired while the first lock was held")
	}
	l2.Unlock()
}

func TestWaitGivesUpAndCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = Acquire(context.Background(), path, pipeline.LockInfo{}, 50*time.Millisecond)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || held.Waited != 50*time.Millisecond || !strings.Contains(err.Error(), "waited 50ms") {
		t.Fatalf("got %v, want a held lock after waiting", err)
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
	a, err := d.Lock(ctx, pipeline.AccountLockKey("http://127.0.0.1:1/", "mpk_a"), pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unlock()
	b, err := d.Lock(ctx, pipeline.AccountLockKey("http://127.0.0.1:1", "mpk_b"), pipeline.LockInfo{}, 0)
	if err != nil {
		t.Fatalf("another account's lock: %v", err)
	}
	b.Unlock()
	if _, err := d.Lock(ctx, pipeline.AccountLockKey("HTTP://127.0.0.1:1", " mpk_a"), pipeline.LockInfo{}, 0); err == nil {
		t.Fatal("the same account reached through an equal URL was not locked")
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
