package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

const (
	planNotFound = "Employment equity plan not found"
	planWrapper  = "employment_equity_plan"
	targetWrap   = "employment_equity_target"
)

// timestamp formats a datetime as the service does (ISO 8601, UTC, ms).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// derivedName is the name of a plan created or updated with a blank name.
func derivedName(start, end pipeline.Date) string {
	return fmt.Sprintf("EE Plan %s to %s", start, end)
}

// wire converts a stored plan to its JSON form.
func (p *plan) wire(withMilestones bool) apiclient.Plan {
	out := apiclient.Plan{
		ID: p.id, Name: p.name, StartDate: p.start.String(), EndDate: p.end.String(),
		ScorecardID: cloneStr(p.scorecardID), Sector: cloneStr(p.sector), Era: p.era,
		CreatedAt: timestamp(p.created), UpdatedAt: timestamp(p.updated),
	}
	if withMilestones {
		out.Milestones = make([]apiclient.Milestone, 0, len(p.milestones))
		for _, m := range p.milestones {
			wm := apiclient.Milestone{ID: m.id, YearNumber: m.yearNumber, StartDate: m.start.String(), EndDate: m.end.String()}
			for _, t := range m.targets {
				wm.Targets = append(wm.Targets, t.wire())
			}
			out.Milestones = append(out.Milestones, wm)
		}
	}
	return out
}

func (t *target) wire() apiclient.Target {
	return apiclient.Target{ID: t.id, TargetType: t.targetType, Counters: cloneMap(t.counters)}
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// pathID parses an integer path parameter.
func pathID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil
}

// ownPlan returns the account's plan with the path's id; s.mu is held.
func (s *Sandbox) ownPlan(r *http.Request, a *account, param string) *plan {
	id, ok := pathID(r, param)
	if !ok {
		return nil
	}
	p := s.plans[id]
	if p == nil || p.account != a.Name {
		return nil
	}
	return p
}

// visibleScorecard returns the account's scorecard with id, or nil; s.mu is held.
func (s *Sandbox) visibleScorecard(a *account, id string) *scorecard {
	sc := s.scorecards[id]
	if sc == nil || sc.account != a.Name {
		return nil
	}
	return sc
}

func (s *Sandbox) newID() int64 {
	id := s.nextID
	s.nextID++
	return id
}

func (s *Sandbox) listPlans(w http.ResponseWriter, _ *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	out := []apiclient.Plan{}
	for _, p := range s.accountPlans(a.Name) {
		out = append(out, p.wire(false))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Sandbox) getPlan(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	p := s.ownPlan(r, a, "id")
	var out apiclient.Plan
	if p != nil {
		out = p.wire(true)
	}
	s.mu.Unlock()
	if p == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// checkSector validates an optional sector field; "" and null mean none.
func checkSector(fields map[string]json.RawMessage) (f strField, problem string) {
	f, ok := getString(fields, "sector")
	switch {
	case !ok:
		return f, "sector is not included in the list of sectors (it must be a string or null)"
	case f.present && !f.null && f.val != "" && !pipeline.Contains(pipeline.Sectors, f.val):
		return f, fmt.Sprintf("sector %q is not included in the list of sectors", f.val)
	}
	return f, ""
}

// checkScorecardRef validates an optional scorecard_id field against the
// account's scorecards; the message is the same for an unknown id and for
// another account's id. "" and null mean none.
func (s *Sandbox) checkScorecardRef(a *account, fields map[string]json.RawMessage) (f strField, sc *scorecard, problem string) {
	f, ok := getString(fields, "scorecard_id")
	if !ok {
		return f, nil, scorecardMissing
	}
	if f.present && !f.null && f.val != "" {
		sc = s.visibleScorecard(a, f.val)
		if sc == nil {
			return f, nil, scorecardMissing
		}
	}
	return f, sc, ""
}

// parseDateField reads a date field: problem is "" for a valid date or when
// the field is absent and not required.
func parseDateField(fields map[string]json.RawMessage, key string, required bool) (pipeline.Date, string) {
	f, ok := getString(fields, key)
	switch {
	case !ok:
		return pipeline.Date{}, fmt.Sprintf("%s must be a date string in the form YYYY-MM-DD", key)
	case !f.present || f.null || strings.TrimSpace(f.val) == "":
		if required {
			return pipeline.Date{}, key + " can't be blank"
		}
		return pipeline.Date{}, ""
	}
	d, err := pipeline.ParseDate(f.val)
	if err != nil {
		return pipeline.Date{}, fmt.Sprintf("%s %q is not a valid date (YYYY-MM-DD)", key, f.val)
	}
	return d, ""
}

func (s *Sandbox) createPlan(w http.ResponseWriter, _ *http.Request, a *account, body []byte) {
	fields, status, msg := decodeWrapped(body, planWrapper)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	var problems []string
	name, ok := getString(fields, "name")
	if !ok {
		problems = append(problems, "name must be a string")
	}
	start, p := parseDateField(fields, "start_date", true)
	if p != "" {
		problems = append(problems, p)
	} else if start.Before(pipeline.EarliestStart) {
		problems = append(problems, fmt.Sprintf("start_date %s must be on or after %s", start, pipeline.EarliestStart))
	} else if start.After(pipeline.LatestEnd) {
		problems = append(problems, fmt.Sprintf("start_date %s must be on or before %s, the latest end date of a post_2025 plan", start, pipeline.LatestEnd))
	}
	end, p := parseDateField(fields, "end_date", true)
	if p != "" {
		problems = append(problems, p)
	} else if !start.IsZero() && end.Before(start) {
		problems = append(problems, fmt.Sprintf("end_date %s must not be before start_date %s", end, start))
	}
	sector, p := checkSector(fields)
	if p != "" {
		problems = append(problems, p)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	scRef, sc, p := s.checkScorecardRef(a, fields)
	if p != "" {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	end = pipeline.ClampEnd(end)
	now := s.now()
	pl := &plan{
		id: s.newID(), account: a.Name, name: name.val,
		start: start, end: end, era: pipeline.EraPost2025, created: now, updated: now,
	}
	if strings.TrimSpace(pl.name) == "" {
		pl.name = derivedName(start, end)
	}
	if sc != nil {
		pl.scorecardID = &scRef.val
	}
	if sector.present && !sector.null && sector.val != "" {
		pl.sector = &sector.val
	}
	cat := pipeline.DefaultCatalog()
	for i, fy := range pipeline.PlanYears(start, end) {
		m := &milestone{id: s.newID(), yearNumber: i + 1, start: fy.Start(), end: fy.End()}
		for _, tt := range pipeline.TargetTypes {
			t := &target{id: s.newID(), targetType: tt, counters: make(map[string]int64, cat.Len())}
			var base map[string]int64
			if sc != nil {
				base = sc.workforce.counters(tt)
			}
			for _, n := range cat.Names() {
				t.counters[n] = base[n]
			}
			m.targets = append(m.targets, t)
		}
		pl.milestones = append(pl.milestones, m)
	}
	s.plans[pl.id] = pl
	writeJSON(w, http.StatusCreated, pl.wire(true))
}

func (s *Sandbox) updatePlan(w http.ResponseWriter, r *http.Request, a *account, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pl := s.ownPlan(r, a, "id")
	if pl == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	fields, status, msg := decodeWrapped(body, planWrapper)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	var problems []string
	name, ok := getString(fields, "name")
	if !ok {
		problems = append(problems, "name must be a string")
	}
	// Dates are fixed at creation: well-formed ones are ignored, malformed
	// ones rejected.
	for _, key := range []string{"start_date", "end_date"} {
		if _, p := parseDateField(fields, key, false); p != "" {
			problems = append(problems, p)
		}
	}
	scRef, sc, p := s.checkScorecardRef(a, fields)
	if p != "" {
		problems = append(problems, p)
	}
	sector, p := checkSector(fields)
	if p != "" {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	if name.present {
		if strings.TrimSpace(name.val) == "" {
			pl.name = derivedName(pl.start, pl.end)
		} else {
			pl.name = name.val
		}
	}
	if scRef.present {
		pl.scorecardID = nil
		if sc != nil {
			pl.scorecardID = &scRef.val
		}
	}
	if sector.present {
		pl.sector = nil
		if !sector.null && sector.val != "" {
			pl.sector = &sector.val
		}
	}
	pl.updated = s.now()
	writeJSON(w, http.StatusOK, pl.wire(true))
}

func (s *Sandbox) deletePlan(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	pl := s.ownPlan(r, a, "id")
	if pl != nil {
		delete(s.plans, pl.id)
	}
	s.mu.Unlock()
	if pl == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sandbox) updateTarget(w http.ResponseWriter, r *http.Request, a *account, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pl := s.ownPlan(r, a, "plan_id")
	if pl == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	mid, ok1 := pathID(r, "milestone_id")
	tid, ok2 := pathID(r, "target_id")
	var t *target
	found := false
	for _, m := range pl.milestones {
		if ok1 && m.id == mid {
			found = true
			for _, tt := range m.targets {
				if ok2 && tt.id == tid {
					t = tt
				}
			}
		}
	}
	if !found {
		writeErrors(w, http.StatusNotFound, "Employment equity milestone not found")
		return
	}
	if t == nil {
		writeErrors(w, http.StatusNotFound, "Employment equity target not found")
		return
	}
	fields, status, msg := decodeWrapped(body, targetWrap)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	var problems []string
	changes := map[string]int64{}
	for _, key := range sortedKeys(fields) {
		if _, known := t.counters[key]; !known {
			continue // target_type, id and unknown fields are ignored
		}
		n, msg := parseCounter(fields[key])
		if msg != "" {
			problems = append(problems, key+" "+msg)
			continue
		}
		changes[key] = n
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	for k, v := range changes {
		t.counters[k] = v
	}
	if len(changes) > 0 {
		pl.updated = s.now()
	}
	writeJSON(w, http.StatusOK, t.wire())
}
