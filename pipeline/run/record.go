package run

import (
	"context"
	"fmt"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
)

// RunHistory is where an apply is recorded: the state store (the run
// history, through its Journal port) and the run's record. With
// RunOptions.History set, PlanApply and ApplySaved record the run
// themselves: its start before the first write (RunRecord.Accounts are
// the accounts the run's plans go to; a saved set's ChangeSet its
// signature), every write as it completes, and its end with the status
// the report tells (runStatus).
type RunHistory struct {
	Store pipeline.StateStore
	// Run is the run's record: who ran it, where, on which files.
	Run pipeline.RunRecord
}

// RecordError is the failure to record the start of a run in the state
// store: nothing was written.
type RecordError struct{ Err error }

func (e *RecordError) Error() string { return e.Err.Error() }

func (e *RecordError) Unwrap() error { return e.Err }

// ServedCatalogError stops an apply before its first write when the
// files set counters the service's catalog lacks (RunOptions.CheckServed):
// Problems name each column.
type ServedCatalogError struct{ Problems pipeline.Problems }

func (e *ServedCatalogError) Error() string {
	return fmt.Sprintf("the input sets %s the service does not have; nothing was sent", pipeline.Plural(len(e.Problems), "counter column"))
}

// ServedCatalogProblems checks every counter the plans set against the
// catalog the service serves (Runner.ServiceCatalog): a counter the
// service lacks is a problem naming its column. None when no plan sets a
// counter, no stored plan tells the catalog, or the run was stopped (its
// report tells that).
func (r *Runner) ServedCatalogProblems(ctx context.Context, plans []*pipeline.InputPlan) pipeline.Problems {
	if !SetsCounters(plans) {
		return nil
	}
	cat, err := r.ServiceCatalog(ctx)
	if err != nil || cat == nil {
		return nil
	}
	return CheckServiceCatalog(plans, cat)
}

// checkServed is the check PlanApply makes before its first write with
// RunOptions.CheckServed: a *ServedCatalogError stops the run.
func (r *Runner) checkServed(ctx context.Context, plans []*pipeline.InputPlan) error {
	if !r.opts.CheckServed {
		return nil
	}
	if ps := r.ServedCatalogProblems(ctx, plans); len(ps) > 0 {
		return &ServedCatalogError{Problems: ps}
	}
	return nil
}

// laterJournal is the journal of a run recorded in RunOptions.History:
// it records nothing until the run's start is recorded (beginRecord).
type laterJournal struct {
	mu sync.Mutex
	j  pipeline.RunJournal
}

func (l *laterJournal) Get() pipeline.RunJournal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.j
}

// TargetsSending implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) TargetsSending(ctx context.Context, ws []pipeline.TargetWrite) ([]int64, error) {
	if j := l.Get(); j != nil {
		return j.TargetsSending(ctx, ws)
	}
	return make([]int64, len(ws)), nil
}

// TargetsWritten implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) TargetsWritten(ctx context.Context, ws []pipeline.TargetWrite) error {
	if j := l.Get(); j != nil {
		return j.TargetsWritten(ctx, ws)
	}
	return nil
}

// TargetsInSync implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) TargetsInSync(ctx context.Context, ws []pipeline.TargetWrite) error {
	if j := l.Get(); j != nil {
		return j.TargetsInSync(ctx, ws)
	}
	return nil
}

// PlanWritten implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) PlanWritten(ctx context.Context, w pipeline.PlanWrite) error {
	if j := l.Get(); j != nil {
		return j.PlanWritten(ctx, w)
	}
	return nil
}

// PendingResolved implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) PendingResolved(ctx context.Context, ws []pipeline.TargetWrite) error {
	if j := l.Get(); j != nil {
		return j.PendingResolved(ctx, ws)
	}
	return nil
}

// FieldsApplied implements RunJournal; before the run is recorded it does nothing.
func (l *laterJournal) FieldsApplied(ctx context.Context, ws []pipeline.FieldWrite) error {
	if j := l.Get(); j != nil {
		return j.FieldsApplied(ctx, ws)
	}
	return nil
}

// beginRecord records the start of the run in RunOptions.History (also of
// a run that finds everything in sync and writes nothing: the values
// found in sync are what the file asserts, and count as last applied)
// and points the run's journal at it. ok tells the run was recorded (and
// finishRecord is to record its end). Without History it does nothing.
func (r *Runner) beginRecord(ctx context.Context, accounts []string, changeSet string) (ok bool, err error) {
	h := r.opts.History
	if h == nil {
		return false, nil
	}
	rec := h.Run
	rec.Accounts, rec.ChangeSet = accounts, changeSet
	id, err := h.Store.BeginRun(ctx, rec)
	if err != nil {
		return false, &RecordError{Err: err}
	}
	r.runID = id
	r.later.mu.Lock()
	r.later.j = pipeline.JournalFor(h.Store, id)
	r.later.mu.Unlock()
	return true, nil
}

// finishRecord records the end of a run beginRecord recorded, with the
// status rep tells (nil: the run stopped). When that fails, the report
// gets a note naming the cause (the store then shows the run as still
// running) and the run's outcome is unchanged: what it wrote is recorded.
func (r *Runner) finishRecord(ctx context.Context, rep *RunReport) {
	err := r.opts.History.Store.FinishRun(context.WithoutCancel(ctx), r.runID, runStatus(rep), r.opts.now())
	if err != nil && rep != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the end of run %d could not be recorded in the state store "+
			"(eepipe history shows it as still running; what it wrote is recorded): %v", r.runID, err))
	}
}

// runStatus is the status a finished apply is recorded with.
func runStatus(rep *RunReport) string {
	switch {
	case rep == nil:
		return "stopped"
	case rep.Fatal != nil || rep.Interrupted:
		return "stopped"
	case !rep.OK():
		return "partial"
	}
	return "ok"
}
