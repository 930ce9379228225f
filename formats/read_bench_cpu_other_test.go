//go:build !unix

package formats

// readBenchCPU is not measured on this platform: the CPU metrics of the
// read benchmarks are then not reported.
func readBenchCPU() float64 { return 0 }
