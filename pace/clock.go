package pace

import (
	"context"
	"time"
)

// Clock is the time a waiting loop runs on: Now reads it and Sleep spends
// it (nil: time.Now and Sleep, the real ones). A type that waits holds a
// Clock, so that its tests make the time pass without waiting for it
// (package pacetest has a fake one). A fake Now must not return the zero
// Time, which a Pacer's Deadline takes for "none".
type Clock struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Time returns the clock's now.
func (c Clock) Time() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Poll returns the Pacer of a poll on c: an attempt, then another every
// interval (Fixed) while the attempts ask to (Again), until deadline; an
// attempt that still fails then ends the call with an *OutOfTime. The
// last wait is cut so as to end at the deadline, where one more attempt
// is made; a deadline already passed allows the first attempt only.
func (c Clock) Poll(interval time.Duration, deadline time.Time) Pacer {
	return Pacer{
		Schedule: func() Schedule { return Fixed(interval) },
		Deadline: deadline,
		Now:      c.Now,
		Sleep:    c.Sleep,
	}
}
