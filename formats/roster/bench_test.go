package roster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/measure"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/profile"
)

// writeBenchRoster writes a CSV roster of n employees in Sage VIP's shape.
func writeBenchRoster(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "roster.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "Employee Code,Surname,First Name,Race,Gender,Disabled,Foreign National,Occupational Level,Job Grade,Employment Type")
	races, genders := []string{"A", "C", "I", "W"}, []string{"M", "F"}
	grades := []string{"F1", "E2", "D3", "C1", "C4", "B2", "B5", "A1"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "E%06d,Surname%d,Name%d,%s,%s,%s,%s,,%s,%s\n", i, i, i, races[i%4], genders[i/4%2],
			map[bool]string{true: "Y", false: "N"}[i%37 == 0], map[bool]string{true: "Y", false: "N"}[i%53 == 0],
			grades[i*7%len(grades)], map[bool]string{true: "Contract", false: "Permanent"}[i%11 == 0])
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkProfileCSV100k profiles a CSV roster of 100,000 employees:
// read, classified and counted (docs/performance.md). cpu-s/op is the
// process's CPU time (user and system, every goroutine, the collector's
// too) per profile, which other processes on the machine do not inflate;
// heap-MB the largest heap seen, sampled every 10,000 rows.
func BenchmarkProfileCSV100k(b *testing.B) {
	path := writeBenchRoster(b, 100_000)
	b.ReportAllocs()
	var peak uint64
	var ms runtime.MemStats
	b.ResetTimer()
	start := measure.CPUTime()
	for i := 0; i < b.N; i++ {
		c := profile.NewCounter(Words(nil))
		rows := 0
		sink := Sink{Employee: func(e *profile.Employee) {
			c.Add(e)
			if rows++; rows%10_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}, Bad: c.Unreadable}
		if err := Read(path, nil, xlsx.Limits{}, sink); err != nil {
			b.Fatal(err)
		}
		if p := c.Profile(); p.Classified != 100_000 {
			b.Fatalf("%d classified", p.Classified)
		}
	}
	b.ReportMetric((measure.CPUTime()-start).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
}
