//go:build !unix

package apiclient

import "testing"

// refusedAddr returns a 127.0.0.1 address nothing listened on a moment ago
// (see the unix version, which holds the port).
func refusedAddr(t *testing.T) string { return closedAddr(t) }
