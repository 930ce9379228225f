package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiKey is one key pair of an account: a fixture's or one created through
// POST /api/public/v1/api_keys. Its account, key, secret and expiry are
// fixed; revoked changes under the Sandbox's keysMu.
type apiKey struct {
	id         int64
	acct       *account
	key        string
	secret     string
	expires    time.Time
	hasExpires bool
	revoked    bool
	created    time.Time
}

// expired reports whether the key has expired at now.
func (k *apiKey) expired(now time.Time) bool { return k.hasExpires && !now.Before(k.expires) }

// apiKeyAnswer is the create's answer (contract-notes A5).
type apiKeyAnswer struct {
	ID        int64   `json:"id"`
	Key       string  `json:"key"`
	Secret    string  `json:"secret"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
}

// Key routes (contract-notes A5).
const (
	routeCreateKey = "POST /api/public/v1/api_keys"
	routeRevokeKey = "DELETE /api/public/v1/api_keys/{id}"
)

// lookupKey returns the key that X-Api-Key names; nil when it is unknown or
// revoked (a revoked key is refused like an unknown one).
func (s *Sandbox) lookupKey(key string) *apiKey {
	s.keysMu.RLock()
	defer s.keysMu.RUnlock()
	k := s.keys[key]
	if k == nil || k.revoked {
		return nil
	}
	return k
}

// addFixtureKey registers an account's fixture key pair (New).
func (s *Sandbox) addFixtureKey(acct *account, now time.Time) {
	k := &apiKey{id: s.nextKeyID, acct: acct, key: acct.APIKey, secret: acct.Secret, created: now}
	s.nextKeyID++
	if acct.ExpiresAt != "" {
		k.expires, _ = parseExpiry(acct.ExpiresAt) // validated by Fixtures.Validate
		k.hasExpires = true
	}
	s.keys[k.key] = k
	s.keyIDs[k.id] = k
}

// createKey creates a key pair for the calling account: the body is {} (or
// empty) or {"expires_in":"90d"}, also wrapped as {"api_key":{...}}; 201
// with the key's id, key, secret, expires_at and created_at. A sixth active
// key of the account is refused with 422, as is an expires_in outside
// keyLifetimes.
func (s *Sandbox) createKey(w http.ResponseWriter, _ *http.Request, a *account, body []byte) {
	days, status, msg := keyLifetime(body)
	if status != 0 {
		writeErrors(w, status, msg)
		return
	}
	now := s.now()
	s.keysMu.Lock()
	active := 0
	for _, k := range s.keyIDs {
		if k.acct == a && !k.revoked && !k.expired(now) {
			active++
		}
	}
	if active >= maxActiveKeys {
		s.keysMu.Unlock()
		writeErrors(w, http.StatusUnprocessableEntity, fmt.Sprintf("the account already holds %d active API keys, the most it may; revoke one first", maxActiveKeys))
		return
	}
	k := &apiKey{id: s.nextKeyID, acct: a, key: "mpk_" + randomHex(16), secret: randomHex(32), created: now}
	if days > 0 {
		k.expires, k.hasExpires = now.Add(time.Duration(days)*24*time.Hour).UTC().Truncate(time.Second), true
	}
	s.nextKeyID++
	s.keys[k.key] = k
	s.keyIDs[k.id] = k
	s.keysMu.Unlock()

	ans := apiKeyAnswer{ID: k.id, Key: k.key, Secret: k.secret, CreatedAt: now.UTC().Format(time.RFC3339)}
	if k.hasExpires {
		e := k.expires.Format(time.RFC3339)
		ans.ExpiresAt = &e
	}
	writeJSON(w, http.StatusCreated, ans)
}

// keyLifetime reads a create's expires_in: days 0 when it is absent or
// null (the key never expires). status is 0 on success.
func keyLifetime(body []byte) (days, status int, msg string) {
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, 0, ""
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		var top any
		if json.Unmarshal(body, &top) == nil {
			return 0, http.StatusUnprocessableEntity, `the body must be an object {"expires_in": "90d"} or {}`
		}
		return 0, http.StatusBadRequest, "the request body is not valid JSON: " + err.Error()
	}
	if _, wrapped := fields["api_key"]; wrapped {
		inner, st, m := decodeWrapped(body, "api_key")
		if st != 0 {
			return 0, st, m
		}
		fields = inner
	}
	f, ok := getString(fields, "expires_in")
	if !ok {
		return 0, http.StatusUnprocessableEntity, "expires_in must be a string: one of " + strings.Join(keyLifetimeNames, ", ")
	}
	if !f.present || f.null {
		return 0, 0, ""
	}
	d, known := keyLifetimes[f.val]
	if !known {
		return 0, http.StatusUnprocessableEntity, fmt.Sprintf("expires_in %q is not one of %s", shorten(f.val), strings.Join(keyLifetimeNames, ", "))
	}
	return d, 0, ""
}

// revokeKey revokes the key {id} of the calling account: 204; 404 when no
// active key of the account has that id (unknown, another account's or
// already revoked); 422 when it is the key that signs the request.
func (s *Sandbox) revokeKey(w http.ResponseWriter, r *http.Request, a *account, _ []byte) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.keysMu.Lock()
	k := s.keyIDs[id]
	switch {
	case err != nil || k == nil || k.acct != a || k.revoked:
		s.keysMu.Unlock()
		writeErrors(w, http.StatusNotFound, fmt.Sprintf("no API key %s on this account", shorten(r.PathValue("id"))))
		return
	case k.key == r.Header.Get("X-Api-Key"):
		s.keysMu.Unlock()
		writeErrors(w, http.StatusUnprocessableEntity, "an API key cannot revoke itself: sign the request with another key of the account")
		return
	}
	k.revoked = true
	s.keysMu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// randomHex returns n random bytes in lowercase hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}
