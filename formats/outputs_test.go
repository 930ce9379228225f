package formats

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestStampedName(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 0, 59, 0, time.FixedZone("SAST", 2*3600))
	tests := []struct{ base, want string }{
		{"plans.xlsx", "plans-2026-11-22T0300Z.xlsx"},
		{"plans.csv", "plans-2026-11-22T0300Z.csv"},
		{"drift.json", "drift-2026-11-22T0300Z.json"},
		{"archive.csv.gz", "archive-2026-11-22T0300Z.csv.gz"},
		{"noext", "noext-2026-11-22T0300Z"},
	}
	for _, tc := range tests {
		got := StampedName(tc.base, at)
		if got != tc.want {
			t.Errorf("StampedName(%q) = %q, want %q", tc.base, got, tc.want)
		}
		back, ok := ParseStampedName(tc.base, got)
		if !ok || !back.Equal(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)) {
			t.Errorf("ParseStampedName(%q, %q) = %v, %v", tc.base, got, back, ok)
		}
	}
	for _, name := range []string{"plans.xlsx", "plans-2026-11-22T0300Z.csv", "plans-2026-11-22T0300.xlsx",
		"other-2026-11-22T0300Z.xlsx", "plans-2026-13-22T0300Z.xlsx", "plans-x-2026-11-22T0300Z.xlsx"} {
		if _, ok := ParseStampedName("plans.xlsx", name); ok {
			t.Errorf("ParseStampedName accepted %q", name)
		}
	}
}

func TestPruneStampedKeepsNewestOfSameName(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	var names []string
	for i := range 5 {
		n := StampedName("plans.xlsx", base.Add(time.Duration(i)*24*time.Hour))
		names = append(names, n)
		// modification times in reverse, to prove the stamp decides
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-time.Duration(i) * time.Hour)
		os.Chtimes(p, mt, mt)
	}
	others := []string{"plans.xlsx", StampedName("plans.csv", base), StampedName("drift.json", base), "notes.txt"}
	for _, n := range others {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	removed, err := PruneStamped(dir, "plans.xlsx", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Fatalf("removed %v, want the 3 oldest", removed)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := append([]string{names[3], names[4]}, others...)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	if removed, _ := PruneStamped(dir, "plans.xlsx", 0); removed != nil {
		t.Fatalf("keep 0 removed %v", removed)
	}
	if removed, _ := PruneStamped(dir, "plans.xlsx", 2); removed != nil {
		t.Fatalf("second prune removed %v", removed)
	}
}

func TestLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".eepipe.lock")
	l, err := AcquireLock(path, LockInfo{Command: "export"})
	if err != nil {
		t.Fatal(err)
	}
	if l.TookOver() != nil {
		t.Fatal("fresh lock reports a takeover")
	}
	_, err = AcquireLock(path, LockInfo{Command: "export"})
	var held *LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second acquire: %v, want LockHeldError", err)
	}
	if held.Holder.PID != os.Getpid() || held.Holder.Command != "export" {
		t.Fatalf("holder %+v", held.Holder)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left after release: %v", err)
	}
	l2, err := AcquireLock(path, LockInfo{})
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	l2.Release()
}

func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	return cmd.Process.Pid
}

func TestLockStaleTakeover(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".eepipe.lock")
	pid := deadPID(t)
	stale := LockInfo{PID: pid, Host: hostname(), Since: time.Now().Add(-time.Hour).UTC(), Command: "export"}
	if _, err := AcquireLock(path, stale); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(path, LockInfo{Command: "reconcile"})
	if err != nil {
		t.Fatalf("stale lock not taken over: %v", err)
	}
	if l.TookOver() == nil || l.TookOver().PID != pid {
		t.Fatalf("TookOver = %v, want pid %d", l.TookOver(), pid)
	}
	_, holder, err := readLock(path)
	if err != nil || holder.PID != os.Getpid() || holder.Command != "reconcile" {
		t.Fatalf("lock now %+v, %v", holder, err)
	}
	l.Release()
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Fatalf("files left: %v", entries)
	}
}

func TestLockNotTakenOver(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		write func(path string)
	}{
		{"live process", func(p string) {
			AcquireLock(p, LockInfo{PID: os.Getppid(), Since: time.Now().Add(-time.Hour)})
		}},
		{"dead pid on another host", func(p string) {
			AcquireLock(p, LockInfo{PID: deadPID(t), Host: "some-other-host"})
		}},
		{"fresh empty file", func(p string) { os.WriteFile(p, nil, 0o644) }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "lock"+string(rune('a'+i)))
			tc.write(path)
			before, _ := os.ReadFile(path)
			_, err := AcquireLock(path, LockInfo{})
			var held *LockHeldError
			if !errors.As(err, &held) {
				t.Fatalf("got %v, want LockHeldError", err)
			}
			if held.Error() == "" {
				t.Fatal("empty message")
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Fatal("a held lock was modified")
			}
		})
	}
}

func TestLockOldEmptyFileTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	os.WriteFile(path, nil, 0o644)
	old := time.Now().Add(-2 * emptyLockGrace)
	os.Chtimes(path, old, old)
	l, err := AcquireLock(path, LockInfo{})
	if err != nil {
		t.Fatalf("old empty lock not taken over: %v", err)
	}
	l.Release()
}

func TestLockReleaseLeavesForeignLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := AcquireLock(path, LockInfo{})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	other, err := AcquireLock(path, LockInfo{Host: "elsewhere", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	_ = other
	if err := l.Release(); err == nil {
		t.Fatal("released a lock that is another run's")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("foreign lock removed")
	}
}

func TestStampedNameRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.StringMatching(`[a-z][a-z0-9_.-]{0,12}\.(xlsx|csv|json)`).Draw(t, "base")
		at := time.Unix(rapid.Int64Range(0, 4102444800).Draw(t, "unix"), 0)
		name := StampedName(base, at)
		back, ok := ParseStampedName(base, name)
		if !ok || !back.Equal(at.UTC().Truncate(time.Minute)) {
			t.Fatalf("ParseStampedName(%q, %q) = %v, %v; want %v", base, name, back, ok, at.UTC().Truncate(time.Minute))
		}
	})
}

func FuzzParseStampedName(f *testing.F) {
	f.Add("plans.xlsx", "plans-2026-11-22T0300Z.xlsx")
	f.Add("plans.xlsx", "plans-2026-02-30T0300Z.xlsx")
	f.Add("a.csv.gz", "a-2026-11-22T0300Z.csv.gz")
	f.Add("x", "x-")
	f.Fuzz(func(t *testing.T, base, name string) {
		at, ok := ParseStampedName(base, name)
		if !ok {
			return
		}
		if got := StampedName(base, at); got != name {
			t.Fatalf("ParseStampedName(%q, %q) accepted a name StampedName writes as %q", base, name, got)
		}
	})
}

func TestLockPlainPIDFiles(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	tests := []struct {
		content string
		stale   bool
	}{
		{fmt.Sprintf("%d\n", dead), true},
		{fmt.Sprintf("%d %s\n", dead, hostname()), true},
		{fmt.Sprintf("%d elsewhere\n", dead), false},
		{fmt.Sprintf("%d\n", os.Getppid()), false},
		{"not a lock", false},
	}
	for i, tc := range tests {
		path := filepath.Join(dir, fmt.Sprintf("lock%d", i))
		os.WriteFile(path, []byte(tc.content), 0o644)
		l, err := AcquireLock(path, LockInfo{})
		if tc.stale != (err == nil) {
			t.Errorf("%q: err = %v, want stale %v", tc.content, err, tc.stale)
		}
		if l != nil {
			l.Release()
		}
	}
}

// TestLockOwnPIDFromEarlierProcessTakenOver: a lock naming this process's
// pid on this host that this process does not hold was left by an earlier
// process with the same pid (a container's PID 1 after a crash): it is
// taken over, while a lock this process holds is still refused.
func TestLockOwnPIDFromEarlierProcessTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".eepipe.lock")
	left := fmt.Sprintf("{\"pid\":%d,\"host\":%q,\"since\":\"2026-11-21T03:00:00Z\",\"command\":\"eepipe export\"}\n", os.Getpid(), hostname())
	if err := os.WriteFile(path, []byte(left), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(path, LockInfo{Command: "export"})
	if err != nil {
		t.Fatalf("a lock left by an earlier process with this pid was not taken over: %v", err)
	}
	if l.TookOver() == nil || l.TookOver().PID != os.Getpid() {
		t.Fatalf("takeover not reported: %+v", l.TookOver())
	}
	var held *LockHeldError
	if _, err := AcquireLock(path, LockInfo{}); !errors.As(err, &held) {
		t.Fatalf("second acquire in the holding process: %v, want LockHeldError", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}
