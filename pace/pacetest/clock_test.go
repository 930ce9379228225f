package pacetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(t0)
	var seen []string
	c.OnSleep = func(n int, d time.Duration) { seen = append(seen, fmt.Sprint(n, ":", d, "@", c.Now().Sub(t0))) }
	ctx := context.Background()
	for _, d := range []time.Duration{time.Second, -time.Second, 2 * time.Second} {
		if err := c.Clock().Sleep(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Clock().Now().Sub(t0); got != 3*time.Second || c.Total() != 3*time.Second {
		t.Errorf("now t0+%v, total %v; want t0+3s, 3s", got, c.Total())
	}
	if fmt.Sprint(c.Slept()) != "[1s -1s 2s]" || fmt.Sprint(seen) != "[1:1s@1s 2:-1s@1s 3:2s@3s]" {
		t.Errorf("slept %v, seen %v", c.Slept(), seen)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Sleep(cctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on an ended context = %v", err)
	}
}
