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
		{0, 16 * mb, MaxPercent},           // nothing live yet: the default
		{4 * mb, 16 * mb, MaxPercent},      // a small heap: no less often than by default
		{16 * mb, 16 * mb, 100},            // headroom = live
		{32 * mb, 16 * mb, 50},             // half
		{75 * mb, 16 * mb, 21},             // 21.33..., rounded down
		{160 * mb, 16 * mb, 10},            // at the floor
		{1 << 40, 16 * mb, MinPercent},     // a huge heap: the floor, not 0
		{3 * mb, 1 << 62, MaxPercent},      // no overflow
		{1<<64 - 1, 1<<64 - 1, MaxPercent}, // extremes
		{100 * mb, 0, MinPercent},          // no headroom: the floor
		{64*mb + 1, 16 * mb, 24},           // 24.99...: rounded down
		{200 * mb / 3, 16 * mb, 24},        // 24.00...
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
	// A live heap of 64 MiB with a headroom of 16 MiB: 25%.
	held := make([]*[1 << 20]byte, 64)
	for i := range held {
		held[i] = new([1 << 20]byte)
	}
	stop, active := Start(func(string) string { return "" }, 16<<20)
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
		if got = gogc(t); got >= 24 && got <= 25 {
			break
		}
	}
	runtime.KeepAlive(held)
	if got < 24 || got > 25 {
		t.Errorf("GC percent %d with 64 MiB live and 16 MiB headroom, want 24 or 25", got)
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
