package formats

import "github.com/eepipe/eepipe/pipeline"

// costReadOptions are the read options the commands use: the first five
// problems of each kind kept.
func costReadOptions() ReadOptions {
	return ReadOptions{Bound: &pipeline.ProblemBound{Keep: 5}}
}

// costCount counts a batch's problems of severity s, kept or not.
func costCount(b *pipeline.Batch, s pipeline.Severity) int { return b.Count(s) }
