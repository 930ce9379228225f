package statestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// filledStore writes an SQLite store with runs of n target writes of 20
// counters each, closed (checkpointed), and returns its path.
func filledStore(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	ctx := context.Background()
	s, err := OpenWith(ctx, path, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	names := pipeline.DefaultCatalog().Names()[:20]
	for r := 0; r < n; r += 500 {
		run, err := s.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), Service: "https://svc", Accounts: []string{"acme"}})
		if err != nil {
			t.Fatal(err)
		}
		var ws []pipeline.TargetWrite
		for i := r; i < min(n, r+500); i++ {
			w := pipeline.TargetWrite{Account: "acme", PlanID: int64(i / 10), TargetID: int64(i), TargetType: "all_employees", Outcome: "ok", At: time.Now()}
			for j, c := range names {
				v := int64(j)
				w.Counters = append(w.Counters, pipeline.CounterWrite{Counter: c, Before: &v, After: v + 1, Sent: true})
			}
			ws = append(ws, w)
		}
		if err := s.RecordWrites(ctx, run, ws); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// dirFiles lists the names and contents of the files in dir.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDamagedStoreRefusedAtOpen: a store with a damaged page is refused
// at open (ErrDamaged, the check's finding and what to do in the message)
// and left byte for byte as it was, with no file added beside it; a sound
// store opens.
func TestDamagedStoreRefusedAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db") // an empty new store opens
	if s, err := OpenWith(context.Background(), path, testOptions); err != nil {
		t.Fatalf("new store: %v", err)
	} else {
		s.Close()
	}
	for _, page := range []int{2, 5, -2} {
		t.Run(fmt.Sprintf("page %d", page), func(t *testing.T) {
			path := filledStore(t, 1500)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			const pageSize = 4096
			at := (page - 1) * pageSize
			if page < 0 {
				at = len(data) + page*pageSize
			}
			// A b-tree page whose header and cell pointers are garbage.
			for i := at; i < at+64; i++ {
				data[i] = 0xA5
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := dirFiles(t, filepath.Dir(path))
			s, err := OpenWith(context.Background(), path, testOptions)
			if err == nil {
				s.Close()
				t.Fatal("a damaged store was opened")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "integrity check") || !strings.Contains(err.Error(), "not changed") ||
				!strings.Contains(err.Error(), "--state") {
				t.Fatalf("refusal: %v", err)
			}
			after := dirFiles(t, filepath.Dir(path))
			if !slices.Equal(sortedKeys(before), sortedKeys(after)) {
				t.Fatalf("files beside the store changed: %v -> %v", sortedKeys(before), sortedKeys(after))
			}
			for k, v := range before {
				if !bytes.Equal(v, after[k]) {
					t.Fatalf("%s changed", k)
				}
			}
		})
	}
	if s, err := OpenWith(context.Background(), filledStore(t, 600), testOptions); err != nil {
		t.Fatalf("sound store: %v", err)
	} else {
		s.Close()
	}
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestExplainFullAndIOErrors: a full disk and an I/O error are explained
// (what to check, that what was recorded is kept), keeping SQLite's error.
func TestExplainFullAndIOErrors(t *testing.T) {
	s := &Store{where: "/var/lib/eepipe/state.db"}
	for _, c := range []struct{ sqlite, want string }{
		{"database or disk is full (13)", "is full"},
		{"disk I/O error (4874)", "disk holding it is full"},
	} {
		err := s.explain(errors.New(c.sqlite))
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.sqlite) || !strings.Contains(err.Error(), "free space") ||
			!strings.Contains(err.Error(), s.where) {
			t.Errorf("%s: %v", c.sqlite, err)
		}
	}
}

// BenchmarkOpenCheck measures the integrity check at open of SQLite
// stores of 2 000 and 20 000 target writes of 20 counters each: the first
// is checked page by page (quick_check), the second, over fullCheckMax,
// has its small tables checked.
func BenchmarkOpenCheck(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("writes=%d", n), func(b *testing.B) {
			path := filledStore(b, n)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := checkSQLite(context.Background(), path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
		})
	}
}
