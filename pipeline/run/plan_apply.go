package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/sourcegraph/conc/pool"
)

// ApplyHooks are the steps Runner.PlanApply leaves to its caller (the
// account locks, the three-way rule). Each is optional. What the run
// checks and records before its first write is the Runner's own
// (RunOptions.CheckServed, RunOptions.History); a display watches through
// RunOptions.Observer.
type ApplyHooks struct {
	// LockLocal is called first, before anything is read, with the
	// accounts the plans' account columns name (NamedAccounts; none when
	// no plan names one: then every configured account is to be locked,
	// AccountLocks.Local): one apply per account at a time on
	// this machine, since two runs that both list the plans before either
	// creates would each create every plan. An error stops the run before
	// anything is read; PlanApply returns it.
	LockLocal func(ctx context.Context, accounts []string) error
	// Lock is called once the plans are routed, before the accounts'
	// lists that matching reads are taken (and so before any stored plan
	// is read), with the accounts the plans go to (sorted; not called when
	// there is none): the accounts the run may write to. Lists taken
	// before (to route plans by plan_id, to learn the catalog) are taken
	// again after it. An error stops the run: nothing more is read,
	// nothing is written.
	Lock func(ctx context.Context, accounts []string) error
	// Classify classifies one compared plan's changes (three-way, against
	// the state store: classifyPlan, holdPlanChanges) and returns the
	// changes it held back. An error leaves that plan unwritten (not
	// applied) and stops the run as a fatal error does (RunReport.Fatal).
	Classify func(ctx context.Context, d *diff.PlanDiff) ([]diff.HeldChange, error)
}

// PlanApply compares and applies plans in one pass, pipelined per plan. Routing, listing, matching and the
// duplicate-claim check come first (they need the lists only); then each
// plan, in the pool of RunOptions.Concurrency, is read (a plan to create
// needs no read), compared, classified (hooks.Classify) and applied, so
// that the first writes go out while later plans are still being read.
// Nothing is written before hooks.Lock has returned and the run's gate
// before its first write has passed: once a stored plan was read (the
// service's counter catalog is known then; or every read failed), the
// served catalog is checked (RunOptions.CheckServed), and then the run is
// recorded (RunOptions.History; not when every plan fails or the run
// stopped first). When no plan is to be written the check is made at the
// end. A failure of the check or the record once the run was stopped
// (cancelled, out of time) is that stop's: the run is reported as
// stopped, as any other. A run recorded has its end recorded before
// PlanApply returns.
//
// It returns the ChangeSet (one diff per input plan, in input order, as
// classified), the RunReport, and the held changes in input order. The
// error stopped the run before any write (hooks.Lock's, a
// *ServedCatalogError or a *RecordError); then nothing else is returned.
// A run stopped by a fatal error or cancellation is told by the report
// (Fatal, Interrupted).
func (r *Runner) PlanApply(ctx context.Context, plans []*pipeline.InputPlan, started time.Time, hooks ApplyHooks) (*diff.ChangeSet, *RunReport, []diff.HeldChange, error) {
	if hooks.LockLocal != nil {
		if err := hooks.LockLocal(ctx, NamedAccounts(plans)); err != nil {
			return nil, nil, nil, err
		}
	}
	rep := &RunReport{Started: started, Plans: make([]*PlanResult, len(plans))}
	pr, err := r.prepare(ctx, plans, hooks.Lock)
	cs := pr.cs
	if he := (*hookError)(nil); errors.As(err, &he) {
		return nil, nil, nil, he.err
	}
	if err != nil {
		// Stopped before anything was compared: nothing is applied.
		pr.stopAll(err)
		for i, d := range cs.Plans {
			rep.Plans[i] = r.applyPlan(ctx, d)
			r.planDone(rep.Plans[i])
		}
		r.finishApply(ctx, rep)
		return cs, rep, nil, nil
	}
	run := r.newPipelined(ctx, plans, pr, hooks, rep)
	wp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for _, i := range run.order() {
		wp.Go(func() { run.plan(i) })
	}
	wp.Wait()
	if run.gateErr != nil {
		return nil, nil, nil, run.gateErr
	}
	if !run.readyCalled && r.gate.stopErr(ctx) == nil {
		// No plan was to be written: the check still decides the outcome
		// (a counter the service lacks is the input's error).
		if err := r.checkServed(ctx, plans); err != nil {
			return nil, nil, nil, err
		}
	}
	r.finishApply(ctx, rep)
	if run.recorded {
		r.finishRecord(ctx, rep)
	}
	var all []diff.HeldChange
	for _, h := range run.held {
		all = append(all, h...)
	}
	return cs, rep, all, nil
}

// pipelined is one PlanApply's state once its plans are prepared: the
// plans still to read, the gate before the first write (the served
// catalog's check and the run's record, once) and each plan's held
// changes and result.
type pipelined struct {
	r        *Runner
	ctx      context.Context
	plans    []*pipeline.InputPlan
	pr       *prepared
	cs       *diff.ChangeSet
	hooks    ApplyHooks
	rep      *RunReport
	accounts []string
	held     [][]diff.HeldChange

	// Nothing is written before the served catalog was checked and the
	// run recorded. The first plan to be written does both, once a stored plan was read
	// (the service's counter catalog is known then) or every read failed;
	// the other plans are read and compared meanwhile.
	unread    atomic.Int64 // matched plans not read yet
	firstRead chan struct{}
	firstOnce sync.Once

	gates       sync.Once
	gateErr     error
	readyCalled bool
	recorded    bool // the run's start is recorded: its end is to be
	halt        atomic.Bool
}

// newPipelined starts the pipelined state of a PlanApply whose plans pr
// prepared.
func (r *Runner) newPipelined(ctx context.Context, plans []*pipeline.InputPlan, pr *prepared, hooks ApplyHooks, rep *RunReport) *pipelined {
	run := &pipelined{r: r, ctx: ctx, plans: plans, pr: pr, cs: pr.cs, hooks: hooks, rep: rep,
		accounts: pr.accounts(), held: make([][]diff.HeldChange, len(plans)), firstRead: make(chan struct{})}
	for i, m := range pr.matched {
		if run.cs.Plans[i] == nil && m != nil {
			run.unread.Add(1)
		}
	}
	if run.unread.Load() == 0 {
		close(run.firstRead)
	}
	return run
}

// readDone counts a matched plan read (ok) or not: the first read, or the
// last failed one, lets the writes begin.
func (run *pipelined) readDone(ok bool) {
	if n := run.unread.Add(-1); ok || n == 0 {
		run.firstOnce.Do(func() { close(run.firstRead) })
	}
}

// beforeWrites waits for the first read, checks the served catalog and
// records the run, once; their error stops every write.
func (run *pipelined) beforeWrites() error {
	r, ctx := run.r, run.ctx
	if r.opts.CheckServed {
		<-run.firstRead
	}
	run.gates.Do(func() {
		if r.gate.stopErr(ctx) != nil {
			return // a stopped run writes nothing: nothing to check or record
		}
		run.readyCalled = true
		run.gateErr = r.checkServed(ctx, run.plans)
		if run.gateErr == nil {
			run.recorded, run.gateErr = r.beginRecord(ctx, run.accounts, "")
		}
		if run.gateErr != nil && r.gate.stopErr(ctx) != nil {
			// Stopped meanwhile (interrupted between the catalog check
			// and the run's record): the hook's failure is that stop's.
			// The run goes on as a stopped run: nothing is written, each
			// plan is reported not applied, and the report is written.
			run.gateErr = nil
		}
		run.halt.Store(run.gateErr != nil)
	})
	return run.gateErr
}

// order returns the plans' indices in the order they are taken: the plans
// to read first, since a plan to create may wait for the first read
// (beforeWrites), which must not wait for a free worker.
func (run *pipelined) order() []int {
	order := make([]int, 0, len(run.plans))
	for i, m := range run.pr.matched {
		if run.cs.Plans[i] == nil && m != nil {
			order = append(order, i)
		}
	}
	for i, m := range run.pr.matched {
		if run.cs.Plans[i] != nil || m == nil {
			order = append(order, i)
		}
	}
	return order
}

// plan reads, compares and classifies plan i when it is not yet compared
// (compare), then applies it once the writes may begin.
func (run *pipelined) plan(i int) {
	r := run.r
	d := run.cs.Plans[i]
	m := run.pr.matched[i]
	if run.halt.Load() {
		if d == nil && m != nil {
			run.readDone(false)
		}
		return // the run stopped before its first write
	}
	var stop error
	stopped := false // stop is the run's stop, told as it is
	if d == nil {
		d, stop, stopped = run.Compare(i)
		run.cs.Plans[i] = d
	}
	if stop == nil && d.Action != diff.ActionFailed {
		if run.beforeWrites() != nil {
			return
		}
	}
	if r.opts.Observer != nil {
		r.mu.Lock()
		r.opts.Observer.PlanCompared(d)
		r.mu.Unlock()
	}
	var res *PlanResult
	if stop != nil {
		err := fmt.Errorf("not written: %w", stop)
		if stopped {
			err = stop
		}
		res = &PlanResult{Diff: d, PlanID: d.PlanID(), Notes: d.Notes, Outcome: OutcomeNotApplied, Err: err}
	} else {
		res = r.applyPlan(run.ctx, d)
	}
	run.rep.Plans[i] = res
	r.planDone(res)
}

// compare reads plan i's stored plan (when it matched one), compares it
// with the file and classifies the changes (hooks.Classify). stop is an
// error that leaves the plan unwritten; stopped tells it is the run's own
// stop, told as it is.
func (run *pipelined) Compare(i int) (d *diff.PlanDiff, stop error, stopped bool) {
	r, ctx, pr := run.r, run.ctx, run.pr
	m := pr.matched[i]
	var server *pipeline.Plan
	var err error
	if m != nil {
		server, err = r.getOne(ctx, storedRef{pr.routes[i].account, m.ID})
		run.readDone(err == nil)
	}
	readStop := r.gate.stopErr(ctx)
	switch {
	case err != nil && readStop != nil:
		d = diff.Failed(run.plans[i], "not compared: "+readStop.Error())
		d.Account = r.accounts[pr.routes[i].account].Name
	case err != nil:
		d = pr.getFailed(i, err)
	default:
		d = pr.diff(i, server)
		if d.Action == diff.ActionRecreate {
			// A plan left by an earlier recreate is adopted: compare with it (as Plan does).
			one := &diff.ChangeSet{Plans: []*diff.PlanDiff{d}, Listed: run.cs.Listed}
			r.planLeftovers(ctx, one)
			d = one.Plans[0]
		}
	}
	if d.Action != diff.ActionFailed && run.hooks.Classify != nil {
		h, err := run.hooks.Classify(ctx, d)
		if err != nil {
			if s := r.gate.stopErr(ctx); s != nil {
				// Stopped meanwhile (interrupted, out of time, another
				// fatal error): the store's failure is that stop's, not a
				// fatal error of its own.
				stop, stopped = s, true
			} else {
				r.gate.setFatal(err)
				stop = err
			}
		}
		run.held[i] = h
	}
	return d, stop, stopped
}
