package apiclient

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/eepipe/eepipe/pipeline"
)

// NewPlanService returns c as a pipeline.PlanService: the same calls with
// the domain types (dates parsed, null scorecard_id and sector as "").
func NewPlanService(c *Client) pipeline.PlanService { return planService{c} }

type planService struct{ c *Client }

func (s planService) ListPlans(ctx context.Context) ([]pipeline.Plan, error) {
	wire, err := s.c.ListPlans(ctx)
	if err != nil {
		return nil, err
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

func (s planService) GetPlan(ctx context.Context, id int64) (*pipeline.Plan, error) {
	p, err := s.c.GetPlan(ctx, id)
	if err != nil {
		return nil, err
	}
	return planToDomain(p)
}

func (s planService) CreatePlan(ctx context.Context, np pipeline.NewPlan) (*pipeline.Plan, error) {
	p, err := s.c.CreatePlan(ctx, PlanCreate{
		Name:        np.Name,
		StartDate:   np.StartDate.String(),
		EndDate:     np.EndDate.String(),
		ScorecardID: np.ScorecardID,
		Sector:      np.Sector,
	})
	if err != nil {
		return nil, err
	}
	return planToDomain(p)
}

func (s planService) UpdatePlan(ctx context.Context, id int64, ch pipeline.PlanChange) (*pipeline.Plan, error) {
	p, err := s.c.UpdatePlan(ctx, id, planUpdateFrom(ch))
	if err != nil {
		return nil, err
	}
	return planToDomain(p)
}

func (s planService) DeletePlan(ctx context.Context, id int64) error {
	return s.c.DeletePlan(ctx, id)
}

func (s planService) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*pipeline.Target, error) {
	t, err := s.c.UpdateTarget(ctx, planID, milestoneID, targetID, counters)
	if err != nil {
		return nil, err
	}
	d := targetToDomain(*t)
	return &d, nil
}

func (s planService) RecalculateScorecard(ctx context.Context, scorecardID string) error {
	return s.c.RecalculateScorecard(ctx, scorecardID)
}

// planUpdateFrom converts a domain plan change to the wire body: nil fields
// are not sent, and a pointer to "" sends null for scorecard_id and sector.
func planUpdateFrom(ch pipeline.PlanChange) PlanUpdate {
	var u PlanUpdate
	if ch.Name != nil {
		n := *ch.Name
		u.Name = &n
	}
	if ch.ScorecardID != nil {
		v := NullString(*ch.ScorecardID)
		u.ScorecardID = &v
	}
	if ch.Sector != nil {
		v := NullString(*ch.Sector)
		u.Sector = &v
	}
	return u
}

// planToDomain converts a plan the service returned to the domain type.
// Empty dates stay zero; a malformed date is an error naming the plan.
func planToDomain(p *Plan) (*pipeline.Plan, error) {
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

// targetToDomain converts a target (its counters map is copied).
func targetToDomain(t Target) pipeline.Target {
	c := maps.Clone(t.Counters)
	if c == nil {
		c = map[string]int64{}
	}
	return pipeline.Target{ID: t.ID, TargetType: t.TargetType, Counters: c}
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

// NewCompanyFinder returns c's company search as a pipeline.CompanyFinder.
func NewCompanyFinder(c *Client) pipeline.CompanyFinder { return companyFinder{c} }

type companyFinder struct{ c *Client }

func (f companyFinder) FindCompanies(ctx context.Context, ids pipeline.CompanyIDs) ([]pipeline.Company, error) {
	wire, err := f.c.SearchCompanies(ctx, CompanyQuery{VATNumber: ids.VAT, RegistrationNumber: ids.Registration, IDNumber: ids.IDNumber})
	if err != nil {
		return nil, err
	}
	out := make([]pipeline.Company, 0, len(wire))
	for _, w := range wire {
		out = append(out, companyToDomain(w))
	}
	return out, nil
}

// companyToDomain converts a company record; null identifiers become "".
func companyToDomain(w Company) pipeline.Company {
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

// CatalogFromTarget returns the counter catalog a target the server
// returned shows: its number_of_* names, known ones in the default
// catalog's order, then the others sorted (contract-notes B: the client
// prefers the catalog the live server shows).
func CatalogFromTarget(t Target) (*pipeline.Catalog, error) {
	if len(t.Counters) == 0 {
		return nil, fmt.Errorf("target %d from the service carries no number_of_* counters", t.ID)
	}
	c, err := pipeline.CatalogFromCounters(t.Counters)
	if err != nil {
		return nil, fmt.Errorf("target %d from the service: %w", t.ID, err)
	}
	return c, nil
}

// HasScorecard reports whether the account sees the scorecard (GET
// /scorecards/{id}; a 404 means it does not): pipeline.ScorecardChecker.
func (s planService) HasScorecard(ctx context.Context, scorecardID string) (bool, error) {
	_, err := s.c.GetScorecard(ctx, scorecardID)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, pipeline.ErrNotFound):
		return false, nil
	}
	return false, err
}
