package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Plan is an employment equity plan as the service returns it.
type Plan struct {
	ID          int64       `json:"id"`
	Name        string      `json:"name"`
	StartDate   string      `json:"start_date"`
	EndDate     string      `json:"end_date"`
	ScorecardID *string     `json:"scorecard_id"`
	Sector      *string     `json:"sector"`
	Era         string      `json:"era,omitempty"`
	CreatedAt   string      `json:"created_at,omitempty"`
	UpdatedAt   string      `json:"updated_at,omitempty"`
	Milestones  []Milestone `json:"milestones,omitempty"`
}

// Milestone is one financial year of a plan.
type Milestone struct {
	ID         int64    `json:"id"`
	YearNumber int      `json:"year_number"`
	StartDate  string   `json:"start_date"`
	EndDate    string   `json:"end_date"`
	Targets    []Target `json:"targets"`
}

// Target is one target of a milestone. On the wire its counters are
// top-level number_of_* fields beside id and target_type; here they are a
// map, so that counters the default catalog does not know survive a round
// trip.
type Target struct {
	ID         int64
	TargetType string
	Counters   map[string]int64
}

// MarshalJSON writes the target as one flat object.
func (t Target) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(t.Counters)+2)
	for k, v := range t.Counters {
		m[k] = v
	}
	m["id"] = t.ID
	m["target_type"] = t.TargetType
	return json.Marshal(m)
}

// UnmarshalJSON reads a flat target object: id, target_type and every
// number_of_* field with an integer value. Other fields are ignored.
func (t *Target) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = Target{Counters: make(map[string]int64)}
	for k, v := range raw {
		switch {
		case k == "id":
			if err := json.Unmarshal(v, &t.ID); err != nil {
				return fmt.Errorf("target id: %w", err)
			}
		case k == "target_type":
			if err := json.Unmarshal(v, &t.TargetType); err != nil {
				return fmt.Errorf("target_type: %w", err)
			}
		case strings.HasPrefix(k, "number_of_"):
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				continue
			}
			var n int64
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("counter %s: %w", k, err)
			}
			t.Counters[k] = n
		}
	}
	return nil
}

// Scorecard is a B-BBEE scorecard record.
type Scorecard struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	StartDate   string `json:"start_date"`
	EndDate     string `json:"end_date"`
	CharterID   string `json:"charter_id"`
	Province    string `json:"province"`
	CreatedAt   string `json:"created_at,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
}

// Company is a company record of the lookup service.
type Company struct {
	ID                   string  `json:"id"`
	Commodity            string  `json:"commodity"`
	IdentificationNumber *string `json:"identification_number"`
	Region               string  `json:"region"`
	RegistrationNumber   *string `json:"registration_number"`
	TradingName          string  `json:"trading_name"`
	VATNumber            string  `json:"vat_number"`
}

// PlanCreate is the body of a plan create, sent wrapped in
// {"employment_equity_plan": ...}.
type PlanCreate struct {
	Name        string `json:"name,omitempty"`
	StartDate   string `json:"start_date"`
	EndDate     string `json:"end_date"`
	ScorecardID string `json:"scorecard_id,omitempty"`
	Sector      string `json:"sector,omitempty"`
}

// PlanUpdate is the body of a plan update, sent wrapped in
// {"employment_equity_plan": ...}. Nil fields are not sent; Null sends null.
type PlanUpdate struct {
	Name        *string     `json:"name,omitempty"`
	ScorecardID *NullString `json:"scorecard_id,omitempty"`
	Sector      *NullString `json:"sector,omitempty"`
}

// NullString is a string that marshals "" as JSON null.
type NullString string

// MarshalJSON writes null for the empty string.
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// ScorecardInput is the body of a scorecard create or partial update, sent
// wrapped in {"scorecard": ...}. Empty fields are not sent.
type ScorecardInput struct {
	Description string `json:"description,omitempty"`
	StartDate   string `json:"start_date,omitempty"`
	EndDate     string `json:"end_date,omitempty"`
	CharterID   string `json:"charter_id,omitempty"`
	Province    string `json:"province,omitempty"`
}

// CompanyQuery holds the company search parameters; empty ones are not sent.
type CompanyQuery struct {
	VATNumber          string
	RegistrationNumber string
	IDNumber           string
}
