package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWaitContextStopsRetry: a call whose wait context ends while it waits
// out a Retry-After (or before it would wait) returns at once, makes no
// further attempt, and its error keeps what the service said (errors.As
// *APIError) and the interruption (errors.Is context.Canceled), without
// claiming the service is unavailable.
func TestWaitContextStopsRetry(t *testing.T) {
	tests := []struct {
		name       string
		answer     func(http.ResponseWriter, *http.Request, []byte)
		post       bool
		preCancel  bool // the wait context ends before the call
		wantStatus int
		notApplied bool
	}{
		{name: "503 Retry-After 30, cancelled while waiting", answer: status(503, "Retry-After", "30"), wantStatus: 503, notApplied: true},
		{name: "503, cancelled before the call", answer: status(503, "Retry-After", "30"), preCancel: true, wantStatus: 503, notApplied: true},
		{name: "429 to a POST, cancelled while waiting", answer: status(429, "Retry-After", "30"), post: true, wantStatus: 429, notApplied: true},
		{name: "502 may have been applied", answer: status(502, "Retry-After", "30"), wantStatus: 502, notApplied: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, tt.answer)
			waiting := make(chan time.Duration, 1)
			fx.c.sleep = func(ctx context.Context, d time.Duration) error {
				select {
				case waiting <- d:
				default:
				}
				return sleepCtx(ctx, d) // the real wait: it must end by the cancel
			}
			waitCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.preCancel {
				cancel()
			}
			// The call's own context is never cancelled, as the pipeline's
			// requests run.
			ctx := WithWaitContext(context.Background(), waitCtx)
			done := make(chan error, 1)
			go func() {
				var err error
				if tt.post {
					_, err = fx.c.CreatePlan(ctx, PlanCreate{Name: "X", StartDate: "2025-09-01", EndDate: "2026-08-31"})
				} else {
					err = fx.c.PatchTarget(ctx, 1, 2, 3, map[string]int64{"male_african": 1})
				}
				done <- err
			}()
			if !tt.preCancel {
				if d := receive(t, "the wait", waiting); d != 30*time.Second {
					t.Errorf("waiting %v, want the Retry-After 30s", d)
				}
				cancel()
			}
			err := receive(t, "the call's return", done)

			var ae *APIError
			if !errors.As(err, &ae) || ae.StatusCode != tt.wantStatus {
				t.Fatalf("err = %v, want an *APIError %d", err, tt.wantStatus)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want it to match context.Canceled", err)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("err = %v matches ErrUnavailable; the retries did not run out", err)
			}
			var ie *InterruptedError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %T %v, want an *InterruptedError", err, err)
			}
			if ie.NotApplied() != tt.notApplied {
				t.Errorf("NotApplied() = %v, want %v", ie.NotApplied(), tt.notApplied)
			}
			if ie.Attempts != 1 {
				t.Errorf("Attempts = %d, want 1", ie.Attempts)
			}
			if !strings.HasSuffix(err.Error(), "; not retried: interrupted") || !strings.Contains(err.Error(), "retry after 30s") {
				t.Errorf("err = %q, want the answer and \"; not retried: interrupted\"", err)
			}
			if n := len(fx.ts.requests()); n != 1 {
				t.Errorf("%d requests, want 1 (no attempt after the cancel)", n)
			}
			if tt.preCancel {
				select {
				case d := <-waiting:
					t.Errorf("waited %v after the wait context had ended", d)
				default:
				}
			}
			fx.ts.requireAuthOK()
		})
	}
}

// TestWaitContextLeavesAttemptInFlight: a wait context that ends while an
// attempt is with the server does not cut that attempt: its answer is
// returned.
func TestWaitContextLeavesAttemptInFlight(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	waitCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- fx.c.PatchTarget(WithWaitContext(context.Background(), waitCtx), 1, 2, 3, map[string]int64{"male_african": 1})
	}()
	receive(t, "the request at the server", arrived)
	cancel()
	close(release)
	if err := receive(t, "the call's return", done); err != nil {
		t.Fatalf("err = %v, want the in-flight attempt's 204", err)
	}
	if n := len(fx.ts.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
