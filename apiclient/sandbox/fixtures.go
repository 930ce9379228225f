package sandbox

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

// defaultFixturesJSON is a copy of testdata/sandbox-fixtures.json (a test
// keeps the two identical).
//
//go:embed sandbox-fixtures.json
var defaultFixturesJSON []byte

// Fixtures is the sandbox's initial state: the JSON document of
// `eepipe sandbox --fixtures FILE`.
type Fixtures struct {
	Accounts    []Account           `json:"accounts"`
	LookupUsers []LookupUser        `json:"lookup_users"`
	Companies   []apiclient.Company `json:"companies"`
	Scorecards  []ScorecardFixture  `json:"scorecards"`
}

// Account is one API account: its name, key pair and the company it owns.
// ExpiresAt, when set, is an ISO 8601 date or timestamp after which the key
// is refused; until then responses carry the key-expiry headers.
type Account struct {
	Name      string `json:"name"`
	APIKey    string `json:"api_key"`
	Secret    string `json:"secret"`
	CompanyID string `json:"company_id"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

// LookupUser is a Basic-auth user of the company lookup.
type LookupUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// ScorecardFixture is a scorecard owned by the account named Account. Its
// ID is kept as given. Workforce, when present, holds the current workforce
// demographics that baseline prefill copies into new plans.
type ScorecardFixture struct {
	Account     string     `json:"account"`
	ID          string     `json:"id"`
	Description string     `json:"description"`
	StartDate   string     `json:"start_date"`
	EndDate     string     `json:"end_date"`
	CharterID   string     `json:"charter_id"`
	Province    string     `json:"province"`
	Workforce   *Workforce `json:"workforce,omitempty"`
}

// Workforce holds one counter map per target type. Counters that are absent
// are zero.
type Workforce struct {
	AllEmployees      map[string]int64 `json:"all_employees"`
	DisabledEmployees map[string]int64 `json:"disabled_employees"`
}

// counters returns the map for a target type.
func (w *Workforce) counters(targetType string) map[string]int64 {
	if w == nil {
		return nil
	}
	if targetType == targetDisabled {
		return w.DisabledEmployees
	}
	return w.AllEmployees
}

// DefaultFixtures returns a fresh copy of the example fixtures embedded in
// the binary (identical to testdata/sandbox-fixtures.json).
func DefaultFixtures() *Fixtures {
	fx, err := ParseFixtures(defaultFixturesJSON)
	if err != nil {
		panic("sandbox: embedded fixtures: " + err.Error())
	}
	return fx
}

// maxFixturesFile bounds a fixtures file (the example is a few KiB).
const maxFixturesFile = 64 << 20

// LoadFixtures reads and validates a fixtures file: a regular file (a
// named pipe would block the start, a device never end) of at most
// maxFixturesFile bytes.
func LoadFixtures(path string) (*Fixtures, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("fixtures: %s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > maxFixturesFile {
		return nil, fmt.Errorf("fixtures: %s is larger than %d MiB", path, maxFixturesFile>>20)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	fx, err := ParseFixtures(b)
	if err != nil {
		return nil, fmt.Errorf("fixtures %s: %w", path, err)
	}
	return fx, nil
}

// rawFixtures mirrors Fixtures with counters kept raw, so that a bad counter
// is reported with its place instead of a generic decoding error.
type rawFixtures struct {
	Accounts    []Account           `json:"accounts"`
	LookupUsers []LookupUser        `json:"lookup_users"`
	Companies   []apiclient.Company `json:"companies"`
	Scorecards  []struct {
		ScorecardFixture
		Workforce *struct {
			AllEmployees      map[string]json.RawMessage `json:"all_employees"`
			DisabledEmployees map[string]json.RawMessage `json:"disabled_employees"`
		} `json:"workforce"`
	} `json:"scorecards"`
}

// ParseFixtures decodes and validates a fixtures document.
func ParseFixtures(b []byte) (*Fixtures, error) {
	var raw rawFixtures
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, describeJSONError(b, err)
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the fixtures object")
	}
	fx := &Fixtures{Accounts: raw.Accounts, LookupUsers: raw.LookupUsers, Companies: raw.Companies}
	var problems []string
	for i, rs := range raw.Scorecards {
		sc := rs.ScorecardFixture
		if rs.Workforce != nil {
			where := fmt.Sprintf("scorecards[%d] (%s) workforce", i, sc.ID)
			all, p1 := rawCounters(where+".all_employees", rs.Workforce.AllEmployees)
			dis, p2 := rawCounters(where+".disabled_employees", rs.Workforce.DisabledEmployees)
			problems = append(append(problems, p1...), p2...)
			sc.Workforce = &Workforce{AllEmployees: all, DisabledEmployees: dis}
		}
		fx.Scorecards = append(fx.Scorecards, sc)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if err := fx.Validate(); err != nil {
		return nil, err
	}
	return fx, nil
}

func rawCounters(where string, m map[string]json.RawMessage) (map[string]int64, []string) {
	out := make(map[string]int64, len(m))
	var problems []string
	for _, name := range sortedKeys(m) {
		n, msg := parseCounter(m[name])
		if msg != "" {
			problems = append(problems, fmt.Sprintf("%s: counter %s %s", where, name, msg))
			continue
		}
		out[name] = n
	}
	return out, problems
}

// describeJSONError turns a decoding error into one that says where.
func describeJSONError(b []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(b, se.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		line, col := lineCol(b, te.Offset)
		return fmt.Errorf("line %d, column %d: %s must be %s, not a JSON %s", line, col, te.Field, jsonKind(te.Type), te.Value)
	}
	return err
}

// lineCol returns the 1-based line and column of the byte the decoder had
// just read when it failed after off bytes.
func lineCol(b []byte, off int64) (int, int) {
	off = max(off-1, 0)
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem()) + " or null"
	}
	return "a number"
}

// Validate checks what the sandbox cannot run without: account names, keys
// and secrets, unique account names, keys, lookup usernames, company and
// scorecard ids, every scorecard owned by a known account, expires_at in
// ISO 8601 and workforce counters zero or greater. Scorecard field values
// and unknown counter names are not errors (see Warnings).
func (fx *Fixtures) Validate() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	names := map[string]bool{}
	keys := map[string]bool{}
	for i, a := range fx.Accounts {
		where := fmt.Sprintf("accounts[%d]", i)
		if a.Name != "" {
			where += " (" + a.Name + ")"
		}
		switch {
		case a.Name == "":
			add("%s: name is missing", where)
		case names[a.Name]:
			add("%s: account name %q is used twice", where, a.Name)
		}
		names[a.Name] = true
		switch {
		case a.APIKey == "":
			add("%s: api_key is missing", where)
		case keys[a.APIKey]:
			add("%s: api_key %q is used by two accounts", where, a.APIKey)
		}
		keys[a.APIKey] = true
		if a.Secret == "" {
			add("%s: secret is missing", where)
		}
		if a.ExpiresAt != "" {
			if _, err := parseExpiry(a.ExpiresAt); err != nil {
				add("%s: expires_at %q is not an ISO 8601 date or timestamp", where, a.ExpiresAt)
			}
		}
	}
	users := map[string]bool{}
	for i, u := range fx.LookupUsers {
		switch {
		case u.Username == "":
			add("lookup_users[%d]: username is missing", i)
		case users[u.Username]:
			add("lookup_users[%d]: username %q is listed twice", i, u.Username)
		}
		users[u.Username] = true
	}
	companies := map[string]bool{}
	for i, c := range fx.Companies {
		switch {
		case c.ID == "":
			add("companies[%d]: id is missing", i)
		case companies[c.ID]:
			add("companies[%d]: company id %q is listed twice", i, c.ID)
		}
		companies[c.ID] = true
	}
	ids := map[string]bool{}
	for i, sc := range fx.Scorecards {
		where := fmt.Sprintf("scorecards[%d]", i)
		if sc.ID != "" {
			where += " (" + sc.ID + ")"
		}
		switch {
		case sc.ID == "":
			add("%s: id is missing", where)
		case ids[sc.ID]:
			add("%s: scorecard id %q is listed twice (a scorecard belongs to one account)", where, sc.ID)
		}
		ids[sc.ID] = true
		switch {
		case sc.Account == "":
			add("%s: account is missing", where)
		case !names[sc.Account]:
			add("%s: account %q is not one of the accounts", where, sc.Account)
		}
		if sc.Workforce != nil {
			for _, tt := range targetTypes {
				for _, name := range sortedKeys(sc.Workforce.counters(tt)) {
					if v := sc.Workforce.counters(tt)[name]; v < 0 {
						add("%s: workforce.%s: counter %s is %d; counters are zero or greater", where, tt, name, v)
					}
				}
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Warnings lists what in valid fixtures the sandbox accepts but a user
// probably did not mean: scorecard fields the API would refuse on create
// (blank, or not a known charter, province or date; the fixtures describe
// the service's stored state, which may hold such records) and workforce
// counters that are not in the default catalog (the prefill leaves them
// out, as new plans carry the default catalog's counters only).
func (fx *Fixtures) Warnings() []string {
	var out []string
	for i, sc := range fx.Scorecards {
		where := fmt.Sprintf("scorecards[%d]", i)
		if sc.ID != "" {
			where += " (" + sc.ID + ")"
		}
		for _, msg := range checkScorecardFields(scorecardFields{
			Description: &sc.Description, StartDate: &sc.StartDate, EndDate: &sc.EndDate,
			CharterID: &sc.CharterID, Province: &sc.Province,
		}) {
			out = append(out, where+": "+msg)
		}
		if sc.Workforce == nil {
			continue
		}
		for _, tt := range targetTypes {
			for _, name := range sortedKeys(sc.Workforce.counters(tt)) {
				if served.lookup(name) >= 0 {
					continue
				}
				msg := fmt.Sprintf("%s: workforce.%s: %s is not a counter of the default catalog; the prefill leaves it out", where, tt, name)
				if s := served.suggest(name); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				out = append(out, msg)
			}
		}
	}
	return out
}

// expiryLayouts are the ISO 8601 forms expires_at may take, most common
// first. Forms without a zone are UTC.
var expiryLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseExpiry parses an account's expires_at: an ISO 8601 timestamp (with
// or without seconds and fraction; a missing zone means UTC) or a date (the
// key expires at the start of that day, UTC).
func parseExpiry(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var first error
	for _, layout := range expiryLayouts {
		t, err := time.ParseInLocation(layout, s, time.UTC)
		if err == nil {
			return t, nil
		}
		if first == nil {
			first = err
		}
	}
	return time.Time{}, first
}
