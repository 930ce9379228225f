package pace

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Schedule gives the waits of one call, in order: NextBackOff is called
// once before each repeat and returns the wait (or the bound of the wait,
// see Jittered). A Schedule holds the state of one call; a Pacer makes a
// fresh one for each call. backoff.BackOff values satisfy it.
type Schedule interface {
	NextBackOff() time.Duration
}

// Exponential returns the capped exponential schedule: base before the
// first repeat, doubling before each next one, never more than max (the
// schedule of backoff.ExponentialBackOff without its randomisation; wrap
// it in Jittered for jitter). As there, the first wait is base even when
// max is smaller.
func Exponential(base, max time.Duration) Schedule {
	return &backoff.ExponentialBackOff{InitialInterval: base, Multiplier: 2, MaxInterval: max}
}

// Jittered returns s with jitter applied to each of its waits: FullJitter
// makes each wait a random duration between 0 and the bound s gives.
func Jittered(s Schedule, jitter func(time.Duration) time.Duration) Schedule {
	return jittered{s, jitter}
}

type jittered struct {
	s      Schedule
	jitter func(time.Duration) time.Duration
}

func (j jittered) NextBackOff() time.Duration { return j.jitter(j.s.NextBackOff()) }

// FullJitter returns a random duration in [0, d] (0 when d <= 0): the
// "full jitter" that spreads the retries of many clients.
func FullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// Fixed is the polling schedule: the same wait before every repeat.
// Fixed(0) repeats at once.
type Fixed time.Duration

// NextBackOff returns f.
func (f Fixed) NextBackOff() time.Duration { return time.Duration(f) }
