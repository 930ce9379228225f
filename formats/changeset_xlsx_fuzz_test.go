package formats

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// FuzzReadChangeSetWorkbook: any bytes given as a sign-off workbook are
// read without a panic or a hang, through every pass of an apply: a
// workbook that is not one is ErrNotChangeSet or an error, and one whose
// signature holds reads back the signed plans.
func FuzzReadChangeSetWorkbook(f *testing.F) {
	in := inPlanForTest()
	in.Targets[0].Counters.Put("number_of_white_female_top_managers", 4)
	stored := storedForTest()
	stored.Milestones[0].Targets[0].Counters.Put("number_of_white_female_top_managers", 0)
	d := diff.Diff(in, stored, diff.DiffOptions{})
	d.Account = "acme"
	s, err := savedset.SaveChangeSet(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, testSetService, nil, time.Now(), pipeline.DefaultCatalog(), testSetKeys)
	if err != nil {
		f.Fatal(err)
	}
	seed := filepath.Join(f.TempDir(), "seed.xlsx")
	if err := reports.WriteChangeSet(seed, s); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "set.xlsx")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		reports.IsChangeSet(path)
		file := &reports.ChangeSetFile{Path: path}
		set, _, err := savedset.OpenSaved(file.Read, pipeline.DefaultCatalog())
		if err != nil {
			return
		}
		if set.Verify(testSetService, testSetKeys) != nil {
			return
		}
		n := 0
		if err := set.Plans(func(int, *savedset.SavedPlan) error { n++; return nil }); err != nil {
			t.Fatalf("a verified set failed when read again: %v", err)
		}
		if n != set.Len() {
			t.Fatalf("read %d plans again, verified %d", n, set.Len())
		}
	})
}
