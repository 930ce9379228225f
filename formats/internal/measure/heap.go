package measure

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// PeakHeap samples the live heap every 5 ms until the returned
// function is called, which returns the highest value seen in MB.
func PeakHeap() func() float64 {
	runtime.GC()
	return Peak("/memory/classes/heap/objects:bytes", false)
}

// Peak samples the runtime metric name (a number of bytes, such as
// /gc/heap/live:bytes) every 5 ms until the returned function is called,
// which returns the highest value seen in MB; with settle it collects and
// samples once more before it returns (the live heap of the work's end).
func Peak(name string, settle bool) func() float64 {
	var peak atomic.Uint64
	sample := func() {
		s := []metrics.Sample{{Name: name}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > peak.Load() {
			peak.Store(s[0].Value.Uint64())
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(stop)
		wg.Wait()
		if settle {
			runtime.GC()
			sample()
		}
		return float64(peak.Load()) / (1 << 20)
	}
}
