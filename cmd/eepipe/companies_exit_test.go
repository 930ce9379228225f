package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// TestCompaniesLookupErrorIsFatal: a lookup that answers 500 or 422 has
// not said that nothing matches: exit 3, not 1 ("no match").
func TestCompaniesLookupErrorIsFatal(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusUnprocessableEntity, http.StatusBadRequest} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(`{"message":"lookup broke"}`))
		}))
		e := newEnv(t, sandbox.Options{})
		e.vars[envLookupURL] = srv.URL
		e.vars[envLookupUsername] = "consultant"
		e.vars[envLookupPassword] = "sandbox-lookup-pass"
		r := e.run("companies", "--vat", "4012345678")
		srv.Close()
		if r.code != ExitFatal || !strings.Contains(r.err, "company lookup") || strings.Contains(r.err, "No company matches") {
			t.Errorf("lookup answering %d: exit %d, want 3\n%s", status, r.code, r.err)
		}
	}
}

// TestCompaniesNamesTheRealCause: a wrong lookup password (401 from the
// sandbox's lookup over HTTP) names the lookup's username and password,
// not the API key; a registration number typed without its slashes or a
// leading zero gets the form the lookup holds, and the hinted form matches.
func TestCompaniesNamesTheRealCause(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.vars["LOOKUP_PASS"] = "wrong-password"
	r := e.run("--config", e.config, "companies", "--vat", "4012345678")
	if r.code != ExitFatal || !strings.Contains(r.err, "401") || !strings.Contains(r.err, "lookup username and password") ||
		!strings.Contains(r.err, envLookupPassword) || strings.Contains(r.err, "API key and secret") || strings.Contains(r.err, "wrong-password") {
		t.Errorf("wrong lookup password: exit %d\n%s", r.code, r.err)
	}
	e.vars["LOOKUP_PASS"] = "sandbox-lookup-pass"
	for _, typed := range []string{"2009/12345/07", "20091234507"} {
		r := e.run("--config", e.config, "companies", "--registration", typed)
		if r.code != ExitDiff || !strings.Contains(r.err, "try --registration 2009/012345/07") {
			t.Errorf("--registration %s: exit %d\n%s", typed, r.code, r.err)
		}
	}
	r = e.run("--config", e.config, "companies", "--registration", "2009/012345/07")
	if r.code != ExitOK || !strings.Contains(r.out, "8ovHrj") {
		t.Errorf("the hinted form: exit %d\n%s%s", r.code, r.out, r.err)
	}
	// The letters and digits decide, as in apply (sameIdentifier): these
	// spellings find the company that 2009/012345/07 finds.
	for _, typed := range []string{"2009-012345-07", "2009 012345 07", "200901234507"} {
		r := e.run("--config", e.config, "companies", "--registration", typed)
		if r.code != ExitOK || !strings.Contains(r.out, "8ovHrj") || !strings.Contains(r.err, "Found as registration 2009/012345/07") {
			t.Errorf("--registration %s: exit %d\n%s%s", typed, r.code, r.out, r.err)
		}
	}
	// A VAT number that lost its leading zero gets the hint, and the
	// hinted form is a number of the right length.
	r = e.run("--config", e.config, "companies", "--vat", "412345678")
	if r.code != ExitDiff || !strings.Contains(r.err, "VAT numbers have 10 digits, and 412345678 has 9") || !strings.Contains(r.err, "try --vat 0412345678") {
		t.Errorf("--vat 412345678: exit %d\n%s", r.code, r.err)
	}
	r = e.run("--config", e.config, "companies", "--vat", "4012345678")
	if strings.Contains(r.err, "leading zero") {
		t.Errorf("a VAT number of 10 digits got the hint\n%s", r.err)
	}
	for _, other := range []string{"1999/000001/07", "abc", "2009/0123456/07"} {
		r := e.run("--config", e.config, "companies", "--registration", other)
		if strings.Contains(r.err, "try --registration") {
			t.Errorf("--registration %s: hint given\n%s", other, r.err)
		}
	}
}

// TestRegistrationForm: the forms read unambiguously, and those that are not.
func TestRegistrationForm(t *testing.T) {
	for in, want := range map[string]string{"200901234507": "2009/012345/07", "2009/12345/7": "2009/012345/07", "2009-012345-07": "2009/012345/07",
		"2009/012345/07": "2009/012345/07", "20091234507": "2009/012345/07"} {
		if got, ok := registrationForm(in); !ok || got != want {
			t.Errorf("registrationForm(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "abc", "2009/1234567/07", "09/012345/07", "123", "2009/012345/007"} {
		if got, ok := registrationForm(in); ok {
			t.Errorf("registrationForm(%q) = %q, want none", in, got)
		}
	}
}
