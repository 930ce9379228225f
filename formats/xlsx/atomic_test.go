package xlsx

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomicFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.xlsx")
	err := WriteFileAtomic(path, func(w io.Writer) error {
		if _, err := w.Write([]byte("half a file")); err != nil {
			return err
		}
		return errors.New("disk on fire")
	})
	if err == nil {
		t.Fatal("want error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left files behind: %v", entries)
	}
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plans.xlsx")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
}

// TestWriteFileAtomicIsPrivate: a file written is its owner's alone
// (0600), also when it replaces one that others could read; a replaced
// file its owner made read-only stays read-only.
func TestWriteFileAtomicIsPrivate(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name      string
		old, want os.FileMode // old 0: no file before
	}{
		{"new.csv", 0, 0o600},
		{"shared.json", 0o644, 0o600},
		{"group.xlsx", 0o660, 0o600},
		{"readonly.csv", 0o400, 0o400},
	} {
		path := filepath.Join(dir, c.name)
		if c.old != 0 {
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.old); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %04o, want %04o", c.name, fi.Mode().Perm(), c.want)
		}
	}
}

// TestWriteNewFileAtomic: a new file is written whole, 0600; an existing
// one is left as it is (ErrExists), with no temporary file left beside it.
func TestWriteNewFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key.json")
	if err := WriteNewFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "one"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stat: %v %v", fi, err)
	}
	err := WriteNewFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "two"); return err })
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second write: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the folder holds %d entries", len(ents))
	}
}
