package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultHeadroom is the heap growth allowed above the live heap between
// two collections, up to 64 MiB live (above, half the live heap: MinPercent).
// Reading a 500-sheet grid workbook, which makes much garbage, costs
// about 10% more CPU with it than by default; 16 MiB cost about 40%.
const DefaultHeadroom = 32 << 20

// MinPercent and MaxPercent bound the GC percent the pacer sets. A large
// heap is collected at most twice as often as by default: with a floor
// of 10, reconciling a 500-plan grid export with 5,000 cells marked (a few
// hundred MB live, much garbage; before the annotated copy was streamed)
// took 60% more CPU than by default (13 CPU-s against 8).
const (
	MinPercent = 50
	MaxPercent = 100
)

// Percent returns the GC percent (GOGC) that sets the next collection's
// heap goal at about live plus headroom bytes: headroom as a percentage
// of live, rounded down, within [MinPercent, MaxPercent]. (The runtime
// also counts goroutine stacks and globals with the live heap; they are
// small beside the heaps this matters for.)
func Percent(live, headroom uint64) int {
	if live == 0 {
		return MaxPercent
	}
	p := float64(headroom) * 100 / float64(live)
	switch {
	case p < MinPercent:
		return MinPercent
	case p > MaxPercent:
		return MaxPercent
	}
	return int(p)
}

// Env names the environment settings that turn the pacer off: the user
// has chosen how the collector runs.
var Env = []string{"GOGC", "GOMEMLIMIT"}

var (
	mu      sync.Mutex
	running *pacer
)

// pacer is the running pacer; mu guards stopped and the GC percent it sets.
type pacer struct {
	headroom uint64
	orig     int // the GC percent before Start, restored by stop
	last     int // the GC percent last set
	stopped  bool
	live     []metrics.Sample
}

// sentinel is allocated for one collection to find: its cleanup runs
// after the collection that finds it unreachable. (It holds a pointer,
// so that it is never combined with other small objects, which could
// keep it alive.)
type sentinel struct{ _ *byte }

// Start paces the collector of the process with the given headroom, in
// bytes, until stop is called; stop restores the GC percent of before.
// It does nothing (active is false, stop does nothing) when getenv gives
// a value for GOGC or GOMEMLIMIT, or when a pacer already runs.
func Start(getenv func(string) string, headroom uint64) (stop func(), active bool) {
	for _, k := range Env {
		if getenv(k) != "" {
			return func() {}, false
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if running != nil {
		return func() {}, false
	}
	p := &pacer{headroom: headroom, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.orig = debug.SetGCPercent(MaxPercent)
	p.last = MaxPercent
	running = p
	p.adjust()
	p.arm()
	return p.stop, true
}

// arm allocates the sentinel of the next collection.
func (p *pacer) arm() {
	runtime.AddCleanup(&sentinel{}, (*pacer).collected, p)
}

// collected runs after each collection: it sets the GC percent for the
// next one and arms the sentinel again.
func (p *pacer) collected() {
	mu.Lock()
	defer mu.Unlock()
	if p.stopped {
		return
	}
	p.adjust()
	p.arm()
}

// adjust sets the GC percent from the live heap of the last collection
// (mu held).
func (p *pacer) adjust() {
	metrics.Read(p.live)
	if p.live[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if pct := Percent(p.live[0].Value.Uint64(), p.headroom); pct != p.last {
		debug.SetGCPercent(pct)
		p.last = pct
	}
}

// stop ends pacing and restores the GC percent of before Start.
func (p *pacer) stop() {
	mu.Lock()
	defer mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	debug.SetGCPercent(p.orig)
	running = nil
}
