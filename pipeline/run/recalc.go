package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"
)

// RecalcRequest names one scorecard to recalculate with its account's key pair.
type RecalcRequest struct {
	Account     string
	ScorecardID string
}

// recalcLinked recalculates, once each, the scorecards linked to plans
// that changed: the plan's scorecard after the run, and the one it was
// linked to before when the run rebound it.
func (r *Runner) recalcLinked(ctx context.Context, plans []*PlanResult) []*RecalcResult {
	var reqs []RecalcRequest
	seen := map[RecalcRequest]bool{}
	add := func(account, id string) {
		q := RecalcRequest{Account: account, ScorecardID: id}
		if id != "" && !seen[q] {
			seen[q] = true
			reqs = append(reqs, q)
		}
	}
	for _, p := range plans {
		if p == nil || !p.Wrote {
			continue
		}
		d := p.Diff
		switch {
		case d.Create != nil:
			add(d.Account, d.Create.ScorecardID)
		case d.Input.ScorecardID != "":
			add(d.Account, d.Input.ScorecardID)
		case d.Server != nil:
			add(d.Account, d.Server.ScorecardID)
		}
		if d.Server != nil {
			add(d.Account, d.Server.ScorecardID)
		}
	}
	return r.Recalc(ctx, reqs)
}

// Recalc asks the service to recalculate each scorecard, concurrently
// across scorecards. A 409 (a recalculation is already running) is waited
// through with a capped exponential backoff (pace.Exponential, the
// schedule of the client's retry policy) and the request sent again,
// until accepted or RunOptions.RecalcWait runs out; then that scorecard
// fails with a message that says so. Other errors fail the scorecard at
// once. Results are in the order of reqs.
func (r *Runner) Recalc(ctx context.Context, reqs []RecalcRequest) []*RecalcResult {
	out := make([]*RecalcResult, len(reqs))
	p := pool.New()
	var mu sync.Mutex
	for i, q := range reqs {
		p.Go(func() {
			res := r.recalcOne(ctx, q, &mu)
			out[i] = res
		})
	}
	p.Wait()
	return out
}

func (r *Runner) recalcOne(ctx context.Context, q RecalcRequest, mu *sync.Mutex) *RecalcResult {
	res := &RecalcResult{Account: q.Account, ScorecardID: q.ScorecardID}
	emit := func(ev RecalcEvent) {
		if r.opts.Observer != nil {
			mu.Lock()
			r.opts.Observer.Recalc(ev)
			mu.Unlock()
		}
	}
	svc := r.account(q.Account)
	if svc == nil {
		res.Err = fmt.Errorf("account %q is not configured", q.Account)
		emit(RecalcEvent{Account: q.Account, ScorecardID: q.ScorecardID, Done: true, Err: res.Err})
		return res
	}
	wait := r.opts.RecalcWait
	if wait <= 0 {
		wait = DefaultRecalcWait
	}
	first := r.opts.RecalcBackoff
	if first <= 0 {
		first = time.Second
	}
	maxBackoff := recalcBackoffSpan * first
	// The same backoff schedule as the client's retry policy, without
	// jitter: the waits are polling, and --recalc-wait bounds them.
	start := r.opts.now()
	pacer := pace.Pacer{
		Schedule: func() pace.Schedule { return pace.Exponential(first, maxBackoff) },
		Deadline: start.Add(wait),
		Now:      r.opts.now,
		Sleep:    r.opts.Sleep,
		OnWait: func(a pace.Attempt, d time.Duration, _ error) {
			emit(RecalcEvent{Account: q.Account, ScorecardID: q.ScorecardID, Attempt: a.N, Waiting: d})
		},
	}
	err := pacer.Call(ctx, func(a pace.Attempt) pace.Verdict {
		res.Attempts = a.N
		err := svc.RecalculateScorecard(ctx, q.ScorecardID)
		if errors.Is(err, pipeline.ErrConflict) {
			return pace.Again(err) // nothing started: safe to ask again
		}
		return pace.Done(err)
	})
	switch e := err.(type) {
	case nil:
		res.Accepted = true
		res.Waited = r.opts.now().Sub(start)
	case *pace.OutOfTime:
		res.Waited = e.At.Sub(start)
		res.Err = fmt.Errorf("scorecard %s was not recalculated: another recalculation was still running after waiting %s (--recalc-wait); "+
			"run `eepipe recalc %s` when it has finished", q.ScorecardID, res.Waited.Round(time.Second), q.ScorecardID)
	case *pace.Interrupted:
		res.Waited = r.opts.now().Sub(start)
		res.Err = fmt.Errorf("scorecard %s was not recalculated: the run was interrupted while a running recalculation was waited for", q.ScorecardID)
	default:
		res.Err = fmt.Errorf("scorecard %s was not recalculated: %w", q.ScorecardID, err)
	}
	emit(RecalcEvent{Account: q.Account, ScorecardID: q.ScorecardID, Attempt: res.Attempts, Done: true, Err: res.Err})
	return res
}

// scorecardChecker is implemented by a PlanService that can tell whether
// its account sees a scorecard (the service answers 404 for a scorecard
// of another account).
type scorecardChecker interface {
	HasScorecard(ctx context.Context, scorecardID string) (bool, error)
}

// UnownedScorecard is a scorecard that no account that answered sees
// while an account's key pair was refused (Err, an *AccountRefusedError
// in it): it may be that account's, and is not recalculated.
type UnownedScorecard struct {
	ScorecardID string
	Err         error
}

// RecalcRequests decides which account recalculates each scorecard of
// ids (each once, in the order first named): account for all when it is
// not "" (the caller resolves its configured name), else the one account
// that sees it (ScorecardOwner, one GET per account). A scorecard left
// unowned by a refused key pair is returned in unowned and the others go
// on; any other failure to find an owner stops (ErrScorecardOwner in the
// error: the input's; else the service's).
func RecalcRequests(ctx context.Context, accounts []pipeline.Account, account string, ids []string) (reqs []RecalcRequest, unowned []UnownedScorecard, err error) {
	owner, refused := map[string]string{}, map[string]error{}
	for _, id := range ids {
		if account != "" {
			owner[id] = account
			continue
		}
		if _, done := owner[id]; done {
			continue
		}
		if _, done := refused[id]; done {
			continue
		}
		name, err := ScorecardOwner(ctx, accounts, id)
		if errors.As(err, new(*pipeline.AccountRefusedError)) && !errors.Is(err, ErrScorecardOwner) {
			refused[id] = err
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		owner[id] = name
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if err, ok := refused[id]; ok && !seen[id] {
			unowned = append(unowned, UnownedScorecard{ScorecardID: id, Err: err})
		}
		if !seen[id] {
			seen[id] = true
			if _, ok := refused[id]; !ok {
				reqs = append(reqs, RecalcRequest{Account: owner[id], ScorecardID: id})
			}
		}
	}
	return reqs, unowned, nil
}

// ErrScorecardOwner is in the error of ScorecardOwner when no account, or
// several, see the scorecard (rather than a service that could not be asked).
var ErrScorecardOwner = errors.New("no single owner")

// ScorecardOwner returns the account that sees scorecard id, asking each
// account once (one GET each). It fails when no account sees it, when
// several do (the caller must choose), or when an account cannot be asked.
// An account whose key pair is refused (401) does not stop the others:
// when exactly one of them sees the scorecard, that is its owner; when
// none does, the error is the refused account's *AccountRefusedError
// (the scorecard may be that account's).
func ScorecardOwner(ctx context.Context, accounts []pipeline.Account, id string) (string, error) {
	var owners []string
	var refused error
	for _, a := range accounts {
		sc, ok := a.Service.(scorecardChecker)
		if !ok {
			return "", fmt.Errorf("account %s cannot look scorecards up", a.Name)
		}
		has, err := sc.HasScorecard(ctx, id)
		var ar *pipeline.AccountRefusedError
		switch {
		case errors.As(err, &ar):
			refused = errors.Join(refused, ar)
			continue
		case errors.Is(err, pipeline.ErrUnauthorized):
			refused = errors.Join(refused, &pipeline.AccountRefusedError{Account: a.Name, KeyHint: a.KeyHint, Err: err})
			continue
		case err != nil:
			return "", fmt.Errorf("account %s: look up %s: %w", a.Name, id, err)
		}
		if has {
			owners = append(owners, a.Name)
		}
	}
	if len(owners) == 0 && refused != nil {
		return "", fmt.Errorf("no account that answered sees %s; %w", id, refused)
	}
	switch len(owners) {
	case 0:
		names := make([]string, len(accounts))
		for i, a := range accounts {
			names[i] = a.Name
		}
		return "", fmt.Errorf("%s is not a scorecard of any configured account (%s): %w", id, strings.Join(names, ", "), ErrScorecardOwner)
	case 1:
		return owners[0], nil
	}
	return "", fmt.Errorf("%s is seen by several accounts (%s): name the one to use with --account: %w", id, strings.Join(owners, ", "), ErrScorecardOwner)
}
