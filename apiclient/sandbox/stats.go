package sandbox

import (
	"maps"
	"net/http"
)

// Stats counts what the sandbox served since it started or since the last
// ResetStats. Requests to /_sandbox/stats are not counted.
type Stats struct {
	// Requests is every request received, including those answered with an
	// injected fault.
	Requests int64 `json:"requests"`
	// Writes is the successful (2xx) POST, PUT, PATCH and DELETE requests,
	// including those whose answer a "lost" fault dropped.
	Writes int64 `json:"writes"`
	// MaxInFlight is the most requests served at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// ByRoute counts requests per "METHOD route-pattern", for example
	// "GET /api/public/v1/employment_equity_plans/{id}"; requests no route
	// matches count as "METHOD (no route)".
	ByRoute map[string]int64 `json:"by_route"`
}

// Stats returns a copy of the current statistics.
func (s *Sandbox) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	st := s.stats
	st.ByRoute = maps.Clone(s.stats.ByRoute)
	return st
}

// ResetStats zeroes the statistics; requests in progress still count for
// MaxInFlight.
func (s *Sandbox) ResetStats() {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	s.stats = Stats{ByRoute: map[string]int64{}, MaxInFlight: s.inFlight}
}

func (s *Sandbox) begin(route string) {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	s.stats.Requests++
	s.stats.ByRoute[route]++
	s.inFlight++
	if s.inFlight > s.stats.MaxInFlight {
		s.stats.MaxInFlight = s.inFlight
	}
}

func (s *Sandbox) end() {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	s.inFlight--
}

func (s *Sandbox) countWrite() {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	s.stats.Writes++
}

// serveStats answers GET /_sandbox/stats: no authentication, no latency, no
// faults.
func (s *Sandbox) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeErrors(w, http.StatusMethodNotAllowed, "the statistics are read with GET")
		return
	}
	writeJSON(w, http.StatusOK, s.Stats())
}
