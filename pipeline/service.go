package pipeline

import (
	"context"
	"errors"
	"fmt"
)

// Plan is a plan as the service stores it. Empty ScorecardID and Sector mean
// null.
type Plan struct {
	ID          int64
	Name        string
	StartDate   Date
	EndDate     Date
	ScorecardID string
	Sector      string
	Era         string
	CreatedAt   string
	UpdatedAt   string
	Milestones  []Milestone // nil in list responses
}

// Milestone is one financial year of a stored plan.
type Milestone struct {
	ID         int64
	YearNumber int
	StartDate  Date
	EndDate    Date
	Targets    []Target
}

// Target is one stored target: its id, type and every counter the server
// holds. Its counters are laid out by a catalog holding every counter the
// service sent (see CountersOf), known to the input catalog or not.
type Target struct {
	ID         int64
	TargetType string
	Counters   Counters
}

// NewPlan is what creating a plan sends. Empty strings are left out.
type NewPlan struct {
	Name        string
	StartDate   Date
	EndDate     Date
	ScorecardID string
	Sector      string
}

// PlanService is what the pipeline needs of the plan API for one account.
// planapi satisfies it over the wire client; every call is made with that
// account's key pair.
type PlanService interface {
	ListPlans(ctx context.Context) ([]Plan, error)
	GetPlan(ctx context.Context, id int64) (*Plan, error)
	CreatePlan(ctx context.Context, p NewPlan) (*Plan, error)
	UpdatePlan(ctx context.Context, id int64, c PlanChange) (*Plan, error)
	DeletePlan(ctx context.Context, id int64) error
	UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*Target, error)
	RecalculateScorecard(ctx context.Context, scorecardID string) error
}

// Company is a company record of the lookup service.
type Company struct {
	ID                   string
	Commodity            string
	IdentificationNumber string
	Region               string
	RegistrationNumber   string
	TradingName          string
	VATNumber            string
}

// CompanyFinder searches companies by identifiers; a record matches when
// any one identifier matches (OR).
type CompanyFinder interface {
	FindCompanies(ctx context.Context, ids CompanyIDs) ([]Company, error)
}

// Account is one configured account: the company it owns and the service
// bound to its key pair.
type Account struct {
	Name      string
	CompanyID string
	// Company are the identifiers the configuration gives for the
	// account's company (vat_number, registration_number, id_number);
	// zero when it gives none.
	Company CompanyIDs
	// KeyHint names the key pair in messages without revealing it: the
	// key's first characters (never the secret), "" when unknown.
	KeyHint string
	Service PlanService
}

// KeyHint returns the first characters of an API key followed by an
// ellipsis, for messages that must name a key without revealing it: at most
// 8 characters and never more than a third of the key.
func KeyHint(key string) string {
	r := []rune(key)
	n := min(8, len(r)/3)
	if n == 0 {
		return ""
	}
	return string(r[:n]) + "…"
}

// AccountRefusedError is the error of a request an account's key pair was
// refused for (401/403). It stops that account only: the other accounts'
// plans go on.
type AccountRefusedError struct {
	Account string
	KeyHint string
	Err     error
}

func (e *AccountRefusedError) Error() string {
	key := "its key"
	if e.KeyHint != "" {
		key = "key " + e.KeyHint
	}
	return fmt.Sprintf("account %s: %s refused: check its secret (%v)", e.Account, key, e.Err)
}

// Unwrap returns the service's error (it matches ErrUnauthorized).
func (e *AccountRefusedError) Unwrap() error { return e.Err }

// TargetPatcher is implemented by a PlanService that can set a target's
// counters without reading the stored target back (the client then skips
// decoding the answer). Apply uses it when the service has it.
type TargetPatcher interface {
	PatchTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) error
}

// patchTarget sets counters through svc's PatchTarget when it has one, and
// through UpdateTarget otherwise.
func PatchTarget(ctx context.Context, svc PlanService, planID, milestoneID, targetID int64, counters map[string]int64) error {
	if tp, ok := svc.(TargetPatcher); ok {
		return tp.PatchTarget(ctx, planID, milestoneID, targetID, counters)
	}
	_, err := svc.UpdateTarget(ctx, planID, milestoneID, targetID, counters)
	return err
}

// Errors that PlanService and CompanyFinder implementations wrap (their
// error values match these with errors.Is), so that the pipeline can tell
// outcomes apart without knowing HTTP.
var (
	ErrUnauthorized   = errors.New("not authorised (the key is unknown, expired or the signature is wrong)")
	ErrNotFound       = errors.New("not found on the account")
	ErrConflict       = errors.New("conflict: a recalculation is already running")
	ErrInvalid        = errors.New("rejected by the service as invalid")
	ErrRateLimited    = errors.New("rate limited by the service")
	ErrUnclearOutcome = errors.New("no clear answer from the service; the request may or may not have been applied")
	ErrUnavailable    = errors.New("the service is unreachable")
	// ErrMaybeApplied is matched by the error of a write other than a
	// create that failed although an attempt of it may have been applied
	// (an earlier attempt got no clear answer).
	ErrMaybeApplied = errors.New("an attempt of the request may have been applied")
)

// Scorecard is a scorecard as the service lists it: the scorecard a plan
// names in scorecard_id (eepipe scorecards, docs/apply-and-state.md).
type Scorecard struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	StartDate   string `json:"start_date"`
	EndDate     string `json:"end_date"`
	CharterID   string `json:"charter_id"`
	Province    string `json:"province"`
}

// ScorecardsHint is where a message about a scorecard_id points: the
// command that lists the ids each account has.
const ScorecardsHint = "eepipe scorecards lists each account's scorecards"

// ErrStopped is matched (errors.Is) by the error of a request that was not
// applied because the run stopped: it was not sent (the run was
// interrupted, or an earlier request failed fatally), or the service
// refused it for the moment (busy, rate limited) and the run was
// interrupted while waiting to send it again.
var ErrStopped = errors.New("not sent: the run stopped")

// waitCtxKey is the context key of WaitContext.
type waitCtxKey struct{}

// WaitContext returns the context that ends the waits of a request sent
// with ctx: a request of a run goes out with a context that is never
// cancelled (so that a request already sent finishes and its outcome is
// known), which carries the run's own context for its waits between
// attempts; an adapter whose client retries ends those waits, and starts
// no further attempt, when this context ends (see planapi). Outside a run
// it is ctx.
func WaitContext(ctx context.Context) context.Context {
	if w, ok := ctx.Value(waitCtxKey{}).(context.Context); ok && w != nil {
		return w
	}
	return ctx
}

// WithWaitContext returns a context for a request that is never cancelled
// (a request already sent finishes and its outcome is known) and whose
// WaitContext is wait, the run's own context, which ends the waits
// between its attempts.
func WithWaitContext(wait context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(wait), waitCtxKey{}, wait)
}
