package xlsx

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// tempDeadPID returns the id of a process that has ended.
func tempDeadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestRemoveOrphanTemps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process ids are not checked")
	}
	dir := t.TempDir()
	now := time.Now()
	dead, self, alive := tempDeadPID(t), os.Getpid(), os.Getppid()
	tmp := func(base string, pid int, n int) string {
		if pid == 0 {
			return "." + base + ".tmp-" + strconv.Itoa(n)
		}
		return "." + base + ".tmp-" + strconv.Itoa(pid) + "." + tempHostTag + "-" + strconv.Itoa(n)
	}
	other := func(pid, n int) string { // written by another host
		tag := "00000000"
		if tag == tempHostTag {
			tag = "00000001"
		}
		return ".report.csv.tmp-" + strconv.Itoa(pid) + "." + tag + "-" + strconv.Itoa(n)
	}
	files := []struct {
		name   string
		age    time.Duration
		remove bool
	}{
		{tmp("report.csv", dead, 1), 20 * time.Minute, true},                                       // writer gone
		{tmp("report.csv", dead, 2), time.Minute, true},                                            // just killed: the next run removes it
		{tmp("report.csv", self, 3), 20 * time.Minute, false},                                      // this process writes it
		{tmp("report.csv", alive, 4), 20 * time.Minute, false},                                     // writer alive
		{tmp("report.csv", alive, 5), 25 * time.Hour, true},                                        // a day old: pid reused
		{tmp("report.csv", 0, 6), 2 * time.Hour, false},                                            // earlier version, no pid
		{tmp("report.csv", 0, 7), 25 * time.Hour, true},                                            // earlier version, a day old
		{other(dead, 11), 20 * time.Minute, false},                                                 // another host's: its pid means nothing here
		{other(dead, 12), 25 * time.Hour, true},                                                    // another host's, a day old
		{"report.csv.tmp-" + strconv.Itoa(dead) + "." + tempHostTag + "-8", 48 * time.Hour, false}, // not hidden: not ours
		{".report.csv.tmp-abc", 48 * time.Hour, false},                                             // not our digits
		{".report.csv.tmp-" + strconv.Itoa(dead) + "-9x", 48 * time.Hour, false},
		{"report.csv", 48 * time.Hour, false},
		{".eepipe.lock", 48 * time.Hour, false},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	folder := filepath.Join(dir, tmp("folder", dead, 10))
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(folder, now.Add(-48*time.Hour), now.Add(-48*time.Hour))

	// Another output's orphans are left when one output's are asked for.
	removed, err := RemoveOrphanTemps(dir, "other.csv", now)
	if err != nil || len(removed) != 0 {
		t.Fatalf("other.csv: removed %v, %v", removed, err)
	}
	removed, err = RemoveOrphanTemps(dir, "", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, statErr := os.Stat(filepath.Join(dir, f.name))
		gone := os.IsNotExist(statErr)
		if gone != f.remove {
			t.Errorf("%s (age %s): removed %v, want %v", f.name, f.age, gone, f.remove)
		}
		if gone != slices.Contains(removed, filepath.Join(dir, f.name)) {
			t.Errorf("%s: not reported as removed", f.name)
		}
	}
	if _, err := os.Stat(folder); err != nil {
		t.Errorf("a folder with a temporary name was removed")
	}
}

// TestWriteFileAtomicRemovesOwnOrphans: writing an output removes the
// temporary files a killed run left for the same output, and its own
// temporary name carries its process id.
func TestWriteFileAtomicRemovesOwnOrphans(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process ids are not checked")
	}
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	orphan := filepath.Join(dir, ".out.csv.tmp-"+strconv.Itoa(tempDeadPID(t))+"."+tempHostTag+"-42")
	other := filepath.Join(dir, ".else.csv.tmp-"+strconv.Itoa(tempDeadPID(t))+"."+tempHostTag+"-42")
	for _, p := range []string{orphan, other} {
		_ = os.WriteFile(p, []byte("partial"), 0o644)
		_ = os.Chtimes(p, old, old)
	}
	var during []string
	err := WriteFileAtomic(filepath.Join(dir, "out.csv"), func(w io.Writer) error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			during = append(during, e.Name())
		}
		_, err := io.WriteString(w, "a,b\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphan of out.csv is still there")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the orphan of another output was removed")
	}
	want := ".out.csv.tmp-" + strconv.Itoa(os.Getpid()) + "." + tempHostTag + "-"
	if !slices.ContainsFunc(during, func(n string) bool { return len(n) > len(want) && n[:len(want)] == want }) {
		t.Errorf("no temporary file named %s* while writing: %v", want, during)
	}
}
