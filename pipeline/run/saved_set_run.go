package run

import (
	"context"
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// SavedSetStore is what a saved change set's apply asks of the state
// store: the run that already carried the set, and what earlier runs of
// it wrote.
type SavedSetStore interface {
	ChangeSetRun(ctx context.Context, signature string) (*pipeline.RunRecord, error)
	ChangeSetProgress(ctx context.Context, signature string) (pipeline.SavedProgress, error)
}

// AppliedBeforeError is the refusal of a change set a run already applied
// (a change set is applied once).
type AppliedBeforeError struct{ Run pipeline.RunRecord }

func (e *AppliedBeforeError) Error() string {
	return fmt.Sprintf("this change set was already applied by run %d on %s (by %s@%s); a change set is applied once",
		e.Run.ID, e.Run.Started.UTC().Format("2006-01-02 15:04 UTC"), e.Run.User, e.Run.Host)
}

// StoreError is a state store's failure during a saved set's steps: the
// run cannot tell what was applied, so it stops before any write.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// SavedSetRun is the order of a saved change set's apply or dry run up to
// its drift check, the one home of that protocol (docs/apply-and-state.md,
// "Saved change sets"): the service address's check; the refusal of a set
// already applied; the clients; the set's counters against the service's
// catalog; the accounts' locks (local, then the store's) and, under them,
// the address's and the applied-before checks again (a run of the same set
// that held the locks while this one waited has applied it); then what
// earlier runs of the set wrote, from which it resumes. Its steps that
// need the command's world (configuration, clients, locks) are injected.
type SavedSetRun struct {
	Set    *savedset.StreamedSet
	Store  SavedSetStore // nil without a state store (--no-state, a dry run)
	DryRun bool          // a dry run takes no lock

	// CheckHistory checks the store's record of the service's address
	// (before any request, and again under the locks).
	CheckHistory func(ctx context.Context, again bool) error
	// Connect builds the Runner.
	Connect func() (*Runner, error)
	// CheckCatalog settles the set's counters that the catalog it was
	// read with lacks, against the service's.
	CheckCatalog func(ctx context.Context, r *Runner) error
	// Lock takes the locks of the accounts the set writes to, local first,
	// and returns their release.
	Lock func(ctx context.Context, accounts []string) (unlock func(), err error)
}

// Prepared is a saved set ready for its drift check: the Runner, what
// earlier runs wrote, and the locks' release (call it when done, also on
// an error after Prepare returned).
type Prepared struct {
	Runner  *Runner
	Earlier pipeline.SavedProgress
	Unlock  func()
}

// Prepare takes the set through the protocol's steps up to the drift
// check (Runner.CheckSaved). Nothing is sent to the service but reads.
func (s *SavedSetRun) Prepare(ctx context.Context) (*Prepared, error) {
	p := &Prepared{Unlock: func() {}}
	if err := s.CheckHistory(ctx, false); err != nil {
		return nil, err
	}
	if err := s.notAppliedBefore(ctx); err != nil {
		return nil, err
	}
	r, err := s.Connect()
	if err != nil {
		return nil, err
	}
	p.Runner = r
	if err := s.CheckCatalog(ctx, r); err != nil {
		return nil, err
	}
	if !s.DryRun {
		unlock, err := s.Lock(ctx, append([]string(nil), s.Set.Header.Accounts...))
		if err != nil {
			return nil, err
		}
		p.Unlock = unlock
		if s.Store != nil {
			if err := s.CheckHistory(ctx, true); err != nil {
				p.Unlock()
				return nil, err
			}
			if err := s.notAppliedBefore(ctx); err != nil {
				p.Unlock()
				return nil, err
			}
		}
	}
	if s.Store != nil {
		prog, err := s.Store.ChangeSetProgress(ctx, s.Set.Header.Signature)
		if err != nil {
			p.Unlock()
			return nil, &StoreError{err}
		}
		p.Earlier = prog
	}
	return p, nil
}

// notAppliedBefore refuses a set the state store says was applied
// (without a store nothing can tell).
func (s *SavedSetRun) notAppliedBefore(ctx context.Context) error {
	if s.Store == nil {
		return nil
	}
	prev, err := s.Store.ChangeSetRun(ctx, s.Set.Header.Signature)
	if err != nil {
		return &StoreError{err}
	}
	if prev != nil {
		return &AppliedBeforeError{Run: *prev}
	}
	return nil
}
