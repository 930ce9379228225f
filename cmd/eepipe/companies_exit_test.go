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
