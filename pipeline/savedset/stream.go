package savedset

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"slices"
)

// A saved change set is applied in passes over its file, each holding one
// plan at a time (README "Saved change sets", "Memory"): OpenSaved reads it
// once to verify its signature and check its values, keeping only each
// plan's digest; the drift check (Runner.CheckSaved) and the writes
// (Runner.ApplySaved) each read it again, and every plan read again must
// be the one verified.

// SavedReader reads a saved change set from its file, once per call, as
// ScanSaved does: fn gets each plan in order as it is read, and the set
// without its plans is returned when the whole file was read. A reader
// that can tell the file changed since the first call says so with an
// error wrapping ErrSetChanged.
type SavedReader func(fn func(h *SavedChangeSet, i int, p *SavedPlan, digest [sha256.Size]byte) error) (*SavedChangeSet, error)

// ErrSetChanged is the error of a change set whose file changed between
// the passes of its apply (errors.Is): what was read again is not what
// was verified, so the run stops (exit 3).
var ErrSetChanged = errors.New("the change set file changed while it was being applied")

// StreamedSet is a saved change set verified and checked by a first pass
// over its file: its header (Header, without plans) and each plan's
// digest. Plans reads it again.
type StreamedSet struct {
	Header *SavedChangeSet
	read   SavedReader
	cat    *pipeline.Catalog
	plans  [][sha256.Size]byte
	// creates are the accounts the set creates plans in.
	Creates  []string
	verified bool
}

// Len is the number of plans in the set.
func (s *StreamedSet) Len() int { return len(s.plans) }

// OpenSaved reads a saved change set once through read, checking every
// value against cat as Check does and keeping only each plan's digest.
// The set is returned with the check's error, a *SavedSetError (nil when
// every value passed), so that the caller may check again against another
// catalog (CheckAgain); err is any other failure to read it. Its plans are
// read again only once Verify has held.
func OpenSaved(read SavedReader, cat *pipeline.Catalog) (s *StreamedSet, checkErr, err error) {
	s = &StreamedSet{read: read, cat: cat}
	var c *setChecker
	h, err := read(func(h *SavedChangeSet, i int, p *SavedPlan, sum [sha256.Size]byte) error {
		if c == nil {
			c = newSetChecker(h, cat)
			c.problems = nil // the header is checked once it is whole
		}
		c.plan(i, p)
		s.plans = append(s.plans, sum)
		if p.Action == diff.ActionCreate && !slices.Contains(s.Creates, p.Account) {
			s.Creates = append(s.Creates, p.Account)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	s.Header = h
	hc := newSetChecker(h, cat)
	if c != nil {
		hc.problems = append(hc.problems, c.problems...)
	}
	return s, hc.err(), nil
}

// Verify checks the set's signature as SavedChangeSet.Verify does; its
// plans are read again only once it held.
func (s *StreamedSet) Verify(service string, keys SetKeys) error {
	if err := s.Header.Verify(service, keys); err != nil {
		return err
	}
	s.verified = true
	return nil
}

// CheckAgain checks every value of the set again against cat, reading it
// again; cat is then the catalog its plans are read with.
func (s *StreamedSet) CheckAgain(cat *pipeline.Catalog) error {
	c := newSetChecker(s.Header, cat)
	if err := s.Plans(func(i int, p *SavedPlan) error {
		c.plan(i, p)
		return nil
	}); err != nil {
		return err
	}
	s.cat = cat
	return c.err()
}

// Plans reads the set again, handing each plan to fn in order, its
// counters' names those of the catalog it was checked with. A plan that is
// not the one verified, a plan more or less, or another header is
// ErrSetChanged, returned before fn sees anything of it. An error of fn
// stops the reading and is returned as it is.
func (s *StreamedSet) Plans(fn func(i int, p *SavedPlan) error) error {
	if !s.verified {
		return &SavedSetError{Problems: []string{"its signature was not verified"}, err: ErrSetSignature}
	}
	c := &setChecker{cat: s.cat, accounts: map[string]bool{}, updated: map[string]bool{}}
	for _, a := range s.Header.Accounts {
		c.accounts[a] = true
	}
	h, err := s.read(func(h *SavedChangeSet, i int, p *SavedPlan, sum [sha256.Size]byte) error {
		if i >= len(s.plans) || sum != s.plans[i] || h.Signature != "" && h.Signature != s.Header.Signature {
			return fmt.Errorf("%w: plan %d of the set is not the one verified", ErrSetChanged, i+1)
		}
		c.plan(i, p) // the names as the catalog spells them
		return fn(i, p)
	})
	if err != nil {
		return err
	}
	if h.Signature != s.Header.Signature || !slices.Equal(h.digest, s.Header.digest) {
		return fmt.Errorf("%w: its signature or content is not the one verified", ErrSetChanged)
	}
	return nil
}
