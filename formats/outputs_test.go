package formats

import (
	"os"
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
