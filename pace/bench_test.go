package pace

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCall measures the pacer's own cost: a call of five attempts
// whose four waits are recorded, not slept (jittered exponential schedule).
func BenchmarkCall(b *testing.B) {
	sleep := func(context.Context, time.Duration) error { return nil }
	p := Pacer{MaxAttempts: 5, Sleep: sleep, MaxRetryAfter: time.Minute,
		Schedule: func() Schedule { return Jittered(Exponential(250*time.Millisecond, 20*time.Second), FullJitter) }}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Call(ctx, func(a Attempt) Verdict {
			if a.N == 5 {
				return Done(nil)
			}
			return Again(errBusy)
		})
	}
}
