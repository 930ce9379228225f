package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// TestServiceKeySpellings: every spelling of one service is one key, and
// different services stay apart.
func TestServiceKeySpellings(t *testing.T) {
	same := [][2]string{
		{"http://127.0.0.1:80", "http://127.0.0.1"},
		{"http://127.0.0.1:80/", "http://127.0.0.1"},
		{"https://api.example.co.za:443", "https://api.example.co.za"},
		{"https://api.example.co.za:443/", "https://api.example.co.za/"},
		{"https://API.Example.CO.ZA", "https://api.example.co.za"},
		{"HTTPS://api.example.co.za", "https://api.example.co.za"},
		{"https://api.example.co.za/", "https://api.example.co.za"},
		{"https://api.example.co.za//", "https://api.example.co.za"},
		{"https://api.example.co.za/bbbee/", "https://api.example.co.za/bbbee"},
		{"https://api.example.co.za/bbbee/./v1/../", "https://api.example.co.za/bbbee"},
		{"https://api.example.co.za//bbbee", "https://api.example.co.za/bbbee"},
		{"https://api.example.co.za.", "https://api.example.co.za"},
		{"https://api.example.co.za:", "https://api.example.co.za"},
		{" https://api.example.co.za ", "https://api.example.co.za"},
		{"https://user:pw@api.example.co.za", "https://api.example.co.za"},
		{"http://[::1]:80/", "http://[::1]"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
	}
	for _, p := range same {
		if a, b := ServiceKey(p[0]), ServiceKey(p[1]); a != b {
			t.Errorf("ServiceKey(%q) = %q, ServiceKey(%q) = %q: want one key", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{
		{"http://127.0.0.1", "https://127.0.0.1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1"},
		{"https://127.0.0.1:80", "https://127.0.0.1"},
		{"http://127.0.0.1:443", "http://127.0.0.1"},
		{"https://api.example.co.za/a", "https://api.example.co.za/b"},
		{"https://api.example.co.za/A", "https://api.example.co.za/a"}, // paths are case-sensitive
		{"https://a.example.co.za", "https://b.example.co.za"},
	}
	for _, p := range differ {
		if ServiceKey(p[0]) == ServiceKey(p[1]) {
			t.Errorf("ServiceKey(%q) == ServiceKey(%q) = %q: want two keys", p[0], p[1], ServiceKey(p[0]))
		}
	}
	if got := ServiceKey("HTTP://127.0.0.1:80/api/"); got != "http://127.0.0.1/api" {
		t.Errorf("ServiceKey = %q", got)
	}
}

// TestAccountKeySpellings: an account is one account whatever its letter
// case or surrounding spaces, in routing and in locks.
func TestAccountKeySpellings(t *testing.T) {
	for _, p := range [][2]string{{"UMOYA", "umoya"}, {" Umoya ", "umoya"}, {"Umoya", "uMoYa"}, {"\tumoya\n", "UMOYA"}, {"Émile", "émile"}} {
		if !SameAccount(p[0], p[1]) || AccountKey(p[0]) != AccountKey(p[1]) {
			t.Errorf("%q and %q are not one account", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"umoya", "umoya2"}, {"umoya prod", "umoyaprod"}, {"karoo", "umoya"}} {
		if SameAccount(p[0], p[1]) {
			t.Errorf("%q and %q are one account", p[0], p[1])
		}
	}
	accounts := []Account{{Name: "karoo"}, {Name: "Umoya"}}
	for _, n := range []string{"UMOYA", " umoya ", "Umoya"} {
		if i := AccountIndex(accounts, n); i != 1 {
			t.Errorf("accountIndex(%q) = %d, want 1", n, i)
		}
	}
}

// TestAccountLockKeyIsTheKeyPair: an account's lock is named by its API
// key alone (surrounding spaces ignored), never holding it in clear: one
// lock whatever address reaches the service.
func TestAccountLockKeyIsTheKeyPair(t *testing.T) {
	if a, b := AccountLockKey("mpk_x"), AccountLockKey(" mpk_x "); a != b {
		t.Errorf("AccountLockKey differs for spaces: %s, %s", a, b)
	}
	if AccountLockKey("mpk_x") == AccountLockKey("mpk_y") {
		t.Error("two keys have one lock")
	}
	if k := AccountLockKey("mpk_secretish"); strings.Contains(k, "mpk") || !strings.HasPrefix(k, "account-") {
		t.Errorf("AccountLockKey = %q", k)
	}
}

// TestServiceAddressCheckHistory: a key pair whose history is under
// another address is refused, naming both addresses and the declaration
// that makes them one service; declared (same_service_as), the history
// is kept under the declared address and the run goes on.
func TestServiceAddressCheckHistory(t *testing.T) {
	accounts := []LockAccount{{Name: "acme", APIKey: "mpk_sandbox_acme"}, {Name: "crane", APIKey: "mpk_sandbox_crane"}}
	recorded := map[string]string{AccountLockKey("mpk_sandbox_crane"): "http://127.0.0.1:8080"}
	a := ServiceAddress{BaseURL: "http://localhost:8080/"}
	err := a.CheckHistory(accounts, recorded)
	var e *ServiceAddressError
	if !errors.As(err, &e) || e.Account != "crane" {
		t.Fatalf("err = %v, want crane's history under another address", err)
	}
	for _, w := range []string{"account crane (key mpk_s…)", "under the service address http://127.0.0.1:8080", "reaches the service at http://localhost:8080/",
		`"same_service_as: http://127.0.0.1:8080"`, "--state"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the message lacks %q: %s", w, err)
		}
	}
	if strings.Contains(err.Error(), "mpk_sandbox_crane") {
		t.Errorf("the message holds the key: %s", err)
	}
	same := ServiceAddress{BaseURL: "http://localhost:8080", SameAs: "HTTP://127.0.0.1:8080/"}
	if same.Key() != "http://127.0.0.1:8080" {
		t.Errorf("Key = %q", same.Key())
	}
	if err := same.CheckHistory(accounts, recorded); err != nil {
		t.Errorf("declared the same: %v", err)
	}
	other := ServiceAddress{BaseURL: "http://localhost:8080", SameAs: "http://10.0.0.1:8080"}
	if err := other.CheckHistory(accounts, recorded); err == nil || !strings.Contains(err.Error(), "keeps its history under http://10.0.0.1:8080 (same_service_as)") {
		t.Errorf("declared another: %v", err)
	}
	if err := (ServiceAddress{BaseURL: "http://127.0.0.1:8080"}).CheckHistory(accounts, recorded); err != nil {
		t.Errorf("the recorded address: %v", err)
	}
	// A base URL that carries a password (which the client refuses, but
	// only once it is built) is named without it.
	if err := (ServiceAddress{BaseURL: "http://ops:hunter2@localhost:8080"}).CheckHistory(accounts, recorded); err == nil ||
		strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "reaches the service at http://ops:xxxxx@localhost:8080") {
		t.Errorf("a base URL with a password: %v", err)
	}
}

// TestServiceAddressOtherHistory: with no key pair's address on record, a
// store whose runs are all under other addresses is warned of, naming
// them; a store with runs here, or a key pair on record, is not.
func TestServiceAddressOtherHistory(t *testing.T) {
	accounts := []LockAccount{{Name: "acme", APIKey: "mpk_sandbox_acme"}}
	a := ServiceAddress{BaseURL: "http://localhost:8080"}
	w := a.OtherHistory(accounts, nil, []string{"http://127.0.0.1:8080"})
	for _, want := range []string{"no run history under http://localhost:8080", "some under http://127.0.0.1:8080", `"same_service_as: http://127.0.0.1:8080"`} {
		if !strings.Contains(w, want) {
			t.Errorf("the warning lacks %q: %s", want, w)
		}
	}
	if w := a.OtherHistory(accounts, nil, []string{"http://a", "http://b"}); !strings.Contains(w, "some under http://a, http://b") || !strings.Contains(w, "same_service_as with that address") {
		t.Errorf("two other services: %s", w)
	}
	for name, w := range map[string]string{
		"an empty store":    a.OtherHistory(accounts, nil, nil),
		"history here":      a.OtherHistory(accounts, nil, []string{"http://127.0.0.1:8080", "http://localhost:8080"}),
		"a key pair's here": a.OtherHistory(accounts, map[string]string{AccountLockKey("mpk_sandbox_acme"): "http://localhost:8080"}, []string{"http://127.0.0.1:8080"}),
	} {
		if w != "" {
			t.Errorf("%s: %s", name, w)
		}
	}
}
