package pace

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// newPreciseReleaser returns a releaser woken by a timerfd (nanosecond
// resolution), read by a goroutine of its own through the runtime's
// poller; nil when the timerfd cannot be made.
func newPreciseReleaser() *releaser {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "pace-timerfd")
	r := &releaser{arm: func(d time.Duration) error {
		return unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}, nil)
	}}
	go func() {
		buf := make([]byte, 8) // the count of expirations
		for {
			if _, err := f.Read(buf); err != nil {
				r.stop()
				return
			}
			r.fired()
		}
	}()
	return r
}
