package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fakeService is an in-memory PlanService for one account, close enough to
// the contract for the pipeline's tests: milestones per financial year,
// two targets each, prefill from scorecards, 404s, and injectable faults.
type fakeService struct {
	mu         sync.Mutex
	plans      map[int64]*Plan
	nextID     *atomic.Int64 // shared across accounts, like a real database
	prefill    map[string]int64
	scorecards map[string]bool

	calls    map[string]int
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	delay    time.Duration

	lostCreates  int      // creates applied whose answer is lost
	failCreates  int      // creates refused with an unclear outcome before being applied
	rateLimited  int      // creates refused with 429
	conflicts    int      // recalculations answered 409 before one is accepted
	unauthorized bool     // every call fails with ErrUnauthorized
	failTarget   int64    // target id whose patch fails with ErrInvalid
	catalog      *Catalog // the counters targets carry; nil: the default catalog
}

func newFakeService(ids *atomic.Int64, scorecards ...string) *fakeService {
	s := &fakeService{plans: map[int64]*Plan{}, nextID: ids, calls: map[string]int{}, scorecards: map[string]bool{}, prefill: map[string]int64{}}
	for _, sc := range scorecards {
		s.scorecards[sc] = true
	}
	for _, n := range DefaultCatalog().Names() {
		s.prefill[n] = 7
	}
	return s
}

func (s *fakeService) enter(name string) func() {
	n := s.inFlight.Add(1)
	for {
		m := s.maxSeen.Load()
		if n <= m || s.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	s.mu.Lock()
	s.calls[name]++
	s.mu.Unlock()
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	return func() { s.inFlight.Add(-1) }
}

func (s *fakeService) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

func (s *fakeService) writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls["create"] + s.calls["update"] + s.calls["delete"] + s.calls["target"] + s.calls["recalc"]
}

func clonePlan(p *Plan) *Plan {
	c := *p
	c.Milestones = slices.Clone(p.Milestones)
	for i := range c.Milestones {
		c.Milestones[i].Targets = slices.Clone(c.Milestones[i].Targets)
		for j := range c.Milestones[i].Targets {
			c.Milestones[i].Targets[j].Counters = c.Milestones[i].Targets[j].Counters.clone()
		}
	}
	return &c
}

func (s *fakeService) ListPlans(ctx context.Context) ([]Plan, error) {
	defer s.enter("list")()
	if s.unauthorized {
		return nil, ErrUnauthorized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Plan
	for _, p := range s.plans {
		c := *p
		c.Milestones = nil
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Plan) int { return int(a.ID - b.ID) })
	return out, nil
}

func (s *fakeService) GetPlan(ctx context.Context, id int64) (*Plan, error) {
	defer s.enter("get")()
	if s.unauthorized {
		return nil, ErrUnauthorized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[id]
	if !ok {
		return nil, ErrNotFound
	}
	return clonePlan(p), nil
}

func (s *fakeService) CreatePlan(ctx context.Context, np NewPlan) (*Plan, error) {
	defer s.enter("create")()
	if s.unauthorized {
		return nil, ErrUnauthorized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rateLimited > 0 {
		s.rateLimited--
		return nil, fmt.Errorf("429: %w", ErrRateLimited)
	}
	if s.failCreates > 0 {
		s.failCreates--
		return nil, fmt.Errorf("503: %w", ErrUnclearOutcome)
	}
	if np.ScorecardID != "" && !s.scorecards[np.ScorecardID] {
		return nil, fmt.Errorf("scorecard not found: %w", ErrInvalid)
	}
	p := &Plan{ID: s.nextID.Add(1), Name: np.Name, StartDate: np.StartDate, EndDate: ClampEnd(np.EndDate),
		ScorecardID: np.ScorecardID, Sector: np.Sector, Era: EraPost2025}
	for i, fy := range PlanYears(p.StartDate, p.EndDate) {
		m := Milestone{ID: s.nextID.Add(1), YearNumber: i + 1, StartDate: fy.Start(), EndDate: fy.End()}
		for _, tt := range TargetTypes {
			t := Target{ID: s.nextID.Add(1), TargetType: tt, Counters: CountersOf(map[string]int64{})}
			names := DefaultCatalog().Names()
			if s.catalog != nil {
				names = s.catalog.Names()
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
	s.plans[p.ID] = p
	if s.lostCreates > 0 {
		s.lostCreates--
		return nil, fmt.Errorf("connection reset: %w", ErrUnclearOutcome)
	}
	return clonePlan(p), nil
}

func (s *fakeService) UpdatePlan(ctx context.Context, id int64, c PlanChange) (*Plan, error) {
	defer s.enter("update")()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[id]
	if !ok {
		return nil, ErrNotFound
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

func (s *fakeService) DeletePlan(ctx context.Context, id int64) error {
	defer s.enter("delete")()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.plans[id]; !ok {
		return ErrNotFound
	}
	delete(s.plans, id)
	return nil
}

func (s *fakeService) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*Target, error) {
	defer s.enter("target")()
	s.mu.Lock()
	defer s.mu.Unlock()
	if targetID == s.failTarget {
		return nil, fmt.Errorf("counter invalid: %w", ErrInvalid)
	}
	p, ok := s.plans[planID]
	if !ok {
		return nil, ErrNotFound
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
				c.Counters = t.Counters.clone()
				return &c, nil
			}
		}
	}
	return nil, ErrNotFound
}

func (s *fakeService) RecalculateScorecard(ctx context.Context, id string) error {
	defer s.enter("recalc")()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.scorecards[id] {
		return ErrNotFound
	}
	if s.conflicts > 0 {
		s.conflicts--
		return fmt.Errorf("409: %w", ErrConflict)
	}
	return nil
}

// fakeFinder is an in-memory company lookup with OR semantics.
type fakeFinder struct {
	companies []Company
	calls     atomic.Int64
	err       error
}

func (f *fakeFinder) FindCompanies(ctx context.Context, ids CompanyIDs) ([]Company, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	var out []Company
	for _, c := range f.companies {
		if ids.VAT != "" && c.VATNumber == ids.VAT ||
			ids.Registration != "" && c.RegistrationNumber == ids.Registration ||
			ids.IDNumber != "" && c.IdentificationNumber == ids.IDNumber {
			out = append(out, c)
		}
	}
	return out, nil
}

var (
	acmeCo  = Company{ID: "8ovHrj", TradingName: "Acme Foods (Pty) Ltd", VATNumber: "4012345678", RegistrationNumber: "2009/012345/07"}
	craneCo = Company{ID: "Q2wE9z", TradingName: "Blue Crane Logistics", VATNumber: "4098765432", RegistrationNumber: "2015/123456/07"}
	karooCo = Company{ID: "Mk3Pq7", TradingName: "Karoo Sole Trader", VATNumber: "0412345678", IdentificationNumber: "8001015009087"}
)

// world is two fake accounts and a lookup.
type world struct {
	acme, crane *fakeService
	finder      *fakeFinder
	accounts    []Account
}

func newWorld() *world {
	ids := &atomic.Int64{}
	w := &world{
		acme:   newFakeService(ids, "scorecard_acme_2025", "scorecard_acme_2026"),
		crane:  newFakeService(ids, "scorecard_bluecrane_2025"),
		finder: &fakeFinder{companies: []Company{acmeCo, craneCo, karooCo}},
	}
	w.accounts = []Account{
		{Name: "acme", CompanyID: acmeCo.ID, Service: w.acme},
		{Name: "bluecrane", CompanyID: craneCo.ID, Service: w.crane},
	}
	return w
}

// inPlan builds an input plan with targets for years 1..len(counters),
// all_employees, each setting the given counters.
func inPlan(vat, name, start, end, scorecard string, counters ...map[string]int64) *InputPlan {
	p := &InputPlan{Origin: Origin{File: "plans.csv", Row: 2}, Company: CompanyIDs{VAT: vat}, Name: name, ScorecardID: scorecard}
	if start != "" {
		p.StartDate = day(start)
	}
	if end != "" {
		p.EndDate = day(end)
	}
	for i, c := range counters {
		cells := map[string]Origin{}
		for n := range c {
			cells[n] = Origin{File: "plans.csv", Row: 2 + i, Column: 9, Header: n}
		}
		p.Targets = append(p.Targets, &InputTarget{Origin: Origin{File: "plans.csv", Row: 2 + i}, YearNumber: i + 1,
			TargetType: TargetAll, Counters: CountersOf(c), Cells: cells})
	}
	return p
}

const (
	amt = "number_of_african_male_top_managers"
	wfs = "number_of_white_female_senior_managers"
	ifu = "number_of_indian_female_unskilled_employees"
)

// lastWrites is a LastWriteSource over a map.
type lastWrites map[string]map[CounterKey]LastWrite

func storedPlan() *Plan {
	return &Plan{ID: 17, Name: "Acme", StartDate: day("2025-09-01"), EndDate: day("2030-08-31"),
		Milestones: []Milestone{{ID: 170, YearNumber: 1, StartDate: day("2025-09-01"), Targets: []Target{
			{ID: 1700, TargetType: TargetAll, Counters: CountersOf(map[string]int64{amt: 9, wfs: 2, ifu: 30})},
			{ID: 1701, TargetType: TargetDisabled, Counters: CountersOf(map[string]int64{amt: 0, wfs: 0, ifu: 0})},
		}}}}
}

// day parses a date the tests write as "2006-01-02", or panics.
func day(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// lastValuesSrc is a LastWriteSource and lastFieldSource over maps.
type lastValuesSrc struct {
	lastWrites
	fields map[FieldKey]LastFieldWrite
}

func (l lastValuesSrc) LastFields(_ context.Context, service, account string, ids []int64) (map[FieldKey]LastFieldWrite, error) {
	if service != "svc" || account != "acme" {
		return nil, fmt.Errorf("wrong service or account %s %s", service, account)
	}
	return l.fields, nil
}

func (l lastWrites) LastWrites(_ context.Context, service, account string, ids []int64) (map[CounterKey]LastWrite, error) {
	if service != "svc" {
		return nil, errors.New("wrong service")
	}
	return l[account], nil
}
