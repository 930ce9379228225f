package apiclient

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// TestTargetRoundTrip: counters the default catalog does not know survive
// decoding and encoding; other unknown fields are dropped, not an error.
func TestTargetRoundTrip(t *testing.T) {
	var tg Target
	if err := json.Unmarshal([]byte(targetJSON), &tg); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, `{"id":700,"target_type":"all_employees","number_of_african_male_top_managers":5,"number_of_martian_female_top_managers":9}`)

	var back Target
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, tg) {
		t.Errorf("round trip: %+v != %+v", back, tg)
	}
}

func TestTargetRejectsBadCounters(t *testing.T) {
	for _, in := range []string{
		`{"id":1,"number_of_a_b_c":"3"}`,
		`{"id":1,"number_of_a_b_c":1.5}`,
		`{"id":"x"}`,
		`[]`,
	} {
		var tg Target
		if err := json.Unmarshal([]byte(in), &tg); err == nil {
			t.Errorf("Unmarshal(%s) accepted: %+v", in, tg)
		}
	}
}

// TestTargetRoundTripProperty: any counters map survives a JSON round trip.
func TestTargetRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := Target{
			ID:         rapid.Int64().Draw(t, "id"),
			TargetType: rapid.SampledFrom([]string{"all_employees", "disabled_employees", ""}).Draw(t, "type"),
			Counters: rapid.MapOf(
				rapid.StringMatching(`number_of_[a-z_]{1,30}`),
				rapid.Int64Min(0),
			).Draw(t, "counters"),
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Target
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if out.ID != in.ID || out.TargetType != in.TargetType || !maps.Equal(out.Counters, in.Counters) {
			t.Fatalf("round trip: %+v -> %s -> %+v", in, b, out)
		}
	})
}

// FuzzTargetUnmarshalJSON: decoding arbitrary input never panics, and what
// decodes survives encoding and decoding again.
func FuzzTargetUnmarshalJSON(f *testing.F) {
	f.Add([]byte(targetJSON))
	f.Add([]byte(`{"id":1,"target_type":"disabled_employees","number_of_white_female_grand_total_employees":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tg Target
		if err := tg.UnmarshalJSON(b); err != nil {
			return
		}
		for k := range tg.Counters {
			if !strings.HasPrefix(k, "number_of_") {
				t.Fatalf("counter %q kept", k)
			}
		}
		enc, err := json.Marshal(tg)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		var back Target
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if back.ID != tg.ID || back.TargetType != tg.TargetType || !maps.Equal(back.Counters, tg.Counters) {
			t.Fatalf("round trip: %+v != %+v", back, tg)
		}
	})
}

// FuzzTargetFlatMatchesJSON: the one-pass decoding of a target either
// declines or gives exactly what the encoding/json decoding gives.
func FuzzTargetFlatMatchesJSON(f *testing.F) {
	f.Add([]byte(targetJSON))
	f.Add([]byte(`{"id":-9223372036854775808,"target_type":"x","number_of_a":9223372036854775807,"number_of_b":null,"n":{"a":[1,"}"]}}`))
	f.Add([]byte(`{"id":1,"number_of_a":1,"number_of_a":null}`))
	f.Add([]byte(`{"number_of_a":null,"number_of_a":2}`))
	f.Add([]byte(`{"number_of_a":9223372036854775808}`))
	f.Add([]byte(` { } `))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast Target
		if !json.Valid(b) || !fast.decodeFlat(b) {
			return
		}
		var ref Target
		if err := ref.decodeSlow(b); err != nil {
			t.Fatalf("flat decoding accepted %s, encoding/json says %v", b, err)
		}
		if fast.ID != ref.ID || fast.TargetType != ref.TargetType || !maps.Equal(fast.Counters, ref.Counters) {
			t.Fatalf("%s: flat %+v, encoding/json %+v", b, fast, ref)
		}
	})
}

// FuzzParseRetryAfter: never panics, never negative; delta seconds read back.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"120", "0", "Thu, 01 Jan 2026 12:01:30 GMT", "-5", "1e3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 {
			t.Fatalf("parseRetryAfter(%q) = %v", s, d)
		}
		if !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %v but not ok", s, d)
		}
		if ok && d > 0 && d < maxDuration {
			if _, err := http.ParseTime(strings.TrimSpace(s)); err != nil && d%time.Second != 0 {
				t.Fatalf("delta seconds %q gave %v", s, d)
			}
		}
	})
}

// FuzzAPIErrorBody: any error body gives a one-line, valid UTF-8 error
// text that never contains the secret.
func FuzzAPIErrorBody(f *testing.F) {
	f.Add(422, []byte(`{"errors":["Start date must be on or after 2025-09-01"]}`))
	f.Add(502, []byte("<html><title>502</title></html>"))
	f.Add(404, []byte(""))
	f.Add(500, []byte(`{"errors":{"base":["x `+testSecret+`"]}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		c := &Client{secrets: []string{testSecret}}
		e := newAPIError("GET", "/p", status, http.Header{}, body, 0, func(s string) string { return c.redact(s) })
		msg := e.Error()
		if strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("Error() has a line break: %q", msg)
		}
		for _, m := range append(e.Messages, e.Body) {
			if !utf8.ValidString(m) || strings.Contains(m, testSecret) {
				t.Fatalf("bad text %q", m)
			}
		}
		if len(e.Body) > maxExcerpt+len("…") {
			t.Fatalf("Body is %d bytes", len(e.Body))
		}
	})
}

func TestNullStringAndPlanUpdate(t *testing.T) {
	empty, sc := NullString(""), NullString("scorecard_x")
	b, err := json.Marshal(PlanUpdate{ScorecardID: &empty, Sector: &sc})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"scorecard_id":null,"sector":"scorecard_x"}` {
		t.Errorf("PlanUpdate = %s", b)
	}
}

// TestTargetBodyMatchesJSON: the hand-written patch body is byte for byte
// what encoding/json writes, for plain keys and for keys that need escapes.
func TestTargetBodyMatchesJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		counters := rapid.MapOf(rapid.OneOf(rapid.StringMatching(`number_of_[a-z_]{1,30}`), rapid.String()), rapid.Int64()).Draw(t, "counters")
		want, err := json.Marshal(map[string]any{"employment_equity_target": counters})
		if err != nil {
			t.Fatal(err)
		}
		if got := targetBody(counters); string(got) != string(want) {
			t.Fatalf("targetBody = %s, want %s", got, want)
		}
	})
	if got := string(targetBody(nil)); got != `{"employment_equity_target":{}}` {
		t.Errorf("nil counters: %s", got)
	}
}
