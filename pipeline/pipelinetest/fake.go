package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fakeService is an in-memory PlanService for one account, close enough to
// the contract for the pipeline's tests: milestones per financial year,
// two targets each, prefill from scorecards, 404s, and injectable faults.
type FakeService struct {
	Mu         sync.Mutex
	Plans      map[int64]*pipeline.Plan
	NextID     *atomic.Int64 // shared across accounts, like a real database
	prefill    map[string]int64
	scorecards map[string]bool

	Calls    map[string]int
	inFlight atomic.Int64
	MaxSeen  atomic.Int64
	Delay    time.Duration

	LostCreates  int               // creates applied whose answer is lost
	FailCreates  int               // creates refused with an unclear outcome before being applied
	RateLimited  int               // creates refused with 429
	Conflicts    int               // recalculations answered 409 before one is accepted
	Unauthorized bool              // every call fails with ErrUnauthorized
	FailTarget   int64             // target id whose patch fails with ErrInvalid
	Catalog      *pipeline.Catalog // the counters targets carry; nil: the default catalog
}

func NewFakeService(ids *atomic.Int64, scorecards ...string) *FakeService {
	s := &FakeService{Plans: map[int64]*pipeline.Plan{}, NextID: ids, Calls: map[string]int{}, scorecards: map[string]bool{}, prefill: map[string]int64{}}
	for _, sc := range scorecards {
		s.scorecards[sc] = true
	}
	for _, n := range pipeline.DefaultCatalog().Names() {
		s.prefill[n] = 7
	}
	return s
}

func (s *FakeService) enter(name string) func() {
	n := s.inFlight.Add(1)
	for {
		m := s.MaxSeen.Load()
		if n <= m || s.MaxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	s.Mu.Lock()
	s.Calls[name]++
	s.Mu.Unlock()
	if s.Delay > 0 {
		time.Sleep(s.Delay)
	}
	return func() { s.inFlight.Add(-1) }
}

func (s *FakeService) Count(name string) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Calls[name]
}

func (s *FakeService) Writes() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Calls["create"] + s.Calls["update"] + s.Calls["delete"] + s.Calls["target"] + s.Calls["recalc"]
}

func clonePlan(p *pipeline.Plan) *pipeline.Plan {
	c := *p
	c.Milestones = slices.Clone(p.Milestones)
	for i := range c.Milestones {
		c.Milestones[i].Targets = slices.Clone(c.Milestones[i].Targets)
		for j := range c.Milestones[i].Targets {
			c.Milestones[i].Targets[j].Counters = c.Milestones[i].Targets[j].Counters.Clone()
		}
	}
	return &c
}

func (s *FakeService) ListPlans(ctx context.Context) ([]pipeline.Plan, error) {
	defer s.enter("list")()
	if s.Unauthorized {
		return nil, pipeline.ErrUnauthorized
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	var out []pipeline.Plan
	for _, p := range s.Plans {
		c := *p
		c.Milestones = nil
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b pipeline.Plan) int { return int(a.ID - b.ID) })
	return out, nil
}

func (s *FakeService) GetPlan(ctx context.Context, id int64) (*pipeline.Plan, error) {
	defer s.enter("get")()
	if s.Unauthorized {
		return nil, pipeline.ErrUnauthorized
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.Plans[id]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	return clonePlan(p), nil
}

func (s *FakeService) CreatePlan(ctx context.Context, np pipeline.NewPlan) (*pipeline.Plan, error) {
	defer s.enter("create")()
	if s.Unauthorized {
		return nil, pipeline.ErrUnauthorized
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.RateLimited > 0 {
		s.RateLimited--
		return nil, fmt.Errorf("429: %w", pipeline.ErrRateLimited)
	}
	if s.FailCreates > 0 {
		s.FailCreates--
		return nil, fmt.Errorf("503: %w", pipeline.ErrUnclearOutcome)
	}
	if np.ScorecardID != "" && !s.scorecards[np.ScorecardID] {
		return nil, fmt.Errorf("scorecard not found: %w", pipeline.ErrInvalid)
	}
	p := &pipeline.Plan{ID: s.NextID.Add(1), Name: np.Name, StartDate: np.StartDate, EndDate: pipeline.ClampEnd(np.EndDate),
		ScorecardID: np.ScorecardID, Sector: np.Sector, Era: pipeline.EraPost2025}
	for i, fy := range pipeline.PlanYears(p.StartDate, p.EndDate) {
		m := pipeline.Milestone{ID: s.NextID.Add(1), YearNumber: i + 1, StartDate: fy.Start(), EndDate: fy.End()}
		for _, tt := range pipeline.TargetTypes {
			t := pipeline.Target{ID: s.NextID.Add(1), TargetType: tt, Counters: pipeline.CountersOf(map[string]int64{})}
			names := pipeline.DefaultCatalog().Names()
			if s.Catalog != nil {
				names = s.Catalog.Names()
			}
			for _, n := range names {
				if np.ScorecardID != "" {
					t.Counters.Put(n, s.prefill[n])
				} else {
					t.Counters.Put(n, 0)
				}
			}
			m.Targets = append(m.Targets, t)
		}
		p.Milestones = append(p.Milestones, m)
	}
	s.Plans[p.ID] = p
	if s.LostCreates > 0 {
		s.LostCreates--
		return nil, fmt.Errorf("connection reset: %w", pipeline.ErrUnclearOutcome)
	}
	return clonePlan(p), nil
}

func (s *FakeService) UpdatePlan(ctx context.Context, id int64, c pipeline.PlanChange) (*pipeline.Plan, error) {
	defer s.enter("update")()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.Plans[id]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	if c.Name != nil {
		p.Name = *c.Name
	}
	if c.Sector != nil {
		p.Sector = *c.Sector
	}
	if c.ScorecardID != nil {
		p.ScorecardID = *c.ScorecardID
	}
	return clonePlan(p), nil
}

func (s *FakeService) DeletePlan(ctx context.Context, id int64) error {
	defer s.enter("delete")()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if _, ok := s.Plans[id]; !ok {
		return pipeline.ErrNotFound
	}
	delete(s.Plans, id)
	return nil
}

func (s *FakeService) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*pipeline.Target, error) {
	defer s.enter("target")()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if targetID == s.FailTarget {
		return nil, fmt.Errorf("counter invalid: %w", pipeline.ErrInvalid)
	}
	p, ok := s.Plans[planID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	for i := range p.Milestones {
		m := &p.Milestones[i]
		if m.ID != milestoneID {
			continue
		}
		for j := range m.Targets {
			t := &m.Targets[j]
			if t.ID == targetID {
				for n, v := range counters {
					t.Counters.Put(n, v)
				}
				c := *t
				c.Counters = t.Counters.Clone()
				return &c, nil
			}
		}
	}
	return nil, pipeline.ErrNotFound
}

func (s *FakeService) RecalculateScorecard(ctx context.Context, id string) error {
	defer s.enter("recalc")()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if !s.scorecards[id] {
		return pipeline.ErrNotFound
	}
	if s.Conflicts > 0 {
		s.Conflicts--
		return fmt.Errorf("409: %w", pipeline.ErrConflict)
	}
	return nil
}

// fakeFinder is an in-memory company lookup with OR semantics.
type FakeFinder struct {
	Companies []pipeline.Company
	Calls     atomic.Int64
	Err       error
}

func (f *FakeFinder) FindCompanies(ctx context.Context, ids pipeline.CompanyIDs) ([]pipeline.Company, error) {
	f.Calls.Add(1)
	if f.Err != nil {
		return nil, f.Err
	}
	var out []pipeline.Company
	for _, c := range f.Companies {
		if ids.VAT != "" && c.VATNumber == ids.VAT ||
			ids.Registration != "" && c.RegistrationNumber == ids.Registration ||
			ids.IDNumber != "" && c.IdentificationNumber == ids.IDNumber {
			out = append(out, c)
		}
	}
	return out, nil
}

var (
	AcmeCo  = pipeline.Company{ID: "8ovHrj", TradingName: "Acme Foods (Pty) Ltd", VATNumber: "4012345678", RegistrationNumber: "2009/012345/07"}
	CraneCo = pipeline.Company{ID: "Q2wE9z", TradingName: "Blue Crane Logistics", VATNumber: "4098765432", RegistrationNumber: "2015/123456/07"}
	KarooCo = pipeline.Company{ID: "Mk3Pq7", TradingName: "Karoo Sole Trader", VATNumber: "0412345678", IdentificationNumber: "8001015009087"}
)

// world is two fake accounts and a lookup.
type World struct {
	Acme, Crane *FakeService
	Finder      *FakeFinder
	Accounts    []pipeline.Account
}

func NewWorld() *World {
	ids := &atomic.Int64{}
	w := &World{
		Acme:   NewFakeService(ids, "scorecard_acme_2025", "scorecard_acme_2026"),
		Crane:  NewFakeService(ids, "scorecard_bluecrane_2025"),
		Finder: &FakeFinder{Companies: []pipeline.Company{AcmeCo, CraneCo, KarooCo}},
	}
	w.Accounts = []pipeline.Account{
		{Name: "acme", CompanyID: AcmeCo.ID, Service: w.Acme},
		{Name: "bluecrane", CompanyID: CraneCo.ID, Service: w.Crane},
	}
	return w
}

// inPlan builds an input plan with targets for years 1..len(counters),
// all_employees, each setting the given counters.
func InPlan(vat, name, start, end, scorecard string, counters ...map[string]int64) *pipeline.InputPlan {
	p := &pipeline.InputPlan{Origin: pipeline.Origin{File: "plans.csv", Row: 2}, Company: pipeline.CompanyIDs{VAT: vat}, Name: name, ScorecardID: scorecard}
	if start != "" {
		p.StartDate = Day(start)
	}
	if end != "" {
		p.EndDate = Day(end)
	}
	for i, c := range counters {
		cells := map[string]pipeline.Origin{}
		for n := range c {
			cells[n] = pipeline.Origin{File: "plans.csv", Row: 2 + i, Column: 9, Header: n}
		}
		p.Targets = append(p.Targets, &pipeline.InputTarget{Origin: pipeline.Origin{File: "plans.csv", Row: 2 + i}, YearNumber: i + 1,
			TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(c), Cells: cells})
	}
	return p
}

const (
	Amt = "number_of_african_male_top_managers"
	Wfs = "number_of_white_female_senior_managers"
	Ifu = "number_of_indian_female_unskilled_employees"
)

// lastWrites is a LastWriteSource over a map.
type LastWriteMap map[string]map[pipeline.CounterKey]pipeline.LastWrite

func SamplePlan() *pipeline.Plan {
	return &pipeline.Plan{ID: 17, Name: "Acme", StartDate: Day("2025-09-01"), EndDate: Day("2030-08-31"),
		Milestones: []pipeline.Milestone{{ID: 170, YearNumber: 1, StartDate: Day("2025-09-01"), Targets: []pipeline.Target{
			{ID: 1700, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{Amt: 9, Wfs: 2, Ifu: 30})},
			{ID: 1701, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(map[string]int64{Amt: 0, Wfs: 0, Ifu: 0})},
		}}}}
}

// day parses a date the tests write as "2006-01-02", or panics.
func Day(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// lastValuesSrc is a LastWriteSource and lastFieldSource over maps.
type LastValuesSrc struct {
	LastWriteMap
	Fields map[pipeline.FieldKey]pipeline.LastFieldWrite
}

func (l LastValuesSrc) LastFields(_ context.Context, service, account string, ids []int64) (map[pipeline.FieldKey]pipeline.LastFieldWrite, error) {
	if service != "svc" || account != "acme" {
		return nil, fmt.Errorf("wrong service or account %s %s", service, account)
	}
	return l.Fields, nil
}

func (l LastWriteMap) LastWrites(_ context.Context, service, account string, ids []int64) (map[pipeline.CounterKey]pipeline.LastWrite, error) {
	if service != "svc" {
		return nil, errors.New("wrong service")
	}
	return l[account], nil
}
