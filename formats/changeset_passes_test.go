package formats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// passesSet is a signed change set of n plans, plan i writing new+i to
// one counter of its stored plan 100+i.
func passesSet(t *testing.T, n int, new int64) *savedset.SavedChangeSet {
	t.Helper()
	s := &savedset.SavedChangeSet{Schema: savedset.SavedSetSchema, Created: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
		Service: testSetService, Accounts: []string{"acme"}}
	for i := range n {
		old := int64(0)
		s.Plans = append(s.Plans, savedset.SavedPlan{Account: "acme", Action: diff.ActionUpdate, PlanID: int64(100 + i),
			Title: fmt.Sprintf("plan %d %q", 100+i, "P"), Targets: []savedset.SavedTarget{{YearNumber: 1, TargetType: "all_employees",
				MilestoneID: 1, TargetID: 2, Counters: []savedset.SavedCounter{{Counter: "number_of_african_male_top_managers", Expected: &old, New: new + int64(i)}}}}})
	}
	if err := s.Sign(testSetKeys); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChangeSetFilePasses: a change set file is read again for each pass
// of its apply; a file that changed since the first pass, even into
// another validly signed set, is pipeline.ErrSetChanged, and no plan that
// was not verified reaches the pass.
func TestChangeSetFilePasses(t *testing.T) {
	for _, ext := range []string{".json", ".xlsx"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "set"+ext)
			if err := reports.WriteChangeSet(path, passesSet(t, 5, 1)); err != nil {
				t.Fatal(err)
			}
			open := func() (*savedset.StreamedSet, *reports.ChangeSetFile) {
				f := &reports.ChangeSetFile{Path: path}
				set, checkErr, err := savedset.OpenSaved(f.Read, pipeline.DefaultCatalog())
				if err != nil || checkErr != nil {
					t.Fatal(err, checkErr)
				}
				if err := set.Verify(testSetService, testSetKeys); err != nil {
					t.Fatal(err)
				}
				return set, f
			}
			set, f := open()
			if b, _ := os.ReadFile(path); f.Size != int64(len(b)) || len(f.SHA256) != 64 || set.Len() != 5 {
				t.Fatalf("first pass: size %d, sha %q, %d plans", f.Size, f.SHA256, set.Len())
			}
			seen := 0
			if err := set.Plans(func(i int, p *savedset.SavedPlan) error { seen++; return nil }); err != nil || seen != 5 {
				t.Fatalf("second pass: %d plans, %v", seen, err)
			}

			// Another signed set, in which plan 3 writes other values.
			other := passesSet(t, 5, 1)
			other.Plans[2].Targets[0].Counters[0].New = 999
			if err := other.Sign(testSetKeys); err != nil {
				t.Fatal(err)
			}
			if err := reports.WriteChangeSet(path, other); err != nil {
				t.Fatal(err)
			}
			var got []int64
			err := set.Plans(func(i int, p *savedset.SavedPlan) error {
				got = append(got, p.Targets[0].Counters[0].New)
				return nil
			})
			if !errors.Is(err, savedset.ErrSetChanged) || len(got) > 2 {
				t.Errorf("changed set: %v after %v", err, got)
			}
			for _, v := range got {
				if v == 999 {
					t.Errorf("a plan that was not verified reached the pass: %v", got)
				}
			}
		})
	}
	// The same plans in other bytes: refused at the end of the pass.
	path := filepath.Join(t.TempDir(), "set.json")
	if err := reports.WriteChangeSet(path, passesSet(t, 3, 1)); err != nil {
		t.Fatal(err)
	}
	f := &reports.ChangeSetFile{Path: path}
	set, _, err := savedset.OpenSaved(f.Read, pipeline.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Verify(testSetService, testSetKeys); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "\n", "\n ", 1)), 0o600)
	if err := set.Plans(func(int, *savedset.SavedPlan) error { return nil }); !errors.Is(err, savedset.ErrSetChanged) {
		t.Errorf("re-spaced set: %v", err)
	}
	// Plans are not read again before the signature held.
	g := &reports.ChangeSetFile{Path: path}
	unverified, _, err := savedset.OpenSaved(g.Read, pipeline.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if err := unverified.Plans(func(int, *savedset.SavedPlan) error { return nil }); !errors.Is(err, savedset.ErrSetSignature) {
		t.Errorf("unverified set read again: %v", err)
	}
}
