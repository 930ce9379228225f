package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// ApplyHooks are the steps Runner.PlanApply leaves to its caller (the
// state store, the served catalog, the display). Each is optional.
type ApplyHooks struct {
	// Lock is called once the plans are routed, before the accounts'
	// lists that matching reads are taken (and so before any stored plan
	// is read), with the accounts the plans go to (sorted; not called when
	// there is none): the accounts the run may write to. Lists taken
	// before (to route plans by plan_id, to learn the catalog) are taken
	// again after it. An error stops the run: nothing more is read,
	// nothing is written.
	Lock func(ctx context.Context, accounts []string) error
	// Ready is called once, before the first write and after a stored
	// plan was read (the service's counter catalog is known then; or every
	// read failed), or, when no plan is to be written, at the end. An
	// error stops the run: nothing is written.
	Ready func(ctx context.Context) error
	// Begin is called once, before the first plan is applied (written, or
	// its counters recorded as in sync), with the accounts of the plans
	// that were matched (sorted); not at all when every plan fails or the
	// run stopped first. An error stops the run: nothing is written. An
	// error of Ready or Begin once the run was stopped (cancelled, out of
	// time) is that stop's: the run is reported as stopped, as any other.
	Begin func(ctx context.Context, accounts []string) error
	// Classify classifies one compared plan's changes (three-way, against
	// the state store: ClassifyPlan, HoldPlanChanges) and returns the
	// changes it held back. An error leaves that plan unwritten (not
	// applied) and stops the run as a fatal error does (RunReport.Fatal).
	Classify func(ctx context.Context, d *PlanDiff) ([]HeldChange, error)
	// OnDiff receives each plan's diff once compared and classified,
	// before its writes (one call at a time, as plans come).
	OnDiff func(d *PlanDiff)
}

// PlanApply compares and applies plans in one pass: what Plan and then
// Apply do, pipelined per plan. Routing, listing, matching and the
// duplicate-claim check come first (they need the lists only); then each
// plan, in the pool of RunOptions.Concurrency, is read (a plan to create
// needs no read), compared, classified (hooks.Classify) and applied, so
// that the first writes go out while later plans are still being read.
// Nothing is written before hooks.Lock, hooks.Ready and hooks.Begin have
// returned without error.
//
// It returns the ChangeSet (one diff per input plan, in input order, as
// classified), the RunReport, and the held changes in input order. The
// error is a hook's that stopped the run before any write; then nothing
// else is returned. A run stopped by a fatal error or cancellation is
// told by the report (Fatal, Interrupted), as with Apply.
func (r *Runner) PlanApply(ctx context.Context, plans []*InputPlan, started time.Time, hooks ApplyHooks) (*ChangeSet, *RunReport, []HeldChange, error) {
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
	accounts := pr.accounts()

	// Nothing is written before Ready and then Begin have returned. The
	// first plan to be written calls them, once a stored plan was read
	// (the service's catalog is known then) or every read failed; the
	// other plans are read and compared meanwhile.
	var unread atomic.Int64 // matched plans not read yet
	for i, m := range pr.matched {
		if cs.Plans[i] == nil && m != nil {
			unread.Add(1)
		}
	}
	firstRead := make(chan struct{})
	var firstOnce sync.Once
	readDone := func(ok bool) {
		if n := unread.Add(-1); ok || n == 0 {
			firstOnce.Do(func() { close(firstRead) })
		}
	}
	if unread.Load() == 0 {
		close(firstRead)
	}
	var (
		gates       sync.Once
		gateErr     error
		readyCalled bool
		halt        atomic.Bool
	)
	beforeWrites := func() error {
		if hooks.Ready != nil {
			<-firstRead
		}
		gates.Do(func() {
			if r.gate.stopErr(ctx) != nil {
				return // a stopped run writes nothing: nothing to check or record
			}
			readyCalled = true
			if hooks.Ready != nil {
				gateErr = hooks.Ready(ctx)
			}
			if gateErr == nil && hooks.Begin != nil {
				gateErr = hooks.Begin(ctx, accounts)
			}
			if gateErr != nil && r.gate.stopErr(ctx) != nil {
				// Stopped meanwhile (interrupted between the catalog check
				// and the run's record): the hook's failure is that stop's.
				// The run goes on as a stopped run: nothing is written, each
				// plan is reported not applied, and the report is written.
				gateErr = nil
			}
			halt.Store(gateErr != nil)
		})
		return gateErr
	}

	// The plans to read go first: a plan to create may wait for the first
	// read (above), which must not wait for a free worker.
	order := make([]int, 0, len(plans))
	for i, m := range pr.matched {
		if cs.Plans[i] == nil && m != nil {
			order = append(order, i)
		}
	}
	for i, m := range pr.matched {
		if cs.Plans[i] != nil || m == nil {
			order = append(order, i)
		}
	}
	held := make([][]HeldChange, len(plans))
	wp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for _, i := range order {
		wp.Go(func() {
			d := cs.Plans[i]
			m := pr.matched[i]
			if halt.Load() {
				if d == nil && m != nil {
					readDone(false)
				}
				return // the run stopped before its first write
			}
			var stop error
			stopped := false // stop is the run's stop, told as it is
			if d == nil {
				var server *Plan
				var err error
				if m != nil {
					server, err = r.getOne(ctx, storedRef{pr.routes[i].account, m.ID})
					readDone(err == nil)
				}
				readStop := r.gate.stopErr(ctx)
				switch {
				case err != nil && readStop != nil:
					d = Failed(plans[i], "not compared: "+readStop.Error())
					d.Account = r.accounts[pr.routes[i].account].Name
				case err != nil:
					d = pr.getFailed(i, err)
				default:
					d = pr.diff(i, server)
					if d.Action == ActionRecreate {
						// A plan left by an earlier recreate is adopted: compare with it (as Plan does).
						one := &ChangeSet{Plans: []*PlanDiff{d}, Listed: cs.Listed}
						r.planLeftovers(ctx, one)
						d = one.Plans[0]
					}
				}
				if d.Action != ActionFailed && hooks.Classify != nil {
					h, err := hooks.Classify(ctx, d)
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
					held[i] = h
				}
				cs.Plans[i] = d
			}
			if stop == nil && d.Action != ActionFailed {
				if beforeWrites() != nil {
					return
				}
			}
			if hooks.OnDiff != nil {
				r.mu.Lock()
				hooks.OnDiff(d)
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
				res = r.applyPlan(ctx, d)
			}
			rep.Plans[i] = res
			r.planDone(res)
		})
	}
	wp.Wait()
	if gateErr != nil {
		return nil, nil, nil, gateErr
	}
	if !readyCalled && hooks.Ready != nil && r.gate.stopErr(ctx) == nil {
		// No plan was to be written: the check still decides the outcome
		// (a counter the service lacks is the input's error).
		if err := hooks.Ready(ctx); err != nil {
			return nil, nil, nil, err
		}
	}
	r.finishApply(ctx, rep)
	var all []HeldChange
	for _, h := range held {
		all = append(all, h...)
	}
	return cs, rep, all, nil
}
