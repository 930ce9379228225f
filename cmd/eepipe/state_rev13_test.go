package main

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestStateServiceSpellings: the run history is kept per service, and one
// service written with a trailing slash, an upper-case scheme or host, or
// its default port is the same service. Were it another, the counters
// the client changed would have no history and be overwritten.
func TestStateServiceSpellings(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	base := s.srv.URL // http://127.0.0.1:PORT
	for i, spelling := range []string{base + "/", strings.Replace(base, "http://", "HTTP://", 1), base + "//"} {
		t.Run(spelling, func(t *testing.T) {
			s.serviceEdit("Stateful", cAMT, 10+i)
			sb := s.srv.Sandbox
			sb.ResetStats()
			r := s.eepipe("apply", v1, "--no-recalc", "--base-url", spelling)
			if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "changed on the service since run 1") {
				t.Fatalf("apply with base URL %s: exit %d, %d writes; want 1 and 0, the counter held back\n%s", spelling, r.code, sb.Stats().Writes, r.err)
			}
			s.want("Stateful", cAMT, 10+i)
		})
	}
}

func TestServiceKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://svc.example.co.za":           "https://svc.example.co.za",
		"https://svc.example.co.za/":          "https://svc.example.co.za",
		" HTTPS://SVC.Example.co.za:443// ":   "https://svc.example.co.za",
		"http://127.0.0.1:80/":                "http://127.0.0.1",
		"http://127.0.0.1:8080":               "http://127.0.0.1:8080",
		"https://svc.example.co.za/Tenant/A/": "https://svc.example.co.za/Tenant/A",
	} {
		if got := pipeline.ServiceKey(in); got != want {
			t.Errorf("ServiceKey(%q) = %q, want %q", in, got, want)
		}
	}
}
