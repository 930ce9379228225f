package measure

import "testing"

// Exports starts measuring a benchmark's peak heap and CPU time; the
// returned function reports them with the wall time per export.
func Exports(b *testing.B) func() {
	peak := PeakHeap()
	cpu0 := CPUTime()
	b.ReportAllocs()
	return func() {
		b.ReportMetric(peak(), "peak-heap-MB")
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/export")
		if cpu := CPUTime() - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/export")
		}
	}
}
