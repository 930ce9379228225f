package sandbox

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

const (
	scorecardWrapper = "scorecard"
	scorecardMissing = "Scorecard not found"
)

func (sc *scorecard) wire() apiclient.Scorecard {
	return apiclient.Scorecard{
		ID: sc.id, Description: sc.description, StartDate: sc.startDate, EndDate: sc.endDate,
		CharterID: sc.charterID, Province: sc.province,
		CreatedAt: timestamp(sc.created), UpdatedAt: timestamp(sc.updated),
	}
}

// readScorecardFields reads the five fields of a scorecard body: absent
// fields stay nil; null is blank; problems name fields of another type.
func readScorecardFields(fields map[string]json.RawMessage) (scorecardFields, []string) {
	var out scorecardFields
	var problems []string
	for _, f := range []struct {
		key  string
		into **string
	}{
		{"description", &out.Description}, {"start_date", &out.StartDate}, {"end_date", &out.EndDate},
		{"charter_id", &out.CharterID}, {"province", &out.Province},
	} {
		v, ok := getString(fields, f.key)
		switch {
		case !ok:
			problems = append(problems, f.key+" must be a string")
		case v.present:
			val := v.val
			*f.into = &val
		}
	}
	return out, problems
}

func (s *Sandbox) listScorecards(w http.ResponseWriter, _ *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	var own []*scorecard
	for _, sc := range s.scorecards {
		if sc.account == a.Name {
			own = append(own, sc)
		}
	}
	slices.SortFunc(own, func(x, y *scorecard) int { return int(x.seq - y.seq) })
	out := make([]apiclient.Scorecard, 0, len(own))
	for _, sc := range own {
		out = append(out, sc.wire())
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Sandbox) getScorecard(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	sc := s.visibleScorecard(a, r.PathValue("id"))
	var out apiclient.Scorecard
	if sc != nil {
		out = sc.wire()
	}
	s.mu.Unlock()
	if sc == nil {
		writeErrors(w, http.StatusNotFound, scorecardMissing)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sandbox) createScorecard(w http.ResponseWriter, _ *http.Request, a *account, body []byte) {
	fields, status, msg := decodeWrapped(body, scorecardWrapper)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	f, problems := readScorecardFields(fields)
	empty := ""
	for _, p := range []**string{&f.Description, &f.StartDate, &f.EndDate, &f.CharterID, &f.Province} {
		if *p == nil {
			*p = &empty // every field is mandatory on create
		}
	}
	if len(problems) == 0 {
		problems = checkScorecardFields(f)
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := ""
	for id == "" || s.scorecards[id] != nil {
		id = "scorecard_" + strings.ToLower(rand.Text()[:16])
	}
	now := s.now()
	s.nextSeq++
	sc := &scorecard{
		seq: s.nextSeq, account: a.Name, id: id, description: *f.Description,
		startDate: *f.StartDate, endDate: *f.EndDate, charterID: *f.CharterID, province: *f.Province,
		created: now, updated: now,
	}
	s.scorecards[id] = sc
	writeJSON(w, http.StatusCreated, sc.wire())
}

func (s *Sandbox) updateScorecard(w http.ResponseWriter, r *http.Request, a *account, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.visibleScorecard(a, r.PathValue("id"))
	if sc == nil {
		writeErrors(w, http.StatusNotFound, scorecardMissing)
		return
	}
	fields, status, msg := decodeWrapped(body, scorecardWrapper)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	f, problems := readScorecardFields(fields)
	// Validate the record as it would be after the change, so that a new
	// end_date is checked against the stored start_date.
	merged := scorecardFields{Description: f.Description, StartDate: f.StartDate, EndDate: f.EndDate, CharterID: f.CharterID, Province: f.Province}
	for _, m := range []struct {
		p   **string
		cur string
	}{
		{&merged.Description, sc.description}, {&merged.StartDate, sc.startDate}, {&merged.EndDate, sc.endDate},
		{&merged.CharterID, sc.charterID}, {&merged.Province, sc.province},
	} {
		if *m.p == nil {
			cur := m.cur
			*m.p = &cur
		}
	}
	if len(problems) == 0 {
		problems = checkScorecardFields(merged)
	}
	if len(problems) > 0 {
		writeErrors(w, http.StatusUnprocessableEntity, problems...)
		return
	}
	sc.description, sc.startDate, sc.endDate = *merged.Description, *merged.StartDate, *merged.EndDate
	sc.charterID, sc.province = *merged.CharterID, *merged.Province
	sc.updated = s.now()
	writeJSON(w, http.StatusOK, sc.wire())
}

func (s *Sandbox) deleteScorecard(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	sc := s.visibleScorecard(a, r.PathValue("id"))
	if sc != nil {
		delete(s.scorecards, sc.id)
	}
	s.mu.Unlock()
	if sc == nil {
		writeErrors(w, http.StatusNotFound, scorecardMissing)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// recalculateScorecard starts a run of RecalcDuration; while it runs, the
// same scorecard answers 409. The run ends when RecalcDuration has passed on
// either clock: Options.Now or the real one.
func (s *Sandbox) recalculateScorecard(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.visibleScorecard(a, r.PathValue("id"))
	if sc == nil {
		writeErrors(w, http.StatusNotFound, scorecardMissing)
		return
	}
	now, wall := s.now(), time.Now()
	if now.Before(sc.recalcUntil) && wall.Before(sc.recalcUntilReal) {
		writeErrors(w, http.StatusConflict, "A recalculation is already in progress for scorecard "+sc.id+"; retry after it finishes")
		return
	}
	sc.recalcUntil, sc.recalcUntilReal = now.Add(s.recalcDuration), wall.Add(s.recalcDuration)
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued"})
}
