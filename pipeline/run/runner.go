package run

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// DefaultConcurrency is the default bound on requests in flight.
const DefaultConcurrency = 8

// DefaultRecalcWait is how long a recalculation waits for a running one
// to finish by default.
const DefaultRecalcWait = 75 * time.Minute

// recalcBackoffSpan is how far the wait for a running recalculation
// grows: it doubles from RunOptions.RecalcBackoff up to this many times
// it (1 s to 30 s by default; see docs/apply-and-state.md).
const recalcBackoffSpan = 30

// RunOptions tune a Runner.
type RunOptions struct {
	// Concurrency bounds the HTTP requests in flight across the whole run,
	// across accounts and the lookup (default DefaultConcurrency).
	Concurrency int
	// Diff tunes the diff (RecreateOnDateChange).
	Diff diff.DiffOptions
	// NoRecalc skips the recalculation of scorecards after apply.
	NoRecalc bool
	// RecalcWait bounds how long one scorecard's recalculation keeps
	// waiting for a running one (409) to finish (default DefaultRecalcWait).
	RecalcWait time.Duration
	// RecalcBackoff is the first wait after a 409 (default 1s); it doubles
	// up to recalcBackoffSpan times itself (30s by default).
	RecalcBackoff time.Duration
	// createAttempts bounds how often a create without a clear answer is
	// sent again when the plan turns out not to exist (default 3).
	createAttempts int
	// Now and Sleep are the clock, injected by tests; Sleep returns early
	// with ctx's error when ctx is done (nil: pace.Sleep, the one
	// context-aware wait).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	// Observer, when set, is told of each plan compared and done and of
	// each recalculation's progress (a progress display).
	Observer Observer

	// Journal, when set, records every target write as soon as its
	// request completes (see recordWrite).
	Journal pipeline.RunJournal
	// History, when set, has PlanApply and ApplySaved record the run in
	// the state store themselves (RunHistory): its start before the first
	// write, its writes (in place of Journal) and its end.
	History *RunHistory
	// CheckServed has PlanApply check every counter the files set against
	// the catalog the service serves before its first write: a counter
	// the service lacks stops the run (*ServedCatalogError), nothing
	// written. Off when the catalog was given (--catalog rules then).
	CheckServed bool
	// inSyncBatchSize is how many counters and plan fields found in sync
	// (Runner.recordInSync) the Journal gets together: they are recorded
	// whenever that many wait, and at the end of the run (default
	// defaultInSyncBatch).
	inSyncBatchSize int

	// CheckLock, when set, is called before every write request (create,
	// update, delete, target, recalculation) to confirm that the run still
	// holds its locks: an error (a *StoreLockLostError) stops the run as a
	// fatal error does (RunReport.Fatal) before that request is sent, and
	// no later request is sent either.
	CheckLock func(ctx context.Context) error
	// CountsOnly: no report lists the run's changes counter by counter
	// (RunReport.Rows), so a written plan's results keep the number of
	// each target's changes and let the changes go: a first apply of an
	// account's plans would hold millions of them until the run ends
	// (docs/performance.md, "A first apply of 2,000 new plans").
	CountsOnly bool
}

// RecalcEvent reports progress of one scorecard's recalculation.
type RecalcEvent struct {
	Account, ScorecardID string
	Attempt              int
	Waiting              time.Duration // > 0: got 409, waiting this long before the next attempt
	Done                 bool
	Err                  error
}

func (o RunOptions) concurrency() int {
	if o.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return o.Concurrency
}

func (o RunOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Runner applies input plans to the service for a set of accounts. Every
// request of the run, for every account and the company lookup, goes
// through one semaphore of RunOptions.Concurrency slots. A Runner is used
// for one run.
type Runner struct {
	accounts []pipeline.Account
	finder   pipeline.CompanyFinder
	opts     RunOptions
	gate     *gate

	mu   sync.Mutex   // serialises the callbacks
	read atomic.Int64 // stored plans retrieved
	done atomic.Int64

	listMu   sync.Mutex
	lists    map[int]listed    // each account's plan list, once listed
	catalog  *pipeline.Catalog // the counter names of the first target retrieved
	patched  atomic.Int64
	counters atomic.Int64
	held     atomic.Int64 // counters recorded as already held (RunReport.CountersHeld)

	journal pipeline.RunJournal // RunOptions.Journal, or later with History
	later   laterJournal        // the journal of a run recorded in History
	runID   int64               // the run recorded in History (beginRecord)

	syncMu       sync.Mutex
	inSync       inSyncBatch     // counters and plan fields found in sync, not recorded yet
	inSyncFailed []inSyncFailure // plans whose values in sync could not be recorded
}

// NewRunner returns a Runner for accounts (each with its own PlanService,
// bound to its key pair) and finder (nil when no lookup is configured).
func NewRunner(accounts []pipeline.Account, finder pipeline.CompanyFinder, opts RunOptions) *Runner {
	r := &Runner{opts: opts, gate: newGate(opts.concurrency()), lists: map[int]listed{}}
	r.gate.checkLock = opts.CheckLock
	r.journal = opts.Journal
	if opts.History != nil {
		r.journal = &r.later
	}
	for _, a := range accounts {
		a.Service = gatedService{svc: a.Service, g: r.gate, acct: &accountStop{name: a.Name, keyHint: a.KeyHint}}
		r.accounts = append(r.accounts, a)
	}
	r.gate.used = len(r.accounts)
	if finder != nil {
		r.finder = gatedFinder{f: finder, g: r.gate}
	}
	return r
}

// Progress is a snapshot of a run for progress displays.
type Progress struct {
	plansRead       int64 // stored plans retrieved
	PlansDone       int64
	TargetsPatched  int64
	CountersChanged int64
	Requests        RequestCounts
}

// Progress returns a snapshot; safe to call at any time from any goroutine.
func (r *Runner) Progress() Progress {
	return Progress{plansRead: r.read.Load(), PlansDone: r.done.Load(), TargetsPatched: r.patched.Load(), CountersChanged: r.counters.Load(), Requests: r.gate.snapshot()}
}

// requests returns the requests sent so far.
func (r *Runner) requests() RequestCounts { return r.gate.snapshot() }

// Fatal returns the error that stopped the run, or nil.
func (r *Runner) Fatal() error { return r.gate.fatalErr() }
