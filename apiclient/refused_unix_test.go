//go:build unix

package apiclient

import (
	"fmt"
	"syscall"
	"testing"
)

// refusedAddr returns a 127.0.0.1 address that refuses connections for the
// rest of the test: a socket holds the port bound without listening, so no
// other listener can take it and connecting gets ECONNREFUSED.
func refusedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in4.Port == 0 {
		t.Fatalf("getsockname: %#v", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
}
