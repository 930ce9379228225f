package xlsx

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestZombieWriterTempIsOrphan: the temporary file of a writer that was
// killed but not yet reaped (a zombie, state Z) is an orphan and removed;
// that of a live writer is kept.
func TestZombieWriterTempIsOrphan(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait() // reaps it at the end
	deadline := time.Now().Add(30 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if tempWriterAlive(pid) {
		t.Fatalf("zombie %d counts as alive", pid)
	}
	if !tempWriterAlive(os.Getpid()) || !tempWriterAlive(os.Getppid()) {
		t.Fatal("a live process counts as gone")
	}
	dir := t.TempDir()
	name := func(pid int) string {
		return ".run.json.tmp-" + strconv.Itoa(pid) + "." + tempHostTag + "-1"
	}
	for _, p := range []int{pid, os.Getppid()} {
		if err := os.WriteFile(filepath.Join(dir, name(p)), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveOrphanTemps(dir, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || filepath.Base(removed[0]) != name(pid) {
		t.Fatalf("removed %v, want the zombie's file only", removed)
	}
}
