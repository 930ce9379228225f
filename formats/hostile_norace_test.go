//go:build !race

package formats

// hostileRace is true under the race detector (see hostile_race_test.go).
const hostileRace = false
