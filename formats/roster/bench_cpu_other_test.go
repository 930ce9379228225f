//go:build !unix

package roster

import "time"

// benchCPUTime is not measured on this platform.
func benchCPUTime() time.Duration { return 0 }
