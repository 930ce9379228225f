package planapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// Service is the plan API of one account as a pipeline.PlanService: the
// client's calls with the domain types and errors.
type Service struct{ c *apiclient.Client }

var _ pipeline.PlanService = (*Service)(nil)

// waits returns ctx with the run's context for the client's waits between
// attempts (pipeline.WaitContext): a request already sent runs on, but
// the client waits out no Retry-After, and starts no further attempt,
// once the run is interrupted.
func waits(ctx context.Context) context.Context {
	return apiclient.WithWaitContext(ctx, pipeline.WaitContext(ctx))
}

// New returns c as a pipeline.PlanService.
func New(c *apiclient.Client) *Service { return &Service{c} }

// ListPlans returns every plan of the account (without milestones).
func (s *Service) ListPlans(ctx context.Context) ([]pipeline.Plan, error) {
	wire, err := s.c.ListPlans(waits(ctx))
	if err != nil {
		return nil, Err(err)
	}
	out := make([]pipeline.Plan, 0, len(wire))
	for i := range wire {
		p, err := planToDomain(&wire[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// GetPlan returns one plan with its milestones and targets.
func (s *Service) GetPlan(ctx context.Context, id int64) (*pipeline.Plan, error) {
	p, err := s.c.GetPlan(waits(ctx), id)
	if err != nil {
		return nil, Err(err)
	}
	return planToDomain(p)
}

// CreatePlan creates a plan (see apiclient.Client.CreatePlan).
func (s *Service) CreatePlan(ctx context.Context, np pipeline.NewPlan) (*pipeline.Plan, error) {
	p, err := s.c.CreatePlan(waits(ctx), apiclient.PlanCreate{
		Name:        np.Name,
		StartDate:   np.StartDate.String(),
		EndDate:     np.EndDate.String(),
		ScorecardID: np.ScorecardID,
		Sector:      np.Sector,
	})
	if err != nil {
		return nil, Err(err)
	}
	return planToDomain(p)
}

// UpdatePlan changes a plan's metadata.
func (s *Service) UpdatePlan(ctx context.Context, id int64, ch pipeline.PlanChange) (*pipeline.Plan, error) {
	p, err := s.c.UpdatePlan(waits(ctx), id, planUpdateFrom(ch))
	if err != nil {
		return nil, Err(err)
	}
	return planToDomain(p)
}

// DeletePlan deletes a plan.
func (s *Service) DeletePlan(ctx context.Context, id int64) error {
	return Err(s.c.DeletePlan(waits(ctx), id))
}

// UpdateTarget sets counters of one target and returns it as stored.
func (s *Service) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*pipeline.Target, error) {
	t, err := s.c.UpdateTarget(waits(ctx), planID, milestoneID, targetID, counters)
	if err != nil {
		return nil, Err(err)
	}
	d := targetToDomain(*t)
	return &d, nil
}

// PatchTarget sets counters of one target without reading the answer
// back; it satisfies pipeline.TargetPatcher, which apply uses.
func (s *Service) PatchTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) error {
	return Err(s.c.PatchTarget(waits(ctx), planID, milestoneID, targetID, counters))
}

// RecalculateScorecard starts a recalculation of a scorecard.
func (s *Service) RecalculateScorecard(ctx context.Context, scorecardID string) error {
	return Err(s.c.RecalculateScorecard(waits(ctx), scorecardID))
}

// planUpdateFrom converts a domain plan change to the wire body: nil fields
// are not sent, and a pointer to "" sends null for scorecard_id and sector.
func planUpdateFrom(ch pipeline.PlanChange) apiclient.PlanUpdate {
	var u apiclient.PlanUpdate
	if ch.Name != nil {
		n := *ch.Name
		u.Name = &n
	}
	if ch.ScorecardID != nil {
		v := apiclient.NullString(*ch.ScorecardID)
		u.ScorecardID = &v
	}
	if ch.Sector != nil {
		v := apiclient.NullString(*ch.Sector)
		u.Sector = &v
	}
	return u
}

// planToDomain converts a plan the service returned to the domain type.
// Empty dates stay zero; a malformed date is an error naming the plan.
func planToDomain(p *apiclient.Plan) (*pipeline.Plan, error) {
	out := &pipeline.Plan{
		ID:          p.ID,
		Name:        p.Name,
		ScorecardID: deref(p.ScorecardID),
		Sector:      deref(p.Sector),
		Era:         p.Era,
		CreatedAt:   p.CreatedAt,
		UpdatedAt:   p.UpdatedAt,
	}
	var err error
	if out.StartDate, err = parseWireDate(p.StartDate); err != nil {
		return nil, fmt.Errorf("plan %d from the service: start_date: %w", p.ID, err)
	}
	if out.EndDate, err = parseWireDate(p.EndDate); err != nil {
		return nil, fmt.Errorf("plan %d from the service: end_date: %w", p.ID, err)
	}
	if p.Milestones != nil {
		out.Milestones = make([]pipeline.Milestone, 0, len(p.Milestones))
	}
	for _, m := range p.Milestones {
		dm := pipeline.Milestone{ID: m.ID, YearNumber: m.YearNumber}
		if dm.StartDate, err = parseWireDate(m.StartDate); err != nil {
			return nil, fmt.Errorf("plan %d from the service: milestone %d: start_date: %w", p.ID, m.ID, err)
		}
		if dm.EndDate, err = parseWireDate(m.EndDate); err != nil {
			return nil, fmt.Errorf("plan %d from the service: milestone %d: end_date: %w", p.ID, m.ID, err)
		}
		for _, t := range m.Targets {
			dm.Targets = append(dm.Targets, targetToDomain(t))
		}
		out.Milestones = append(out.Milestones, dm)
	}
	return out, nil
}

// targetToDomain converts a target: its counters map becomes dense
// Counters, laid out by a catalog holding every counter the service sent
// (pipeline.CountersOf), so that none is lost.
func targetToDomain(t apiclient.Target) pipeline.Target {
	c := t.Counters
	if c == nil {
		c = map[string]int64{} // a target without counters is still there
	}
	return pipeline.Target{ID: t.ID, TargetType: t.TargetType, Counters: pipeline.CountersOf(c)}
}

func parseWireDate(s string) (pipeline.Date, error) {
	if s == "" {
		return pipeline.Date{}, nil
	}
	return pipeline.ParseDate(s)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Finder is the company lookup as a pipeline.CompanyFinder.
type Finder struct{ c *apiclient.Client }

var _ pipeline.CompanyFinder = (*Finder)(nil)

// NewFinder returns c's company search as a pipeline.CompanyFinder.
func NewFinder(c *apiclient.Client) *Finder { return &Finder{c} }

// FindCompanies searches companies by any of the identifiers.
func (f *Finder) FindCompanies(ctx context.Context, ids pipeline.CompanyIDs) ([]pipeline.Company, error) {
	wire, err := f.c.SearchCompanies(waits(ctx), apiclient.CompanyQuery{VATNumber: ids.VAT, RegistrationNumber: ids.Registration, IDNumber: ids.IDNumber})
	if err != nil {
		return nil, Err(err)
	}
	out := make([]pipeline.Company, 0, len(wire))
	for _, w := range wire {
		out = append(out, companyToDomain(w))
	}
	return out, nil
}

// companyToDomain converts a company record; null identifiers become "".
func companyToDomain(w apiclient.Company) pipeline.Company {
	return pipeline.Company{
		ID:                   w.ID,
		Commodity:            w.Commodity,
		IdentificationNumber: deref(w.IdentificationNumber),
		Region:               w.Region,
		RegistrationNumber:   deref(w.RegistrationNumber),
		TradingName:          w.TradingName,
		VATNumber:            w.VATNumber,
	}
}

// HasScorecard reports whether the account sees the scorecard (GET
// /scorecards/{id}; a 404 means it does not): pipeline's scorecardChecker.
func (s *Service) HasScorecard(ctx context.Context, scorecardID string) (bool, error) {
	_, err := s.c.GetScorecard(waits(ctx), scorecardID)
	err = Err(err)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, pipeline.ErrNotFound):
		return false, nil
	}
	return false, err
}

// ListScorecards lists the account's scorecards: pipeline's scorecardLister.
func (s *Service) ListScorecards(ctx context.Context) ([]pipeline.Scorecard, error) {
	wire, err := s.c.ListScorecards(waits(ctx))
	if err != nil {
		return nil, Err(err)
	}
	out := make([]pipeline.Scorecard, 0, len(wire))
	for _, w := range wire {
		out = append(out, pipeline.Scorecard{ID: w.ID, Description: w.Description, StartDate: w.StartDate, EndDate: w.EndDate,
			CharterID: w.CharterID, Province: w.Province})
	}
	return out, nil
}
