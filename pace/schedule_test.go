package pace

import (
	"fmt"
	"testing"
	"time"
)

func TestScheduleBounds(t *testing.T) {
	tests := []struct {
		name string
		s    Schedule
		want string // the first waits
	}{
		{"exponential doubles to its cap", Exponential(time.Second, 5*time.Second), "[1s 2s 4s 5s 5s 5s]"},
		{"exponential cap below base keeps base first", Exponential(4*time.Second, time.Second), "[4s 1s 1s 1s 1s 1s]"},
		{"fixed polls", Fixed(3 * time.Second), "[3s 3s 3s 3s 3s 3s]"},
		{"fixed zero repeats at once", Fixed(0), "[0s 0s 0s 0s 0s 0s]"},
		{"jitter applied to each bound", Jittered(Exponential(time.Second, 4*time.Second), func(d time.Duration) time.Duration { return d / 2 }),
			"[500ms 1s 2s 2s 2s 2s]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			for range 6 {
				got = append(got, tt.s.NextBackOff())
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("waits %v, want %s", got, tt.want)
			}
		})
	}
}

// TestExponentialNoOverflow: hundreds of doublings stay at the cap.
func TestExponentialNoOverflow(t *testing.T) {
	s := Exponential(time.Second, time.Hour)
	var d time.Duration
	for range 500 {
		d = s.NextBackOff()
	}
	if d != time.Hour {
		t.Errorf("bound after 500 waits = %v", d)
	}
}

func TestFullJitterBounds(t *testing.T) {
	for _, bound := range []time.Duration{-time.Second, 0, 1, time.Millisecond, time.Second, 1 << 62} {
		for range 200 {
			d := FullJitter(bound)
			if d < 0 || d > max(bound, 0) {
				t.Fatalf("FullJitter(%v) = %v", bound, d)
			}
		}
	}
	s := Jittered(Exponential(time.Second, 8*time.Second), FullJitter)
	for i, b := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		if d := s.NextBackOff(); d < 0 || d > b {
			t.Errorf("wait %d = %v, want within [0, %v]", i+1, d, b)
		}
	}
}
