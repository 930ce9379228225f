//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package statestore

import "golang.org/x/sys/unix"

// canPollSockets says that socketReadable can tell.
const canPollSockets = true

// socketReadable reports whether the socket fd has something to read or
// was closed by its peer (or is in error), without waiting.
func socketReadable(fd uintptr) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n != 0
	}
}
