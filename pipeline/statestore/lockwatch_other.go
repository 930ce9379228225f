//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package statestore

// canPollSockets says that socketReadable cannot tell here: a lock's
// session is probed before every write.
const canPollSockets = false

// socketReadable is not called here (quietSocket gives no test without
// canPollSockets); it answers as a socket with something to read would.
func socketReadable(uintptr) bool { return true }
