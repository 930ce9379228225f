// Package pacetest gives tests a fake pace.Clock: its waits are recorded
// and pass its time at once, so that a test of a waiting loop checks every
// wait and deadline without real time passing.
package pacetest

import (
	"context"
	"sync"
	"time"

	"github.com/eepipe/eepipe/pace"
)

// Clock is a fake clock. Its Sleep records the wait, moves the time on by
// it and calls OnSleep (when set), without waiting; it returns ctx's error
// when ctx has ended. It is safe for use by several goroutines.
type Clock struct {
	// OnSleep, when set, is called after each wait has passed, with the
	// wait's number (1 for the first) and length: a test acts there (a
	// holder releases its lock, another run writes its record) at a
	// known point of the loop. Set it before the clock is used.
	OnSleep func(n int, d time.Duration)

	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// New returns a fake clock reading t0, which must not be the zero Time.
func New(t0 time.Time) *Clock { return &Clock{now: t0} }

// Clock returns the pace.Clock of c, for the type under test.
func (c *Clock) Clock() pace.Clock { return pace.Clock{Now: c.Now, Sleep: c.Sleep} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and moves the clock on by it (a negative d by nothing).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(max(d, 0))
	n := len(c.slept)
	c.mu.Unlock()
	if c.OnSleep != nil {
		c.OnSleep(n, d)
	}
	return ctx.Err()
}

// Slept returns the waits so far, in order.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// Total returns the time the waits so far have passed (a negative wait
// passes none).
func (c *Clock) Total() time.Duration {
	var t time.Duration
	for _, d := range c.Slept() {
		t += max(d, 0)
	}
	return t
}
