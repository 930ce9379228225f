//go:build race

package formats

// hostileRace is true under the race detector, whose shadow memory
// multiplies a process's resident size: peak memory is then logged, not
// checked.
const hostileRace = true
