package reports

import (
	"bufio"
	"encoding/gob"
	"errors"
	"io"
	"os"

	"github.com/eepipe/eepipe/pipeline"
)

// ProblemSpill holds the problems a run set aside (see
// pipeline.ProblemBound) in a temporary file, so that a --report lists
// every problem without the run holding them all in memory. Add is the
// bound's Overflow; Close removes the file.
type ProblemSpill struct {
	f   *os.File
	w   *bufio.Writer
	enc *gob.Encoder
	n   int
	err error
}

// NewProblemSpill creates the temporary file.
func NewProblemSpill() (*ProblemSpill, error) {
	f, err := os.CreateTemp("", "eepipe-problems-*")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &ProblemSpill{f: f, w: w, enc: gob.NewEncoder(w)}, nil
}

// Add appends a problem; the first write error is kept for Each.
func (s *ProblemSpill) Add(p pipeline.Problem) {
	if s.err != nil {
		return
	}
	p.Kind = ""
	if s.err = s.enc.Encode(&p); s.err == nil {
		s.n++
	}
}

// Len returns how many problems were added.
func (s *ProblemSpill) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Each calls fn with every problem added, in the order added.
func (s *ProblemSpill) Each(fn func(pipeline.Problem) error) error {
	if s == nil || s.n == 0 {
		return s.errOrNil()
	}
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	defer s.f.Seek(0, io.SeekEnd)
	dec := gob.NewDecoder(bufio.NewReaderSize(s.f, 64<<10))
	for range s.n {
		var p pipeline.Problem
		if err := dec.Decode(&p); err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

func (s *ProblemSpill) errOrNil() error {
	if s == nil {
		return nil
	}
	return s.err
}

// Close removes the temporary file.
func (s *ProblemSpill) Close() error {
	if s == nil {
		return nil
	}
	return errors.Join(s.f.Close(), os.Remove(s.f.Name()))
}
