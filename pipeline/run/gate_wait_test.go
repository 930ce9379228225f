package run

import (
	"context"
	"errors"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestGateWaitContext: a request runs on a context that the run's cancel
// does not end (its outcome must be known), and carries the run's context
// as its WaitContext, which the cancel does end (for the waits between
// attempts). Outside a run, WaitContext is the context itself.
func TestGateWaitContext(t *testing.T) {
	g := newGate(1)
	g.used = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := g.do(ctx, kindGet, false, nil, func(c context.Context) error {
		cancel() // Ctrl-C while the request is in flight
		if c.Err() != nil {
			t.Errorf("the request's context ended with the run's: %v", c.Err())
		}
		if w := pipeline.WaitContext(c); !errors.Is(w.Err(), context.Canceled) {
			t.Errorf("pipeline.WaitContext(request).Err() = %v, want context.Canceled", w.Err())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if pipeline.WaitContext(bg) != bg {
		t.Error("pipeline.WaitContext outside a run is not the context itself")
	}
}
