// Package measure is what the benchmarks of formats and its sub-packages
// report beside time and allocations: CPUTime, the CPU time the process
// has used (which other load on the machine does not inflate), and
// PeakHeap, the highest live heap seen while a benchmark runs. No
// production code imports it.
package measure
