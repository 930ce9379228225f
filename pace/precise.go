package pace

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// SleepUntil returns once due has passed, or with ctx's error when ctx
// ends first. A Go timer alone wakes late: while the process is idle the
// runtime sleeps in whole milliseconds, so a 20 ms wait ended 0.6 ms late
// on the median (the sandbox's latency, which every measurement against
// it counted as the client's: docs/performance.md, "Applying"). Where the
// system has a precise timer (Linux: a timerfd, which the runtime's
// poller waits on), a releaser wakes the waits at their due time as well;
// a wait ends at whichever comes first, and never before due.
func SleepUntil(ctx context.Context, due time.Time) error {
	wait := time.Until(due)
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var precise <-chan struct{}
	if r := sharedReleaser(); r != nil {
		precise = r.at(due)
	}
	select {
	case <-t.C:
	case <-precise:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// releaser closes each channel it handed out once its due time has
// passed, woken by a precise timer (arm) that it sets for the earliest.
type releaser struct {
	// arm sets the precise timer to fire after d (d > 0).
	arm func(d time.Duration) error

	mu    sync.Mutex
	due   dueHeap
	armed time.Time // the due time the timer is set for; zero when unset
}

// at returns a channel closed once due has passed (nil when the timer
// could not be set: the caller's own timer decides).
func (r *releaser) at(due time.Time) <-chan struct{} {
	ch := make(chan struct{})
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.armed.IsZero() || due.Before(r.armed) {
		if r.arm(max(time.Until(due), time.Nanosecond)) != nil {
			return nil
		}
		r.armed = due
	}
	heap.Push(&r.due, dueWait{due, ch})
	return ch
}

// fired releases the waits due by now and sets the timer for the next
// one. The timer's goroutine calls it each time the timer fires.
func (r *releaser) fired() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for len(r.due) > 0 && !r.due[0].due.After(now) {
		close(heap.Pop(&r.due).(dueWait).ch)
	}
	r.armed = time.Time{}
	for len(r.due) > 0 {
		next := r.due[0].due
		if r.arm(max(time.Until(next), time.Nanosecond)) == nil {
			r.armed = next
			return
		}
		// The timer cannot be set: the waiters' own timers release them.
		close(heap.Pop(&r.due).(dueWait).ch)
	}
}

// stop releases every wait and makes the releaser hand out no
// more channels: the waiters' own timers decide from then on.
func (r *releaser) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arm = func(time.Duration) error { return errReleaserStopped }
	for len(r.due) > 0 {
		close(heap.Pop(&r.due).(dueWait).ch)
	}
	r.armed = time.Time{}
}

var errReleaserStopped = errors.New("the precise timer stopped")

var (
	releaserOnce sync.Once
	theReleaser  *releaser
)

// sharedReleaser returns the process's releaser, started on first use;
// nil where there is no precise timer.
func sharedReleaser() *releaser {
	releaserOnce.Do(func() { theReleaser = newPreciseReleaser() })
	return theReleaser
}

type dueWait struct {
	due time.Time
	ch  chan struct{}
}

// dueHeap orders waits by due time (container/heap).
type dueHeap []dueWait

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueWait)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = dueWait{}
	*h = old[:len(old)-1]
	return x
}
