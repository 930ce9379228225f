package pace

import (
	"context"
	"fmt"
	"time"
)

// Attempt identifies one attempt of a call.
type Attempt struct {
	N    int  // 1 for the first attempt
	Last bool // no further attempt will be made, whatever the outcome (Pacer.MaxAttempts)
}

// Verdict is the outcome of one attempt, as its caller judges it.
type Verdict struct {
	// Err is the attempt's error; nil ends the call with success.
	Err error
	// Retryable: the failure is worth another attempt (a busy or
	// unreachable service, a conflict that will pass).
	Retryable bool
	// Repeatable: the caller declares the attempt safe to make again (a
	// request that cannot have been applied, or one whose repeat does no
	// harm). An attempt that is not Repeatable is never repeated, even
	// when Retryable.
	Repeatable bool
	// RetryAfter is the wait the server asked for; it replaces the
	// schedule's wait when HasRetryAfter (capped at Pacer.MaxRetryAfter).
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Done is the verdict of an attempt that ends the call: err (nil for
// success) is returned as is.
func Done(err error) Verdict { return Verdict{Err: err} }

// Again is the verdict of an attempt that failed with err and is safe and
// worth repeating.
func Again(err error) Verdict { return Verdict{Err: err, Retryable: true, Repeatable: true} }

// Pacer runs the attempts of a call and the waits between them. The zero
// Pacer repeats at once, without limit, while attempts ask to; a Pacer is
// a value, set up per call or shared (it holds no state of its own).
type Pacer struct {
	// Schedule makes the waits of one call (nil: Fixed(0)).
	Schedule func() Schedule
	// MaxAttempts bounds the attempts of a call, the first included
	// (0: no bound).
	MaxAttempts int
	// MaxRetryAfter caps a server's Retry-After (0: no cap).
	MaxRetryAfter time.Duration
	// Deadline, when not zero, bounds the waiting: no attempt is repeated
	// once Now reaches it (the call returns an *OutOfTime), and a wait is
	// cut so as to end at it.
	Deadline time.Time
	// WithinDeadline: a wait that would pass the deadline of the call's
	// context (by the real clock, as the context measures it) is not
	// started; the last attempt's error is returned as is.
	WithinDeadline bool
	// WaitCtx, when set, also ends the waits and the decision to make
	// another attempt (the attempts themselves run under the call's
	// context; see Call).
	WaitCtx context.Context
	// Sleep waits d, returning early with ctx's error when ctx ends
	// (nil: Sleep, the real wait). Tests inject their own.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock of Deadline (nil: time.Now).
	Now func() time.Time
	// OnWait is called before each wait, with the attempt that failed,
	// the wait and its error. OnDeadline is called instead when the wait is
	// not started because it would pass the context's deadline.
	OnWait, OnDeadline func(a Attempt, wait time.Duration, err error)
}

// Interrupted is the error of a call whose waiting was cut short: after a
// retryable failure, the wait before the next attempt ended (or was not
// started) because the call's context or Pacer.WaitCtx ended. No further
// attempt was made. Unwrap returns the last attempt's error and the
// context's, so errors.Is(err, context.Canceled) holds.
type Interrupted struct {
	Attempts int           // attempts made
	Wait     time.Duration // the wait that was cut short
	Last     error         // the last attempt's error
	Cause    error         // the context's error
}

// Error returns the last attempt's error and why it was not retried.
func (e *Interrupted) Error() string {
	return fmt.Sprintf("%v; not retried: %v", e.Last, e.Cause)
}

// Unwrap returns the last attempt's error and the context's error.
func (e *Interrupted) Unwrap() []error { return []error{e.Last, e.Cause} }

// OutOfTime is the error of a call that reached Pacer.Deadline with the
// last attempt still failing.
type OutOfTime struct {
	Attempts int       // attempts made
	At       time.Time // when the deadline was found reached (Pacer.Now)
	Last     error     // the last attempt's error
}

// Error returns the last attempt's error and why it was not retried.
func (e *OutOfTime) Error() string {
	return fmt.Sprintf("%v; not retried: out of time", e.Last)
}

// Unwrap returns the last attempt's error.
func (e *OutOfTime) Unwrap() error { return e.Last }

// Call runs attempt until it succeeds or ends the call. After a failed
// attempt it returns that attempt's error as is when the attempt is not
// Retryable, not Repeatable or the Last, or (WithinDeadline) when the wait
// would pass ctx's deadline; an *OutOfTime when Deadline is reached; an
// *Interrupted when ctx or WaitCtx ends before the next attempt. Otherwise
// it waits, the server's Retry-After (capped) or the schedule's wait, and
// attempts again.
func (p Pacer) Call(ctx context.Context, attempt func(Attempt) Verdict) error {
	var (
		sched Schedule // made at the first failure
		wait  time.Duration
	)
	for n := 1; ; n++ {
		a := Attempt{N: n, Last: p.MaxAttempts > 0 && n >= p.MaxAttempts}
		v := attempt(a)
		if v.Err == nil {
			return nil
		}
		if a.Last || !v.Retryable || !v.Repeatable {
			return v.Err
		}
		if !p.Deadline.IsZero() {
			now := p.now()
			if !now.Before(p.Deadline) {
				return &OutOfTime{Attempts: n, At: now, Last: v.Err}
			}
			wait = p.Deadline.Sub(now)
		} else {
			wait = maxDuration
		}
		if sched == nil {
			sched = p.schedule()
		}
		d := sched.NextBackOff()
		if v.HasRetryAfter {
			d = v.RetryAfter
			if p.MaxRetryAfter > 0 {
				d = min(d, p.MaxRetryAfter)
			}
		}
		wait = max(min(d, wait), 0)
		if dl, ok := ctx.Deadline(); ok && p.WithinDeadline && time.Until(dl) < wait {
			if p.OnDeadline != nil {
				p.OnDeadline(a, wait, v.Err)
			}
			return v.Err
		}
		if p.OnWait != nil {
			p.OnWait(a, wait, v.Err)
		}
		if err := p.wait(ctx, wait); err != nil {
			return &Interrupted{Attempts: n, Wait: wait, Last: v.Err, Cause: err}
		}
	}
}

const maxDuration = time.Duration(1<<63 - 1)

func (p Pacer) schedule() Schedule {
	if p.Schedule == nil {
		return Fixed(0)
	}
	return p.Schedule()
}

func (p Pacer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// wait waits d until ctx or WaitCtx ends, and returns the error of the
// one that ended (WaitCtx's first): then, or when either has ended
// already, no further attempt is made.
func (p Pacer) wait(ctx context.Context, d time.Duration) error {
	sleep := p.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	w := p.WaitCtx
	if w == nil || w == ctx {
		if err := sleep(ctx, d); err != nil {
			return err
		}
		return ctx.Err()
	}
	if err := w.Err(); err != nil {
		return err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(w, func() { cancel(w.Err()) })
	defer stop()
	if err := sleep(sctx, d); err != nil {
		if werr := w.Err(); werr != nil {
			return werr
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.Err()
}

// Sleep waits for d or until ctx ends, whichever is first; it returns
// ctx.Err() in the second case (and at once when d <= 0 and ctx has
// ended). It is the one context-aware wait of eepipe.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
