package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/eepipe/eepipe/pipeline"
)

// stoppedError is the error of a request that was not sent; cause says why
// the run stopped.
type stoppedError struct{ cause error }

func (e *stoppedError) Error() string {
	var refused *pipeline.AccountRefusedError
	if errors.As(e.cause, &refused) {
		return "not sent: " + refused.Error()
	}
	var lost *pipeline.StoreLockLostError
	if errors.As(e.cause, &lost) {
		return "not sent: the run stopped when its lock of account " + lost.Account + " was lost"
	}
	if errors.Is(e.cause, context.Canceled) {
		return "not sent: the run was interrupted"
	}
	if errors.Is(e.cause, context.DeadlineExceeded) {
		return "not sent: the run ran out of time"
	}
	return fmt.Sprintf("not sent: the run stopped after a fatal error (%v)", e.cause)
}

// Is makes errors.Is(err, ErrStopped) true.
func (e *stoppedError) Is(target error) bool { return target == pipeline.ErrStopped }

// IsFatal reports whether err must stop the whole run: the key pair or the
// lookup credentials are refused, or a service is unreachable. Within a
// run, a refused key pair stops its own account only (AccountRefusedError),
// unless every account of the run is refused.
func IsFatal(err error) bool {
	return errors.Is(err, pipeline.ErrUnauthorized) || errors.Is(err, pipeline.ErrUnavailable)
}

// Request kinds counted by the gate.
const (
	kindList = iota
	kindGet
	kindCreate
	kindUpdate
	kindDelete
	kindTarget
	kindRecalc
	kindLookup
	numKinds
)

// isWrite reports whether requests of kind change the service.
func isWrite(kind int) bool {
	switch kind {
	case kindCreate, kindUpdate, kindDelete, kindTarget, kindRecalc:
		return true
	}
	return false
}

var kindNames = [numKinds]string{"list", "get", "create", "update_plan", "delete", "update_target", "recalculate", "lookup"}

// gate bounds the requests in flight across the whole run (all accounts and
// the lookup), counts them, and stops dispatching after a fatal error or
// when the run's context is cancelled. Requests already sent are finished
// with a context that is not cancelled, so that their outcome is known;
// their waits between attempts end with the run's context (WaitContext).
type gate struct {
	sem      chan struct{}
	counts   [numKinds]atomic.Int64
	accepted [numKinds]atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64

	// checkLock confirms the run's locks before each write (RunOptions.CheckLock).
	checkLock func(ctx context.Context) error

	mu      sync.Mutex
	fatal   error
	refused int // accounts stopped by a refused key pair
	used    int // accounts of the run
}

// accountStop is the stop of one account: its key pair was refused.
type accountStop struct {
	name, keyHint string

	mu  sync.Mutex
	err *pipeline.AccountRefusedError
}

func (s *accountStop) stopped() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return &stoppedError{cause: s.err}
	}
	return nil
}

func newGate(n int) *gate { return &gate{sem: make(chan struct{}, n)} }

// stopErr returns a *stoppedError when no new request may be sent.
func (g *gate) stopErr(ctx context.Context) error {
	g.mu.Lock()
	f := g.fatal
	g.mu.Unlock()
	if f != nil {
		return &stoppedError{cause: f}
	}
	if err := ctx.Err(); err != nil {
		return &stoppedError{cause: err}
	}
	return nil
}

// fatalErr returns the first fatal error, or nil.
func (g *gate) fatalErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fatal
}

// do sends one request through fn. unclearIsSafe marks a create: an
// unclear outcome there is handled by the caller (which lists the plans
// next), not treated as fatal. acct is the account the request is sent
// for (nil for the lookup): a refused key pair stops that account, and
// the whole run only once every account is refused.
func (g *gate) do(ctx context.Context, kind int, unclearIsSafe bool, acct *accountStop, fn func(context.Context) error) error {
	if err := g.stopErr(ctx); err != nil {
		return err
	}
	if err := acct.stopped(); err != nil {
		return err
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return &stoppedError{cause: ctx.Err()}
	}
	if err := g.stopErr(ctx); err != nil {
		<-g.sem
		return err
	}
	if g.checkLock != nil && isWrite(kind) {
		if err := g.checkLock(ctx); err != nil {
			// A lost lock: another run may be writing the account now.
			g.setFatal(err)
			<-g.sem
			return &stoppedError{cause: err}
		}
	}
	n := g.inFlight.Add(1)
	for {
		m := g.maxSeen.Load()
		if n <= m || g.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	g.counts[kind].Add(1)
	err := fn(pipeline.WithWaitContext(ctx))
	g.inFlight.Add(-1)
	<-g.sem
	if err == nil {
		g.accepted[kind].Add(1)
	}
	if acct != nil && errors.Is(err, pipeline.ErrUnauthorized) {
		return g.refuse(acct, err)
	}
	if err != nil && IsFatal(err) && !(unclearIsSafe && errors.Is(err, pipeline.ErrUnclearOutcome)) {
		g.setFatal(err)
	}
	return err
}

func (g *gate) setFatal(err error) {
	g.mu.Lock()
	if g.fatal == nil {
		g.fatal = err
	}
	g.mu.Unlock()
}

// refuse stops acct after its key pair was refused, and returns the
// account's error naming it. When every account of the run is refused the
// run stops: nothing is left to do.
func (g *gate) refuse(acct *accountStop, err error) error {
	acct.mu.Lock()
	first := acct.err == nil
	if first {
		acct.err = &pipeline.AccountRefusedError{Account: acct.name, KeyHint: acct.keyHint, Err: err}
	}
	refused := acct.err
	acct.mu.Unlock()
	if first {
		g.mu.Lock()
		g.refused++
		all := g.refused >= g.used
		g.mu.Unlock()
		if all {
			g.setFatal(refused)
		}
	}
	return refused
}

// RequestCounts are the requests a run sent, by kind.
type RequestCounts struct {
	Total int64 `json:"total"`
	// Writes counts the write requests the service accepted (2xx).
	Writes      int64            `json:"writes"`
	ByKind      map[string]int64 `json:"by_kind"`
	MaxInFlight int64            `json:"max_in_flight"`
}

func (g *gate) snapshot() RequestCounts {
	rc := RequestCounts{ByKind: map[string]int64{}, MaxInFlight: g.maxSeen.Load()}
	for k := range numKinds {
		n := g.counts[k].Load()
		if n == 0 {
			continue
		}
		rc.ByKind[kindNames[k]] = n
		rc.Total += n
		if isWrite(k) {
			rc.Writes += g.accepted[k].Load()
		}
	}
	return rc
}

// gatedService sends every call of one account's PlanService through the gate.
type gatedService struct {
	svc  pipeline.PlanService
	g    *gate
	acct *accountStop
}

func (s gatedService) ListPlans(ctx context.Context) (out []pipeline.Plan, err error) {
	err = s.g.do(ctx, kindList, false, s.acct, func(c context.Context) error { out, err = s.svc.ListPlans(c); return err })
	return out, err
}

func (s gatedService) GetPlan(ctx context.Context, id int64) (out *pipeline.Plan, err error) {
	err = s.g.do(ctx, kindGet, false, s.acct, func(c context.Context) error { out, err = s.svc.GetPlan(c, id); return err })
	return out, err
}

func (s gatedService) CreatePlan(ctx context.Context, p pipeline.NewPlan) (out *pipeline.Plan, err error) {
	err = s.g.do(ctx, kindCreate, true, s.acct, func(c context.Context) error { out, err = s.svc.CreatePlan(c, p); return err })
	return out, err
}

func (s gatedService) UpdatePlan(ctx context.Context, id int64, ch pipeline.PlanChange) (out *pipeline.Plan, err error) {
	err = s.g.do(ctx, kindUpdate, false, s.acct, func(c context.Context) error { out, err = s.svc.UpdatePlan(c, id, ch); return err })
	return out, err
}

func (s gatedService) DeletePlan(ctx context.Context, id int64) error {
	return s.g.do(ctx, kindDelete, false, s.acct, func(c context.Context) error { return s.svc.DeletePlan(c, id) })
}

func (s gatedService) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (out *pipeline.Target, err error) {
	err = s.g.do(ctx, kindTarget, false, s.acct, func(c context.Context) error {
		out, err = s.svc.UpdateTarget(c, planID, milestoneID, targetID, counters)
		return err
	})
	return out, err
}

func (s gatedService) PatchTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) error {
	return s.g.do(ctx, kindTarget, false, s.acct, func(c context.Context) error {
		return pipeline.PatchTarget(c, s.svc, planID, milestoneID, targetID, counters)
	})
}

func (s gatedService) RecalculateScorecard(ctx context.Context, id string) error {
	return s.g.do(ctx, kindRecalc, false, s.acct, func(c context.Context) error { return s.svc.RecalculateScorecard(c, id) })
}

// gatedFinder sends every lookup through the gate.
type gatedFinder struct {
	f pipeline.CompanyFinder
	g *gate
}

func (s gatedFinder) FindCompanies(ctx context.Context, ids pipeline.CompanyIDs) (out []pipeline.Company, err error) {
	err = s.g.do(ctx, kindLookup, false, nil, func(c context.Context) error { out, err = s.f.FindCompanies(c, ids); return err })
	return out, err
}
