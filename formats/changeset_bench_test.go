package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// benchSavedSet is a signed change set of n plans updating every counter
// of 5 years' 2 targets (900 counters a plan, about 110 KB of JSON).
func benchSavedSet(b *testing.B, n int) *savedset.SavedChangeSet {
	names := pipeline.DefaultCatalog().Names()
	s := &savedset.SavedChangeSet{Schema: savedset.SavedSetSchema, Created: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
		Service: testSetService, Accounts: []string{"acme"}}
	for i := range n {
		p := savedset.SavedPlan{Account: "acme", Action: diff.ActionUpdate, PlanID: int64(i + 1), Title: fmt.Sprintf("plan %d %q", i+1, fmt.Sprintf("Plan %04d", i))}
		for y := 1; y <= 5; y++ {
			for k, typ := range pipeline.TargetTypes {
				t := savedset.SavedTarget{YearNumber: y, FinancialYear: pipeline.FinancialYear(2024 + y).String(), TargetType: typ,
					MilestoneID: int64(i*10 + y), TargetID: int64(i*100 + y*2 + k), File: "plans.xlsx"}
				for j, c := range names {
					old := int64(j)
					t.Counters = append(t.Counters, savedset.SavedCounter{Counter: c, Expected: &old, New: int64(j + 1), Cell: fmt.Sprintf("Plan %04d!%c%d", i, 'C'+j%20, 10+j)})
				}
				p.Targets = append(p.Targets, t)
			}
		}
		s.Plans = append(s.Plans, p)
	}
	if err := s.Sign(testSetKeys); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReadChangeSet reads a change set of 200 and 800 plans (about
// 22 and 88 MB of JSON), as a JSON file and as a sign-off workbook, in the
// passes of its apply: open (verify each plan's values and the workbook's
// readable sheet), verify the signature, read every plan again. It reports
// the peak heap against the file's size: flat as the set grows, one plan
// held at a time (docs/apply-and-state.md, "Saved change sets").
//
//	go test ./formats -run '^$' -bench BenchmarkReadChangeSet -benchtime 1x
func BenchmarkReadChangeSet(b *testing.B) {
	for _, form := range []string{"json", "xlsx"} {
		for _, n := range []int{200, 800} {
			b.Run(fmt.Sprintf("form=%s/plans=%d", form, n), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "set."+form)
				if err := reports.WriteChangeSet(path, benchSavedSet(b, n)); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size := float64(st.Size()) / (1 << 20)
				// The workbook writer's temporary files are freed by
				// their finalizers, which run after a first collection:
				// a second one leaves them out of the baseline.
				runtime.GC()
				peak := benchPeakHeap()
				for b.Loop() {
					file := &reports.ChangeSetFile{Path: path}
					set, checkErr, err := savedset.OpenSaved(file.Read, pipeline.DefaultCatalog())
					if err != nil || checkErr != nil {
						b.Fatal(err, checkErr)
					}
					if err := set.Verify(testSetService, testSetKeys); err != nil {
						b.Fatal(err)
					}
					plans := 0
					if err := set.Plans(func(int, *savedset.SavedPlan) error { plans++; return nil }); err != nil || plans != n {
						b.Fatal(err, plans)
					}
				}
				p := peak()
				b.ReportMetric(size, "file-MB")
				b.ReportMetric(p, "peak-heap-MB")
				b.ReportMetric(p/size, "peak/file")
			})
		}
	}
}
