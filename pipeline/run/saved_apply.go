package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/sourcegraph/conc/pool"
)

// maxDriftsKept bounds the drifts CheckSaved keeps to report: a set whose
// every counter drifted would otherwise hold one per counter.
const maxDriftsKept = 1000

// SavedCheck is the outcome of the drift check of a streamed set.
type SavedCheck struct {
	// Drifts are the first maxDriftsKept drifts found; Total counts them all.
	Drifts []Drift
	Total  int
	// Changes counts the plans that would change something.
	Changes int
	lists   map[string][]pipeline.Plan
}

// CheckSaved checks a streamed set against the service, reading it again
// and holding at most RunOptions.Concurrency plans at a time (each with
// the stored plan read for it): any target no longer holding the recorded
// service value, any field changed, and any plan to create that now exists
// is a drift, and then nothing should be applied. prog is as for
// planSaved. The error is not nil only when the run must stop.
func (r *Runner) CheckSaved(ctx context.Context, s *savedset.StreamedSet, prog *pipeline.SavedProgress) (*SavedCheck, error) {
	for _, a := range s.Header.Accounts {
		if r.account(a) == nil {
			return nil, &savedset.SavedSetError{Problems: []string{fmt.Sprintf("the change set writes to account %s, which is not configured", a)}}
		}
	}
	chk := &SavedCheck{lists: map[string][]pipeline.Plan{}}
	for _, a := range s.Creates {
		l, err := r.savedList(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("listing the plans of account %s: %w", a, err)
		}
		chk.lists[a] = l
	}
	var mu sync.Mutex
	drift := func(d Drift) {
		mu.Lock()
		defer mu.Unlock()
		chk.Total++
		if len(chk.Drifts) < maxDriftsKept {
			chk.Drifts = append(chk.Drifts, d)
		}
	}
	p := pool.New().WithMaxGoroutines(r.opts.concurrency()).WithErrors().WithFirstError()
	err := s.Plans(func(_ int, sp *savedset.SavedPlan) error {
		if err := r.gate.stopErr(ctx); err != nil {
			return err
		}
		p.Go(func() error {
			d, err := r.planSaved(ctx, *sp, chk.lists[sp.Account], prog, drift)
			if err == nil && d.Action != diff.ActionUnchanged {
				mu.Lock()
				chk.Changes++
				mu.Unlock()
			}
			return err
		})
		return nil
	})
	if perr := p.Wait(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, err
	}
	return chk, nil
}

// ApplySaved writes a streamed set that CheckSaved found without drift,
// reading it again: each plan is compared with the service again and
// written as PlanApply writes a plan, at most RunOptions.Concurrency plans at
// a time; a plan that drifted since the check is not written (failed).
// RunOptions.Observer is shown each plan's diff before it is written.
// With RunOptions.History the run is recorded first (its accounts those
// of the set, its ChangeSet the set's signature): a failure to record it
// (*RecordError) leaves the set unwritten, and is returned with no report,
// unless the run was interrupted meanwhile (then it goes on as a stopped
// run, sending nothing); its end is recorded before ApplySaved returns.
// The report keeps one compact result per plan (its targets'
// outcomes and counts, not the counters themselves, which the set holds).
// The error is ErrSetChanged (wrapped) when the file changed since it was
// verified, or the error reading it: the plans before were applied, as
// the report says, and the report's Fatal is that error (the run did not
// carry the set through).
func (r *Runner) ApplySaved(ctx context.Context, s *savedset.StreamedSet, chk *SavedCheck, prog *pipeline.SavedProgress, started time.Time) (*RunReport, error) {
	recorded, err := r.beginRecord(ctx, slices.Sorted(slices.Values(s.Header.Accounts)), s.Header.Signature)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	rep, err := r.applySaved(ctx, s, chk, prog, started)
	if recorded {
		r.finishRecord(ctx, rep)
	}
	return rep, err
}

// applySaved is ApplySaved once the run is recorded.
func (r *Runner) applySaved(ctx context.Context, s *savedset.StreamedSet, chk *SavedCheck, prog *pipeline.SavedProgress, started time.Time) (*RunReport, error) {
	rep := &RunReport{Started: started}
	var mu sync.Mutex
	p := pool.New().WithMaxGoroutines(r.opts.concurrency())
	err := s.Plans(func(i int, sp *savedset.SavedPlan) error {
		mu.Lock()
		rep.Plans = append(rep.Plans, nil)
		mu.Unlock()
		p.Go(func() {
			var drifts []string
			d, err := r.planSaved(ctx, *sp, chk.lists[sp.Account], prog, func(d Drift) {
				mu.Lock()
				defer mu.Unlock()
				drifts = append(drifts, d.String())
			})
			var res *PlanResult
			switch {
			case err != nil:
				d = diff.Failed(savedInput(sp), err.Error())
				d.Account = sp.Account
				res = &PlanResult{Diff: d, PlanID: sp.PlanID, Outcome: OutcomeFailed, Err: err}
				if errors.Is(err, pipeline.ErrStopped) {
					res.Outcome = OutcomeNotApplied
				}
			case len(drifts) > 0:
				msg := "the service changed during the run, so the plan was not written: " + strings.Join(drifts, "; ")
				d = diff.Failed(savedInput(sp), msg)
				d.Account = sp.Account
				res = &PlanResult{Diff: d, PlanID: sp.PlanID, Outcome: OutcomeFailed, Err: errors.New(msg)}
			default:
				if r.opts.Observer != nil {
					mu.Lock()
					r.opts.Observer.PlanCompared(d)
					mu.Unlock()
				}
				res = r.applyPlan(ctx, d)
			}
			compactResult(res)
			mu.Lock()
			rep.Plans[i] = res
			mu.Unlock()
			r.planDone(res)
		})
		return nil
	})
	p.Wait()
	rep.Plans = slices.DeleteFunc(rep.Plans, func(p *PlanResult) bool { return p == nil })
	r.finishApply(ctx, rep)
	if err != nil && rep.Fatal == nil {
		// The set could not be read to its end: the run did not carry it
		// through, whatever its plans did.
		rep.Fatal = err
	}
	return rep, err
}

// DryRunSaved reads a streamed set that CheckSaved found without drift
// again, one plan at a time, writes each plan's diff to w as
// ChangeSet.Render does (then its summary), and returns the dry run's
// report; nothing is sent but the reads.
func (r *Runner) DryRunSaved(ctx context.Context, s *savedset.StreamedSet, chk *SavedCheck, prog *pipeline.SavedProgress, started time.Time, w io.Writer, opts diff.RenderOptions) (*RunReport, diff.DiffSummary, error) {
	rep := &RunReport{Started: started, DryRun: true}
	var sum diff.DiffSummary
	err := s.Plans(func(_ int, sp *savedset.SavedPlan) error {
		d, err := r.planSaved(ctx, *sp, chk.lists[sp.Account], prog, func(Drift) {})
		if err != nil {
			return err
		}
		sum.Add(d)
		if d.Action != diff.ActionUnchanged || opts.Unchanged {
			if err := diff.RenderPlan(w, d, opts); err != nil {
				return err
			}
		}
		res := r.DryRun(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, started).Plans[0]
		compactResult(res)
		rep.Plans = append(rep.Plans, res)
		return nil
	})
	if err != nil {
		return nil, sum, err
	}
	if err := diff.RenderSummary(w, sum, opts); err != nil {
		return nil, sum, err
	}
	rep.Requests = r.gate.snapshot()
	rep.Finished = r.opts.now()
	return rep, sum, nil
}

// SavedNotApplied is the report of a streamed set whose run stopped
// before it was checked against the service (interrupted during the drift
// check): every plan of s, read again, not applied for the stop's cause,
// and nothing sent.
func (r *Runner) SavedNotApplied(ctx context.Context, s *savedset.StreamedSet, started time.Time) *RunReport {
	rep := &RunReport{Started: started}
	cause := r.gate.stopErr(ctx)
	if cause == nil {
		cause = pipeline.ErrStopped
	}
	// A file changed since it was verified lists the plans read before.
	_ = s.Plans(func(_ int, sp *savedset.SavedPlan) error {
		d := diff.Failed(savedInput(sp), "not compared: "+cause.Error())
		d.Account = sp.Account
		rep.Plans = append(rep.Plans, &PlanResult{Diff: d, PlanID: sp.PlanID, Outcome: OutcomeNotApplied, Err: cause})
		return nil
	})
	rep.Requests = r.gate.snapshot()
	rep.Fatal = r.gate.fatalErr()
	rep.Interrupted = ctx.Err() != nil
	rep.Finished = r.opts.now()
	return rep
}

// savedInput is the input plan a report names a saved plan by: its stored
// name as its title shows it, or its create request's name and dates.
func savedInput(sp *savedset.SavedPlan) *pipeline.InputPlan {
	in := &pipeline.InputPlan{PlanID: sp.PlanID}
	var id int64
	if n, _ := fmt.Sscanf(sp.Title, "plan %d %q", &id, &in.Name); n != 2 || id != sp.PlanID {
		in.Name = "" // the stored name, as Title shows it (the set keeps no other)
	}
	if sp.Create != nil {
		in.Name, in.StartDate, in.EndDate = sp.Create.Name, sp.Create.StartDate, sp.Create.EndDate
	}
	return in
}

// compactResult drops from a plan's result what a streamed run need not
// keep once the plan is written: the counters of its input, the stored
// plan's milestones and each target's counter changes (their count is
// kept in TargetResult.changed). What the run report and the
// recalculation read is kept.
func compactResult(res *PlanResult) {
	d := res.Diff
	if d == nil {
		return
	}
	c := *d
	if d.Input != nil {
		in := *d.Input
		in.Targets = make([]*pipeline.InputTarget, len(d.Input.Targets))
		slim := make(map[*pipeline.InputTarget]*pipeline.InputTarget, len(in.Targets))
		for i, t := range d.Input.Targets {
			in.Targets[i] = &pipeline.InputTarget{Origin: t.Origin, YearNumber: t.YearNumber, FinancialYear: t.FinancialYear, TargetType: t.TargetType}
			slim[t] = in.Targets[i]
		}
		c.Input = &in
		for i := range res.Targets {
			res.Targets[i].Diff.Input = slim[res.Targets[i].Diff.Input]
		}
	}
	for i := range res.Targets {
		tr := &res.Targets[i]
		tr.changed = tr.changeCount()
		tr.Diff.Changes = nil
	}
	if d.Server != nil {
		sv := *d.Server
		sv.Milestones = nil
		c.Server = &sv
	}
	c.Targets = nil
	res.Diff = &c
}
