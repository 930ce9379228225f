package sandbox

import (
	"strconv"
	"strings"
	"testing"
)

// TestCreateKeyBodies: the create takes {}, an empty body, the bare
// {"expires_in":...} and the wrapped {"api_key":{...}} (contract-notes A5);
// a lifetime of another value or type, or a body that is not an object, is
// refused with 422 and invalid JSON with 400, without creating a key.
func TestCreateKeyBodies(t *testing.T) {
	srv := startSandbox(t, Options{})
	acme := srv.as(t, acmeKey, acmeSecret)
	for _, body := range []string{`{}`, ``, `{"expires_in":"180d"}`, `{"expires_in":null}`, `{"api_key":{"expires_in":"90d"}}`} {
		var k apiKeyAnswer
		acme.must(201, "POST", "/api/public/v1/api_keys", body).decode(t, &k)
		if k.Secret == "" || !strings.HasPrefix(k.Key, "mpk_") {
			t.Errorf("body %q: %+v", body, k)
		}
		if got := k.ExpiresAt != nil; got != strings.Contains(body, "d\"") {
			t.Errorf("body %q: expires_at %v", body, k.ExpiresAt)
		}
		// Make room: the new key revokes it with the fixture key.
		acme.must(204, "DELETE", "/api/public/v1/api_keys/"+itoa(k.ID), "")
	}
	for body, want := range map[string]int{
		`{"expires_in":"7d"}`: 422, `{"expires_in":90}`: 422, `[]`: 422, `{"api_key":"x"}`: 422, `{`: 400,
	} {
		r := acme.do("POST", "/api/public/v1/api_keys", body)
		if r.status != want || len(r.errors()) == 0 {
			t.Errorf("body %q: status %d %s, want %d with errors", body, r.status, r.body, want)
		}
	}
	if r := acme.do("DELETE", "/api/public/v1/api_keys/abc", ""); r.status != 404 {
		t.Errorf("revoke id abc: %d", r.status)
	}
	// Unsigned or signed with a wrong secret: 401, nothing created.
	if r := srv.as(t, acmeKey, "wrong").do("POST", "/api/public/v1/api_keys", `{}`); r.status != 401 {
		t.Errorf("wrong secret: %d", r.status)
	}
	srv.Sandbox.keysMu.RLock()
	n := len(srv.Sandbox.keyIDs)
	srv.Sandbox.keysMu.RUnlock()
	if n != 5+len(DefaultFixtures().Accounts) {
		t.Errorf("%d keys stored, want the fixtures' and the five created", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestKeyLifetimesAreTheContracts: every lifetime the sandbox names has
// its number of days, and the names are in increasing order.
func TestKeyLifetimesAreTheContracts(t *testing.T) {
	prev := 0
	for _, n := range keyLifetimeNames {
		d, ok := keyLifetimes[n]
		if !ok || d <= prev || n != strconv.Itoa(d)+"d" {
			t.Errorf("lifetime %q: %d days", n, d)
		}
		prev = d
	}
	if len(keyLifetimes) != len(keyLifetimeNames) || maxActiveKeys != 5 {
		t.Errorf("%d lifetimes, %d names, at most %d keys", len(keyLifetimes), len(keyLifetimeNames), maxActiveKeys)
	}
}
