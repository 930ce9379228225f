package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, headroom uint64
		want           int
	}{
		{0, 32 * mb, MaxPercent},           // nothing live yet: the default
		{4 * mb, 32 * mb, MaxPercent},      // a small heap: no less often than by default
		{32 * mb, 32 * mb, 100},            // headroom = live
		{40 * mb, 32 * mb, 80},             // four fifths
		{75 * mb, 48 * mb, 64},             // 64.0
		{71 * mb, 48 * mb, 67},             // 67.6..., rounded down
		{64 * mb, 32 * mb, 50},             // at the floor
		{300 * mb, 32 * mb, MinPercent},    // a large heap: the floor, not 10
		{1 << 40, 32 * mb, MinPercent},     // a huge heap: the floor, not 0
		{3 * mb, 1 << 62, MaxPercent},      // no overflow
		{1<<64 - 1, 1<<64 - 1, MaxPercent}, // extremes
		{100 * mb, 0, MinPercent},          // no headroom: the floor
		{64*mb + 1, 48 * mb, 74},           // 74.99...: rounded down
	} {
		if got := Percent(tc.live, tc.headroom); got != tc.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tc.live, tc.headroom, got, tc.want)
		}
	}
}

// gogc reads the GC percent in force.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func TestStartInertWithEnvironment(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	for _, k := range Env {
		stop, active := Start(func(name string) string {
			if name == k {
				return "50"
			}
			return ""
		}, 1)
		if active {
			stop()
			t.Fatalf("%s set: the pacer started", k)
		}
		held := make([]byte, 8<<20)
		runtime.GC()
		runtime.GC()
		runtime.KeepAlive(held)
		if got := gogc(t); got != 77 {
			t.Errorf("%s set: GC percent %d, want the 77 in force", k, got)
		}
		stop()
		if got := gogc(t); got != 77 {
			t.Errorf("%s set: GC percent %d after stop, want 77", k, got)
		}
	}
}

func TestStartPacesAndStops(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.SetGCPercent(90)
	// A live heap of 64 MiB with a headroom of 48 MiB: 75% (74 with the
	// test binary's own few hundred kilobytes live).
	held := make([]*[1 << 20]byte, 64)
	for i := range held {
		held[i] = new([1 << 20]byte)
	}
	stop, active := Start(func(string) string { return "" }, 48<<20)
	if !active {
		t.Fatal("the pacer did not start with no GOGC or GOMEMLIMIT")
	}
	if _, again := Start(func(string) string { return "" }, 16<<20); again {
		t.Fatal("a second pacer started")
	}
	// Each collection runs the sentinel's cleanup, which sets the percent
	// for the live heap it found (cleanups run on their own goroutine, so
	// a few collections may pass before it has).
	var got int
	for range 200 {
		runtime.GC()
		runtime.Gosched()
		if got = gogc(t); got >= 73 && got <= 75 {
			break
		}
	}
	runtime.KeepAlive(held)
	if got < 73 || got > 75 {
		t.Errorf("GC percent %d with 64 MiB live and 48 MiB headroom, want 73 to 75", got)
	}
	held = nil
	// The live heap gone, the next collections go back to the default.
	for range 200 {
		runtime.GC()
		runtime.Gosched()
		if got = gogc(t); got == MaxPercent {
			break
		}
	}
	if got != MaxPercent {
		t.Errorf("GC percent %d with nothing live, want %d", got, MaxPercent)
	}
	stop()
	if got := gogc(t); got != 90 {
		t.Errorf("GC percent %d after stop, want the 90 of before", got)
	}
	if stop2, active := Start(func(string) string { return "" }, 16<<20); !active {
		t.Error("no pacer could start after stop")
	} else {
		stop2()
	}
}
