package sandbox

import (
	"testing"
	"time"
)

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"", "503=0.05,429=0.03,reset=0.02,lost=0.02", "503=1,retry-after=0", "503=0.6,429=0.6", "x=y", "503=1e-3", "lost=NaN", "503=+Inf", ",,,", "reset=0.5,reset=0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fs, err := parseFaults(spec)
		if err != nil {
			return
		}
		total := 0.0
		for _, e := range fs.entries {
			if !(e.p >= 0 && e.p <= 1) {
				t.Fatalf("%q: probability %v accepted", spec, e.p)
			}
			total += e.p
		}
		if total > 1+1e-9 || fs.retryAfter < 0 {
			t.Fatalf("%q: total %v retry-after %d accepted", spec, total, fs.retryAfter)
		}
	})
}

func FuzzParseFixtures(f *testing.F) {
	f.Add(defaultFixturesJSON)
	f.Add([]byte(`{"accounts":[{"name":"a","api_key":"k","secret":"s","expires_at":"2026-01-01"}],"scorecards":[{"account":"a","id":"scorecard_1","description":"d","start_date":"2025-01-01","end_date":"2025-12-31","charter_id":"alpha_ict","province":"Gauteng","workforce":{"all_employees":{"number_of_african_male_top_managers":3}}}]}`))
	f.Add([]byte(`{"accounts":[{"name":"a","api_key":"k","secret":"s","expires_at":"2026-12-01T08:30"}],"scorecards":[{"account":"a","id":"scorecard_bare","workforce":{"all_employees":{"number_of_x":1}}}]}`))
	f.Add([]byte(`{"accounts":[{}]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"scorecards":[{"workforce":{"all_employees":{"x":1.5}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fx, err := ParseFixtures(b)
		if err != nil {
			return
		}
		if err := fx.Validate(); err != nil {
			t.Fatalf("parsed fixtures fail validation: %v", err)
		}
		if _, err := New(Options{Fixtures: fx}); err != nil {
			t.Fatalf("New rejects parsed fixtures: %v", err)
		}
	})
}

// FuzzParseCivilDate checks the sandbox's date parser against the standard
// library's reading of the layout 2006-01-02: the same strings are dates,
// with the same year, month and day, and String gives the input back.
func FuzzParseCivilDate(f *testing.F) {
	for _, s := range []string{"2025-09-01", "2028-02-29", "2100-02-29", "2025-9-1", "0000-01-01", "9999-12-31", "2025-13-01", "2025-04-31", " 2025-09-01", "２０２５-09-01", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseCivilDate(s)
		tm, err := time.Parse("2006-01-02", s)
		if ok != (err == nil) {
			t.Fatalf("%q: sandbox reads it %v, time.Parse %v", s, ok, err)
		}
		if !ok {
			return
		}
		if d.y != tm.Year() || d.m != tm.Month() || d.d != tm.Day() || d.String() != s {
			t.Fatalf("%q: read as %v, time.Parse %v", s, d, tm)
		}
	})
}
