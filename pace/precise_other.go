//go:build !linux

package pace

// newPreciseReleaser returns nil: without a precise timer, a wait
// ends when its Go timer fires.
func newPreciseReleaser() *releaser { return nil }
