package formats

import "github.com/eepipe/eepipe/pipeline"

// costReadOptions are the read options the commands use.
func costReadOptions() ReadOptions { return ReadOptions{} }

// costCount counts a batch's problems of severity s.
func costCount(b *pipeline.Batch, s pipeline.Severity) int { return b.Problems.Count(s) }
