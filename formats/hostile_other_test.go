//go:build !unix

package formats

import "os"

// hostilePeakRSS is unknown (0) where getrusage does not exist.
func hostilePeakRSS(*os.ProcessState) int64 { return 0 }
