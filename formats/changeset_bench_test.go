package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// benchSavedSet is a signed change set of n plans updating every counter
// of 5 years' 2 targets (900 counters a plan, about 110 KB of JSON).
func benchSavedSet(b *testing.B, n int) *pipeline.SavedChangeSet {
	names := pipeline.DefaultCatalog().Names()
	s := &pipeline.SavedChangeSet{Schema: pipeline.SavedSetSchema, Created: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
		Service: testSetService, Accounts: []string{"acme"}}
	for i := range n {
		p := pipeline.SavedPlan{Account: "acme", Action: pipeline.ActionUpdate, PlanID: int64(i + 1), Title: fmt.Sprintf("plan %d %q", i+1, fmt.Sprintf("Plan %04d", i))}
		for y := 1; y <= 5; y++ {
			for k, typ := range pipeline.TargetTypes {
				t := pipeline.SavedTarget{YearNumber: y, FinancialYear: pipeline.FinancialYear(2024 + y).String(), TargetType: typ,
					MilestoneID: int64(i*10 + y), TargetID: int64(i*100 + y*2 + k), File: "plans.xlsx"}
				for j, c := range names {
					old := int64(j)
					t.Counters = append(t.Counters, pipeline.SavedCounter{Counter: c, Expected: &old, New: int64(j + 1), Cell: fmt.Sprintf("Plan %04d!%c%d", i, 'C'+j%20, 10+j)})
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

// BenchmarkReadChangeSet reads, checks and verifies a JSON change set of
// 200 and 1000 plans (about 22 and 110 MB), reporting the peak live heap
// against the file's size.
func BenchmarkReadChangeSet(b *testing.B) {
	for _, n := range []int{200, 1000} {
		b.Run(fmt.Sprintf("plans=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "set.json")
			if err := WriteChangeSet(path, benchSavedSet(b, n)); err != nil {
				b.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			size := float64(st.Size()) / (1 << 20)
			peak := benchPeakHeap()
			for b.Loop() {
				s, err := ReadChangeSet(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Check(pipeline.DefaultCatalog()); err != nil {
					b.Fatal(err)
				}
				if err := s.Verify(testSetService, testSetKeys); err != nil {
					b.Fatal(err)
				}
			}
			p := peak()
			b.ReportMetric(size, "file-MB")
			b.ReportMetric(p, "peak-heap-MB")
			b.ReportMetric(p/size, "peak/file")
		})
	}
}
