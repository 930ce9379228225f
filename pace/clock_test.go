package pace

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestClockPoll: a poll attempts at once, then every interval, the last
// wait cut to end at the deadline, where one more attempt is made; a
// deadline already passed allows one attempt; an attempt that succeeds
// ends the poll.
func TestClockPoll(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		within    time.Duration
		succeedAt int // 0: never
		attempts  int
		slept     string
	}{
		{"deadline ends the poll", 500 * time.Millisecond, 0, 4, "[200ms 200ms 100ms]"},
		{"deadline on a wait's end", 400 * time.Millisecond, 0, 3, "[200ms 200ms]"},
		{"no time: one attempt", 0, 0, 1, "[]"},
		{"a past deadline: one attempt", -time.Second, 0, 1, "[]"},
		{"success ends the poll", time.Hour, 3, 3, "[200ms 200ms]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{now: t0}
			cl := Clock{Now: c.Now, Sleep: c.Sleep}
			n := 0
			err := cl.Poll(200*time.Millisecond, cl.Time().Add(tt.within)).Call(context.Background(), func(Attempt) Verdict {
				n++
				if n == tt.succeedAt {
					return Done(nil)
				}
				return Again(errBusy)
			})
			if n != tt.attempts || fmt.Sprint(c.slept) != tt.slept {
				t.Errorf("%d attempts after waits %v, want %d after %s", n, c.slept, tt.attempts, tt.slept)
			}
			var oot *OutOfTime
			switch {
			case tt.succeedAt > 0 && err != nil:
				t.Errorf("err = %v", err)
			case tt.succeedAt == 0 && (!errors.As(err, &oot) || !errors.Is(err, errBusy) || !oot.At.Equal(t0.Add(max(tt.within, 0)))):
				t.Errorf("err = %#v, want *OutOfTime at the deadline", err)
			}
		})
	}
}

// TestClockDefaults: the zero Clock is the real one.
func TestClockDefaults(t *testing.T) {
	before := time.Now()
	if now := (Clock{}).Time(); now.Before(before) || time.Since(now) > time.Minute {
		t.Errorf("Clock{}.Time() = %v, want about %v", now, before)
	}
	p := Clock{}.Poll(time.Millisecond, time.Now().Add(time.Hour))
	if p.Now != nil || p.Sleep != nil {
		t.Error("the zero Clock's poll does not use the real clock")
	}
}
