package apiclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestPlanFastDecodesServiceAnswers: the one-pass decoding takes the plans
// the service sends (unknown fields, null counters and scorecard, a
// five-year plan of 90 counters a target) and gives what encoding/json
// gives.
func TestPlanFastDecodesServiceAnswers(t *testing.T) {
	for name, doc := range map[string]string{
		"retrieve":  planJSON,
		"five year": benchPlanJSON(benchCounters(90)),
		"no years":  `{"id":1,"name":"x","start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"s","sector":null,"milestones":[]}`,
		"listed":    `{"id":1,"name":"x","start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":null,"sector":null}`,
		"non-ASCII": `{"id":2,"name":"Ṱhe plan ✓","start_date":"2025-09-01","end_date":"2026-08-31","milestones":null}`,
	} {
		var fast planDoc
		if !json.Valid([]byte(doc)) || !fast.decodeFast([]byte(doc)) {
			t.Errorf("%s: declined", name)
			continue
		}
		comparePlanDocs(t, name, []byte(doc), fast)
	}
}

// TestPlanFastDeclines: what the one-pass decoding does not read the same
// way as encoding/json is left to it, with the plan as the caller gave it.
func TestPlanFastDeclines(t *testing.T) {
	for _, doc := range []string{
		`{"id":1,"id":2}`,
		`{"ID":1}`,
		`{"Milestones":[]}`,
		`{"name":"a\"b"}`,
		`{"name":null}`,
		`{"id":"1"}`,
		`{"id":1.0}`,
		`{"id":1,"milestones":[{"year_number":1,"year_number":2}]}`,
		`{"milestones":[null]}`,
		`{"milestones":[{"targets":[{"id":1,"number_of_a":1.5}]}]}`,
		`{"n\u0061me":"x"}`,
		`[]`,
		`{"name":"` + "\xff" + `"}`,
	} {
		d := planDoc{}
		d.Name = "untouched"
		if d.decodeFast([]byte(doc)) {
			t.Errorf("%s: decoded as %+v", doc, d)
			continue
		}
		if !reflect.DeepEqual(d, planDoc{}) {
			t.Errorf("%s: left %+v after declining", doc, d)
		}
	}
}

// comparePlanDocs fails unless fast is what encoding/json decodes from b.
func comparePlanDocs(t testing.TB, name string, b []byte, fast planDoc) {
	t.Helper()
	var ref planDoc
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatalf("%s: the one-pass decoding accepted it, encoding/json says %v", name, err)
	}
	if got, want := fast.plan(), ref.plan(); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: one pass %+v\nencoding/json %+v", name, got, want)
	}
}

// FuzzPlanFastMatchesJSON: the one-pass decoding of a plan either declines
// or gives exactly what encoding/json gives.
func FuzzPlanFastMatchesJSON(f *testing.F) {
	f.Add([]byte(planJSON))
	f.Add([]byte(benchPlanJSON(benchCounters(3))))
	f.Add([]byte(`{"id":1,"milestones":[{"id":2,"targets":[{"id":3,"number_of_a":null}]}],"x":[{"y":"}"}]}`))
	f.Add([]byte(strings.ReplaceAll(planJSON, ",", " , ")))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast planDoc
		if !json.Valid(b) || !fast.decodeFast(b) {
			return
		}
		comparePlanDocs(t, string(b), b, fast)
	})
}
