package pace

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

var errBusy = errors.New("busy")

// clock is a fake clock whose sleeps advance it and are recorded.
type clock struct {
	now   time.Time
	slept []time.Duration
}

func (c *clock) Now() time.Time { return c.now }

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func TestCall(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		pacer    Pacer
		verdicts []Verdict // one per attempt; the last repeats
		attempts int
		slept    string
		err      string // want: "" success, or the error's text, or a type
	}{
		{"success at once", Pacer{}, []Verdict{Done(nil)}, 1, "[]", ""},
		{"retried until success", Pacer{Schedule: func() Schedule { return Exponential(time.Second, 3*time.Second) }},
			[]Verdict{Again(errBusy), Again(errBusy), Again(errBusy), Again(errBusy), Done(nil)}, 5, "[1s 2s 3s 3s]", ""},
		{"attempts bounded", Pacer{MaxAttempts: 3, Schedule: func() Schedule { return Fixed(time.Second) }},
			[]Verdict{Again(errBusy)}, 3, "[1s 1s]", "busy"},
		{"not retryable ends the call", Pacer{MaxAttempts: 5}, []Verdict{Done(errBusy)}, 1, "[]", "busy"},
		{"not repeatable is never repeated", Pacer{MaxAttempts: 5},
			[]Verdict{{Err: errBusy, Retryable: true, Repeatable: false, RetryAfter: time.Second, HasRetryAfter: true}}, 1, "[]", "busy"},
		{"retry-after honoured", Pacer{MaxAttempts: 2, Schedule: func() Schedule { return Fixed(time.Second) }},
			[]Verdict{{Err: errBusy, Retryable: true, Repeatable: true, RetryAfter: 7 * time.Second, HasRetryAfter: true}, Done(nil)}, 2, "[7s]", ""},
		{"retry-after zero honoured", Pacer{MaxAttempts: 2, Schedule: func() Schedule { return Fixed(time.Second) }},
			[]Verdict{{Err: errBusy, Retryable: true, Repeatable: true, HasRetryAfter: true}, Done(nil)}, 2, "[0s]", ""},
		{"retry-after capped", Pacer{MaxAttempts: 2, MaxRetryAfter: 5 * time.Minute},
			[]Verdict{{Err: errBusy, Retryable: true, Repeatable: true, RetryAfter: 24 * time.Hour, HasRetryAfter: true}, Done(nil)}, 2, "[5m0s]", ""},
		{"retry-after cut to the deadline", Pacer{Deadline: t0.Add(10 * time.Second), MaxRetryAfter: time.Hour},
			[]Verdict{{Err: errBusy, Retryable: true, Repeatable: true, RetryAfter: time.Hour, HasRetryAfter: true}}, 2, "[10s]", "out of time"},
		{"deadline ends the polling exactly", Pacer{Deadline: t0.Add(10 * time.Second), Schedule: func() Schedule { return Exponential(time.Second, 3*time.Second) }},
			[]Verdict{Again(errBusy)}, 6, "[1s 2s 3s 3s 1s]", "out of time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{now: t0}
			p := tt.pacer
			p.Now, p.Sleep = c.Now, c.Sleep
			var n int
			err := p.Call(context.Background(), func(a Attempt) Verdict {
				n++
				if a.N != n {
					t.Fatalf("attempt %d numbered %d", n, a.N)
				}
				if a.Last != (p.MaxAttempts > 0 && n == p.MaxAttempts) {
					t.Errorf("attempt %d: Last = %v", n, a.Last)
				}
				return tt.verdicts[min(n, len(tt.verdicts))-1]
			})
			if n != tt.attempts {
				t.Errorf("%d attempts, want %d", n, tt.attempts)
			}
			if fmt.Sprint(c.slept) != tt.slept {
				t.Errorf("slept %v, want %s", c.slept, tt.slept)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.err == "out of time":
				var oot *OutOfTime
				if !errors.As(err, &oot) || !errors.Is(err, errBusy) || oot.Attempts != n || !oot.At.Equal(p.Deadline) {
					t.Errorf("err = %#v, want *OutOfTime after %d attempts at the deadline", err, n)
				}
			case tt.err != "" && (err == nil || err.Error() != tt.err):
				t.Errorf("err = %v, want %s", err, tt.err)
			}
		})
	}
}

// TestCallCancelledDuringWait uses the real wait: the server asks for an
// hour, the context (the call's, or the WaitCtx while the call's lives on)
// ends once the wait has started, and the call returns at once with an
// *Interrupted carrying the last error and the context's.
func TestCallCancelledDuringWait(t *testing.T) {
	for _, viaWaitCtx := range []bool{false, true} {
		t.Run(fmt.Sprint("WaitCtx=", viaWaitCtx), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := make(chan struct{})
			p := Pacer{MaxRetryAfter: 2 * time.Hour, Sleep: func(ctx context.Context, d time.Duration) error {
				close(started)
				return Sleep(ctx, d)
			}}
			callCtx := ctx
			if viaWaitCtx {
				p.WaitCtx = ctx
				callCtx = context.WithoutCancel(ctx)
			}
			go func() { <-started; cancel() }()
			attempts := 0
			start := time.Now()
			err := p.Call(callCtx, func(Attempt) Verdict {
				attempts++
				return Verdict{Err: errBusy, Retryable: true, Repeatable: true, RetryAfter: time.Hour, HasRetryAfter: true}
			})
			if el := time.Since(start); el > 10*time.Second {
				t.Fatalf("the cancelled wait took %v", el)
			}
			var ie *Interrupted
			if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || !errors.Is(err, errBusy) {
				t.Fatalf("err = %v, want *Interrupted wrapping busy and context.Canceled", err)
			}
			if attempts != 1 || ie.Attempts != 1 || ie.Wait != time.Hour {
				t.Errorf("attempts %d, %+v", attempts, ie)
			}
		})
	}
}

// TestCallFreshSchedule: each call of one Pacer starts its schedule anew.
func TestCallFreshSchedule(t *testing.T) {
	c := &clock{}
	p := Pacer{MaxAttempts: 3, Sleep: c.Sleep, Schedule: func() Schedule { return Exponential(time.Second, time.Minute) }}
	for range 2 {
		_ = p.Call(context.Background(), func(Attempt) Verdict { return Again(errBusy) })
	}
	if fmt.Sprint(c.slept) != "[1s 2s 1s 2s]" {
		t.Errorf("slept %v, want each call from the first wait", c.slept)
	}
}

// TestCallEndedContextStartsNoAttempt: a context that ends while an
// attempt runs stops the call before the next one, even with no wait.
func TestCallEndedContextStartsNoAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	err := Pacer{}.Call(ctx, func(Attempt) Verdict {
		attempts++
		cancel()
		return Again(errBusy)
	})
	var ie *Interrupted
	if !errors.As(err, &ie) || attempts != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("attempts %d, err %v", attempts, err)
	}
}

// TestCallWithinDeadline: a wait that would pass the context's deadline
// is not started, and the last error is returned as is.
func TestCallWithinDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	var skipped time.Duration
	p := Pacer{WithinDeadline: true, MaxRetryAfter: 3 * time.Hour,
		Sleep:      func(context.Context, time.Duration) error { t.Fatal("slept"); return nil },
		OnDeadline: func(_ Attempt, d time.Duration, _ error) { skipped = d }}
	err := p.Call(ctx, func(Attempt) Verdict {
		return Verdict{Err: errBusy, Retryable: true, Repeatable: true, RetryAfter: 2 * time.Hour, HasRetryAfter: true}
	})
	if err != errBusy || skipped != 2*time.Hour {
		t.Fatalf("err %v, skipped wait %v", err, skipped)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("Sleep on an ended context = %v after %v", err, time.Since(start))
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) on an ended context = %v", err)
	}
}
