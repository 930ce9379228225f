package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// waitCtxKey is the context key of WithWaitContext.
type waitCtxKey struct{}

// WithWaitContext returns a copy of ctx whose calls end their retries when
// waitCtx ends: the wait between two attempts stops at once, and no further
// attempt is started. The attempts themselves run under ctx, so a request
// already sent is finished and its outcome known even when waitCtx ends
// meanwhile. A caller that runs requests with context.WithoutCancel (to let
// them finish) passes its cancellable context here, so that Ctrl-C does not
// wait out a Retry-After. The call then returns an *InterruptedError.
func WithWaitContext(ctx, waitCtx context.Context) context.Context {
	return context.WithValue(ctx, waitCtxKey{}, waitCtx)
}

// waitContext returns the context that ends ctx's waits: the one given
// with WithWaitContext, or ctx itself.
func waitContext(ctx context.Context) context.Context {
	if w, ok := ctx.Value(waitCtxKey{}).(context.Context); ok && w != nil {
		return w
	}
	return ctx
}

// InterruptedError is a call whose retries were cut short: after a
// retryable failure, the wait before the next attempt ended (or was not
// started) because the context ended, the call's own or the one given with
// WithWaitContext. No further attempt was made.
//
// Unwrap returns the last attempt's error (an *APIError or a
// *TransportError: what the service said) and the context's error, so that
// errors.As finds the former and errors.Is(err, context.Canceled) holds.
// It does not match ErrUnavailable (the retries did not run out); it
// matches ErrUnclearOutcome only when the last attempt does.
type InterruptedError struct {
	Method, Path string
	Attempts     int           // attempts made
	Wait         time.Duration // the wait that was cut short
	Last         error         // the last attempt's error
	Cause        error         // the context's error

	refusedOnly bool // every attempt was refused before it could be applied
}

// Error returns the last attempt's error and why it was not retried.
func (e *InterruptedError) Error() string {
	why := "interrupted"
	switch {
	case errors.Is(e.Cause, context.Canceled):
	case errors.Is(e.Cause, context.DeadlineExceeded):
		why = "out of time"
	default:
		why = e.Cause.Error()
	}
	return fmt.Sprintf("%v; not retried: %s", e.Last, why)
}

// Unwrap returns the last attempt's error and the context's error.
func (e *InterruptedError) Unwrap() []error { return []error{e.Last, e.Cause} }

// NotApplied reports whether no attempt of the call can have been applied:
// every attempt was answered 429 or 503 (refused before anything was done)
// or failed before the request was written.
func (e *InterruptedError) NotApplied() bool { return e.refusedOnly }

// refusal reports whether one attempt's outcome means the request was not
// applied: a 429 or 503 answer, or no connection before it was written.
func refusal(status int, te *TransportError) bool {
	if te != nil {
		return !te.Sent
	}
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}
