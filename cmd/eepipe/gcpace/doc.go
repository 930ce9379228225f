// Package gcpace paces the Go garbage collector so that the heap grows at
// most a fixed budget (the headroom) above the live heap, instead of the
// runtime's default of as much again as the live heap (GOGC=100). With
// the default, a command holding a large model also lets garbage pile up
// in proportion to it; with a fixed headroom the memory beyond the model
// stays the same whatever the model's size.
//
// After each collection a sentinel's cleanup reads the live heap
// (runtime/metrics /gc/heap/live:bytes) and sets the GC percent
// (debug.SetGCPercent) that puts the next collection at about the live
// heap plus the headroom (Percent), never below MinPercent (a large heap
// is collected at most twice as often as by default: there the headroom
// is half the live heap) nor above MaxPercent (a small heap is collected
// no less often than by default). A GOGC or GOMEMLIMIT set in
// the environment is the user's choice: the pacer then does nothing.
package gcpace
