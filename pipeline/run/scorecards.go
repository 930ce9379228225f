package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/sourcegraph/conc/pool"
)

// scorecardLister is implemented by a PlanService that lists its
// account's scorecards (planapi).
type scorecardLister interface {
	ListScorecards(ctx context.Context) ([]pipeline.Scorecard, error)
}

// ListScorecards lists the scorecards of one account, through the gate.
func (s gatedService) ListScorecards(ctx context.Context) (out []pipeline.Scorecard, err error) {
	l, ok := s.svc.(scorecardLister)
	if !ok {
		return nil, fmt.Errorf("account %s cannot list scorecards", s.acct.name)
	}
	err = s.g.do(ctx, kindList, false, s.acct, func(c context.Context) error { out, err = l.ListScorecards(c); return err })
	return out, err
}

// AccountScorecards are one account's scorecards, in the order the
// service lists them; Refused says why an account whose key pair was
// refused could not be listed.
type AccountScorecards struct {
	Account    string               `json:"account"`
	Scorecards []pipeline.Scorecard `json:"scorecards"`
	Refused    string               `json:"refused,omitempty"`
}

// ListScorecards lists the scorecards of every account of the runner, one
// request each, concurrently through the gate. An account whose key pair
// is refused is listed with Refused and the others go on (refused counts
// them); any other failure, or every account refused, is an error naming
// the account.
func (r *Runner) ListScorecards(ctx context.Context) (out []AccountScorecards, refused int, err error) {
	out = make([]AccountScorecards, len(r.accounts))
	errs := make([]error, len(r.accounts))
	p := pool.New() // the gate bounds the requests in flight
	for i, a := range r.accounts {
		out[i] = AccountScorecards{Account: a.Name, Scorecards: []pipeline.Scorecard{}}
		p.Go(func() {
			l, ok := a.Service.(scorecardLister)
			if !ok {
				errs[i] = fmt.Errorf("account %s cannot list scorecards", a.Name)
				return
			}
			sc, err := l.ListScorecards(ctx)
			if sc != nil {
				out[i].Scorecards = sc
			}
			errs[i] = err
		})
	}
	p.Wait()
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, 0, err
	}
	for i, err := range errs {
		var ar *pipeline.AccountRefusedError
		switch {
		case err == nil:
		case errors.As(err, &ar):
			out[i].Refused = ar.Error()
			refused++
		default:
			return nil, 0, fmt.Errorf("listing the scorecards of account %s: %w", r.accounts[i].Name, err)
		}
	}
	return out, refused, nil
}

// ScorecardProblems returns, for each plan of cs that would send a
// scorecard_id (a plan created with one, or one set by an update), a
// message when its account does not list that scorecard: the service
// would refuse the plan (422). One list request per account concerned,
// through the gate; an account that cannot be listed is not checked (the
// run reports its error where it reads the account).
func (r *Runner) ScorecardProblems(ctx context.Context, cs *diff.ChangeSet) []string {
	known := map[string]map[string]bool{} // account -> scorecard ids; nil: not listed
	var out []string
	for _, d := range cs.Plans {
		id := sentScorecard(d)
		if id == "" || d.Account == "" {
			continue
		}
		ids, done := known[d.Account]
		if !done {
			if l, ok := r.account(d.Account).(scorecardLister); ok {
				if list, err := l.ListScorecards(ctx); err == nil {
					ids = map[string]bool{}
					for _, s := range list {
						ids[s.ID] = true
					}
				}
			}
			known[d.Account] = ids
		}
		if ids != nil && !ids[id] {
			out = append(out, fmt.Sprintf("%s names scorecard_id %s, which account %s does not have: the service would refuse the plan; %s",
				d.Title(), id, d.Account, pipeline.ScorecardsHint))
		}
	}
	return out
}

// sentScorecard is the scorecard id d sends: the create's, or the
// update's when it sets one ("" when it sends none, or clears it).
func sentScorecard(d *diff.PlanDiff) string {
	switch {
	case d.Action == diff.ActionCreate && d.Create != nil:
		return d.Create.ScorecardID
	case d.Action == diff.ActionUpdate && d.Meta.ScorecardID != nil:
		return *d.Meta.ScorecardID
	}
	return ""
}
