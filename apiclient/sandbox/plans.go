package sandbox

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const (
	planNotFound = "Employment equity plan not found"
	planWrapper  = "employment_equity_plan"
	targetWrap   = "employment_equity_target"
)

// derivedName is the name of a plan created or updated with a blank name.
func derivedName(start, end civilDate) string {
	return fmt.Sprintf("EE Plan %s to %s", start, end)
}

// pathID parses an integer path parameter.
func pathID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil
}

// ownPlan returns the account's plan with the path's id, or nil.
func (s *Sandbox) ownPlan(r *http.Request, a *account, param string) *plan {
	id, ok := pathID(r, param)
	if !ok {
		return nil
	}
	s.plansMu.RLock()
	p := s.plans[id]
	s.plansMu.RUnlock()
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

// accountPlans returns the plans of an account sorted by id.
func (s *Sandbox) accountPlans(account string) []*plan {
	s.plansMu.RLock()
	own := s.byAccount[account]
	out := make([]*plan, 0, len(own))
	for _, p := range own {
		out = append(out, p)
	}
	s.plansMu.RUnlock()
	slices.SortFunc(out, func(a, b *plan) int { return cmp.Compare(a.id, b.id) })
	return out
}

func (s *Sandbox) listPlans(w http.ResponseWriter, _ *http.Request, a *account, _ []byte) {
	plans := s.accountPlans(a.Name)
	parts := make([][]byte, len(plans))
	size := 3
	for i, p := range plans {
		p.mu.Lock()
		parts[i] = p.briefJSON()
		p.mu.Unlock()
		size += len(parts[i]) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, part := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, part...)
	}
	b = append(b, "]\n"...)
	writeRaw(w, http.StatusOK, b)
}

func (s *Sandbox) getPlan(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	p := s.ownPlan(r, a, "id")
	if p == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	p.mu.Lock()
	b := p.fullJSON()
	p.mu.Unlock()
	writeRaw(w, http.StatusOK, b)
}

// checkSector validates an optional sector field; "" and null mean none.
func checkSector(fields map[string]json.RawMessage) (f strField, problem string) {
	f, ok := getString(fields, "sector")
	switch {
	case !ok:
		return f, "sector is not included in the list of sectors (it must be a string or null)"
	case f.present && !f.null && f.val != "" && !slices.Contains(sectors, f.val):
		return f, fmt.Sprintf("sector %q is not included in the list of sectors", f.val)
	}
	return f, ""
}

// checkScorecardRef validates an optional scorecard_id field against the
// account's scorecards; the message is the same for an unknown id and for
// another account's id. "" and null mean none. The prefill of the
// scorecard is returned with it.
func (s *Sandbox) checkScorecardRef(a *account, fields map[string]json.RawMessage) (f strField, found bool, pf *prefill, problem string) {
	f, ok := getString(fields, "scorecard_id")
	if !ok {
		return f, false, nil, scorecardMissing
	}
	if f.present && !f.null && f.val != "" {
		s.mu.Lock()
		sc := s.visibleScorecard(a, f.val)
		if sc != nil {
			pf = sc.prefill
		}
		s.mu.Unlock()
		if sc == nil {
			return f, false, nil, scorecardMissing
		}
		found = true
	}
	return f, found, pf, ""
}

// parseDateField reads a date field: problem is "" for a valid date or when
// the field is absent and not required.
func parseDateField(fields map[string]json.RawMessage, key string, required bool) (civilDate, string) {
	f, ok := getString(fields, key)
	switch {
	case !ok:
		return civilDate{}, fmt.Sprintf("%s must be a date string in the form YYYY-MM-DD", key)
	case !f.present || f.null || strings.TrimSpace(f.val) == "":
		if required {
			return civilDate{}, key + " can't be blank"
		}
		return civilDate{}, ""
	}
	d, ok := parseCivilDate(f.val)
	if !ok {
		return civilDate{}, fmt.Sprintf("%s %q is not a valid date (YYYY-MM-DD)", key, f.val)
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
	start, pStart := parseDateField(fields, "start_date", true)
	end, pEnd := parseDateField(fields, "end_date", true)
	end, dateProblems := createDates(start, end)
	// The messages in the order of the fields: start_date's, then end_date's.
	if pStart != "" {
		problems = append(problems, pStart)
	}
	for _, p := range dateProblems {
		if strings.HasPrefix(p, "start_date") {
			problems = append(problems, p)
		}
	}
	if pEnd != "" {
		problems = append(problems, pEnd)
	}
	for _, p := range dateProblems {
		if !strings.HasPrefix(p, "start_date") {
			problems = append(problems, p)
		}
	}
	sector, p := checkSector(fields)
	if p != "" {
		problems = append(problems, p)
	}
	scRef, found, pf, p := s.checkScorecardRef(a, fields)
	if p != "" {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	years := milestonePeriods(start, end)
	// The plan's ids are one block: the plan, then each milestone followed
	// by its targets.
	n := int64(1 + len(years)*(1+len(targetTypes)))
	id := s.nextID.Add(n) - n
	now := s.now()
	pl := &plan{
		id: id, account: a.Name, name: name.val,
		start: start, end: end, era: eraPost2025, created: now, updated: now,
	}
	if strings.TrimSpace(pl.name) == "" {
		pl.name = derivedName(start, end)
	}
	if found {
		pl.scorecardID = &scRef.val
	}
	if sector.present && !sector.null && sector.val != "" {
		pl.sector = &sector.val
	}
	for _, y := range years {
		id++
		m := &milestone{id: id, yearNumber: y.yearNumber, start: y.start, end: y.end}
		for _, tt := range targetTypes {
			id++
			t := &target{id: id, targetType: tt}
			if base := pf.counters(tt); base != nil {
				t.counters = slices.Clone(base)
			} else {
				t.counters = make([]int64, len(served.names))
			}
			m.targets = append(m.targets, t)
		}
		pl.milestones = append(pl.milestones, m)
	}
	b := pl.fullJSON() // pl is not shared yet
	s.plansMu.Lock()
	s.plans[pl.id] = pl
	own := s.byAccount[a.Name]
	if own == nil {
		own = map[int64]*plan{}
		s.byAccount[a.Name] = own
	}
	own[pl.id] = pl
	s.plansMu.Unlock()
	writeRaw(w, http.StatusCreated, b)
}

func (s *Sandbox) updatePlan(w http.ResponseWriter, r *http.Request, a *account, body []byte) {
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
	scRef, found, _, p := s.checkScorecardRef(a, fields)
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
	now := s.now()
	pl.mu.Lock()
	if name.present {
		if strings.TrimSpace(name.val) == "" {
			pl.name = derivedName(pl.start, pl.end)
		} else {
			pl.name = name.val
		}
	}
	if scRef.present {
		pl.scorecardID = nil
		if found {
			pl.scorecardID = &scRef.val
		}
	}
	if sector.present {
		pl.sector = nil
		if !sector.null && sector.val != "" {
			pl.sector = &sector.val
		}
	}
	pl.updated = now
	pl.changed()
	b := pl.fullJSON()
	pl.mu.Unlock()
	writeRaw(w, http.StatusOK, b)
}

func (s *Sandbox) deletePlan(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	id, ok := pathID(r, "id")
	var pl *plan
	if ok {
		s.plansMu.Lock()
		if p := s.plans[id]; p != nil && p.account == a.Name {
			pl = p
			delete(s.plans, id)
			delete(s.byAccount[a.Name], id)
		}
		s.plansMu.Unlock()
	}
	if pl == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sandbox) updateTarget(w http.ResponseWriter, r *http.Request, a *account, body []byte) {
	pl := s.ownPlan(r, a, "plan_id")
	if pl == nil {
		writeErrors(w, http.StatusNotFound, planNotFound)
		return
	}
	// A plan's milestones and targets (not their counters) are fixed at
	// creation, so they are found without its lock.
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
	type change struct {
		i int
		v int64
	}
	var changes []change
	for _, key := range sortedKeys(fields) {
		i := served.lookup(key)
		if i < 0 {
			continue // target_type, id and unknown fields are ignored
		}
		n, msg := parseCounter(fields[key])
		if msg != "" {
			problems = append(problems, key+" "+msg)
			continue
		}
		changes = append(changes, change{i, n})
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	now := s.now()
	pl.mu.Lock()
	if len(changes) > 0 {
		for _, c := range changes {
			t.counters[c.i] = c.v
		}
		t.enc = nil
		pl.updated = now
		pl.changed()
	}
	b := t.encoded()
	pl.mu.Unlock()
	writeRaw(w, http.StatusOK, b)
}
