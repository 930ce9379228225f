package sandbox

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// slowWrapped is decodeWrapped without its one-pass path.
func slowWrapped(body []byte, key string) (map[string]json.RawMessage, bool) {
	var outer map[string]json.RawMessage
	if json.Unmarshal(body, &outer) != nil {
		return nil, false
	}
	inner, ok := outer[key]
	if !ok || string(bytes.TrimSpace(inner)) == "null" {
		return nil, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(inner, &fields) != nil || fields == nil {
		return nil, false
	}
	return fields, true
}

// TestPlainWrappedTakesClientBodies: the bodies eepipe and its tests send
// take the one-pass path, with encoding/json's fields.
func TestPlainWrappedTakesClientBodies(t *testing.T) {
	for _, body := range []string{
		`{"employment_equity_target":{"number_of_african_male_top_managers":3,"number_of_white_female_senior_managers":1}}`,
		`{"employment_equity_target":{}}`,
		` { "employment_equity_plan" : { "name" : "A \"quoted\" plan ✓", "start_date":"2025-09-01", "sector":null, "x":[1,{"y":"}"}] } , "other": 1 } `,
		`{"employment_equity_target":{"number_of_a":1,"number_of_a":2}}`,
	} {
		key := "employment_equity_target"
		if bytes.Contains([]byte(body), []byte("plan")) {
			key = "employment_equity_plan"
		}
		got, ok := plainWrapped([]byte(body), key)
		if !ok {
			t.Errorf("%s: declined", body)
			continue
		}
		want, _ := slowWrapped([]byte(body), key)
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Errorf("%s: one pass %q, encoding/json %q", body, got, want)
		}
	}
}

// FuzzPlainWrappedMatchesJSON: the one-pass reading of a wrapped body
// either declines or gives the fields encoding/json gives.
func FuzzPlainWrappedMatchesJSON(f *testing.F) {
	f.Add([]byte(`{"employment_equity_target":{"number_of_a":3,"b":[1,"]"],"c":{"d":null}}}`))
	f.Add([]byte(`{"employment_equity_target":null}`))
	f.Add([]byte(`{"x":1,"employment_equity_target":{"a":"\u0041"},"employment_equity_target":{"b":true}}`))
	f.Add([]byte(`{"employment_equity_target":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := plainWrapped(body, "employment_equity_target")
		if !ok {
			return
		}
		want, wok := slowWrapped(body, "employment_equity_target")
		if !wok {
			t.Fatalf("%s: one pass accepted %q, encoding/json refuses", body, got)
		}
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("%s: one pass %q, encoding/json %q", body, got, want)
		}
	})
}
