package pace

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestSleepUntilNeverEarly: a wait never ends before its due time,
// whichever timer ends it, for waits due in any order.
func TestSleepUntilNeverEarly(t *testing.T) {
	var wg sync.WaitGroup
	early := make(chan time.Duration, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due := time.Now().Add(time.Duration(64-i) * 97 * time.Microsecond)
			if err := SleepUntil(context.Background(), due); err != nil {
				t.Error(err)
			}
			if now := time.Now(); now.Before(due) {
				early <- due.Sub(now)
			}
		}()
	}
	wg.Wait()
	close(early)
	for d := range early {
		t.Errorf("a wait ended %s before it was due", d)
	}
}

// TestSleepUntilCancelled: a context that ends ends the wait with its
// error.
func TestSleepUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SleepUntil(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestReleaserFired: a firing releases the waits due by then, in due
// order, sets the timer for the next one, and leaves the later ones.
func TestReleaserFired(t *testing.T) {
	var armed []time.Duration
	r := &releaser{arm: func(d time.Duration) error { armed = append(armed, d); return nil }}
	now := time.Now()
	late := r.at(now.Add(time.Hour))
	past1 := r.at(now.Add(-2 * time.Millisecond))
	past2 := r.at(now.Add(-time.Millisecond))
	if len(armed) != 2 {
		t.Fatalf("timer set %d times, want 2 (the first wait, then the earlier one)", len(armed))
	}
	r.fired()
	for i, ch := range []<-chan struct{}{past1, past2} {
		select {
		case <-ch:
		default:
			t.Errorf("wait %d, due already, was not released", i)
		}
	}
	select {
	case <-late:
		t.Error("the wait due in an hour was released")
	default:
	}
	if len(armed) != 3 || armed[2] < 59*time.Minute {
		t.Errorf("timer settings %v: want the last one for the wait due in an hour", armed)
	}
	r.stop()
	select {
	case <-late:
	default:
		t.Error("stop left a wait waiting")
	}
	if r.at(now.Add(time.Hour)) != nil {
		t.Error("a stopped releaser handed out a channel")
	}
}
