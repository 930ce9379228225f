package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
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
// number_of_* field with an integer value (null counters are left out).
// Other fields are ignored.
//
// A plan carries about 180 counters per year, so this is the client's
// hottest path: a valid object of plain keys and integers is read in one
// pass without reflection (decodeFlat); anything else (escapes, duplicate
// keys, numbers that are not plain integers, errors) is read by
// encoding/json, which also words the errors.
func (t *Target) UnmarshalJSON(b []byte) error {
	if json.Valid(b) && t.decodeFlat(b) {
		return nil
	}
	return t.decodeSlow(b)
}

// validTarget is a Target that encoding/json decodes inside a larger
// document: the decoder has checked the whole document already, so the
// one-pass decoding does not check it again.
type validTarget Target

func (t *validTarget) UnmarshalJSON(b []byte) error {
	if (*Target)(t).decodeFlat(b) {
		return nil
	}
	return (*Target)(t).decodeSlow(b)
}

// planDoc is how a Plan is decoded: the same fields, with validTarget.
type planDoc struct {
	Plan
	Milestones []milestoneDoc `json:"milestones,omitempty"`
}

type milestoneDoc struct {
	Milestone
	Targets []validTarget `json:"targets"`
}

// plan returns the decoded plan.
func (d *planDoc) plan() Plan {
	p := d.Plan
	p.Milestones = nil
	if d.Milestones != nil {
		p.Milestones = make([]Milestone, len(d.Milestones))
	}
	for i, m := range d.Milestones {
		p.Milestones[i] = m.Milestone
		p.Milestones[i].Targets = nil
		if m.Targets != nil {
			p.Milestones[i].Targets = make([]Target, len(m.Targets))
		}
		for j, t := range m.Targets {
			p.Milestones[i].Targets[j] = Target(t)
		}
	}
	return p
}

// decodeSlow is the reference decoding through encoding/json.
func (t *Target) decodeSlow(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = Target{Counters: make(map[string]int64, len(raw))}
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

// decodeFlat decodes b, which json.Valid accepted, when it is an object
// whose keys have no escapes, whose id and counters are plain integers
// that fit int64 (or null counters), whose target_type is a string without
// escapes, and whose keys are not repeated. It reports false, with t in
// any state, when b is anything else; decodeSlow then decides.
func (t *Target) decodeFlat(b []byte) bool {
	_, ok := t.decodeFlatAt(b, skipSpace(b, 0))
	return ok
}

// decodeFlatAt is decodeFlat of the object at b[i]; it returns the index
// after the object.
func (t *Target) decodeFlatAt(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	*t = Target{Counters: make(map[string]int64, 96)}
	seenID, seenType := false, false
	pairs := 0 // number_of_* pairs, null ones included
	nulls := 0
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		// Key.
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' || b[end] >= utf8.RuneSelf {
				return i, false // escapes and non-ASCII: encoding/json's rules
			}
			end++
		}
		key := b[i+1 : end]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = skipSpace(b, i+1)
		vEnd := skipValue(b, i)
		if vEnd < 0 {
			return i, false
		}
		v := b[i:vEnd]
		switch {
		case string(key) == "id":
			n, ok := plainInt(v)
			if !ok || seenID {
				return i, false
			}
			seenID, t.ID = true, n
		case string(key) == "target_type":
			if len(v) < 2 || v[0] != '"' || !plainASCII(v) || seenType {
				return i, false
			}
			seenType, t.TargetType = true, string(v[1:len(v)-1])
		case bytes.HasPrefix(key, []byte("number_of_")):
			pairs++
			if string(v) == "null" {
				nulls++
				delete(t.Counters, string(key))
				break
			}
			n, ok := plainInt(v)
			if !ok {
				return i, false
			}
			t.Counters[internKey(key)] = n
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return i, false
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipSpace(b, i+1)
	}
	// A repeated counter key leaves fewer counters than pairs.
	return i, len(t.Counters)+nulls == pairs
}

// counterNames interns the counter names decoded so far: a plan carries
// the same 90-odd names in each of its targets, and a run reads them
// thousands of times. It is bounded, so a server sending ever new names
// cannot grow it without end.
var counterNames = struct {
	sync.RWMutex
	m map[string]string
}{m: make(map[string]string, 128)}

const maxInterned = 4096

// internKey returns key as a string, shared with earlier equal keys.
func internKey(key []byte) string {
	counterNames.RLock()
	s, ok := counterNames.m[string(key)]
	counterNames.RUnlock()
	if ok {
		return s
	}
	s = string(key)
	counterNames.Lock()
	if len(counterNames.m) < maxInterned {
		counterNames.m[s] = s
	}
	counterNames.Unlock()
	return s
}

// plainInt reads -?[0-9]+ that fits int64.
func plainInt(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	d := v
	if neg {
		d = v[1:]
	}
	if len(d) == 0 || len(d) > 19 { // 19 digits cannot overflow a uint64
		return 0, false
	}
	var n uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<63 {
		return 0, false
	}
	if !neg && n > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(n), true // -(1<<63) wraps to itself
	}
	return int64(n), true
}

// plainASCII reports whether v has neither escapes nor non-ASCII bytes.
func plainASCII(v []byte) bool {
	for _, c := range v {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i] (b is valid
// JSON), or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the end of the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
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

// APIKey is a key pair the service created (contract-notes A5): ID revokes
// it, Key is sent as X-Api-Key, Secret signs (returned once only, by the
// create). ExpiresAt is ISO 8601, nil for a key that never expires. String
// and GoString leave the secret out, so that printing an APIKey never shows
// it.
type APIKey struct {
	ID        int64   `json:"id"`
	Key       string  `json:"key"`
	Secret    string  `json:"secret"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
}

// String describes the key without its secret.
func (k APIKey) String() string {
	exp := "never expires"
	if k.ExpiresAt != nil {
		exp = "expires " + *k.ExpiresAt
	}
	return fmt.Sprintf("API key %d (%s, %s)", k.ID, keyPrefix(k.Key), exp)
}

// GoString is String, for %#v.
func (k APIKey) GoString() string { return k.String() }
