package pipeline

import "testing"

// TestServiceKeySpellings: every spelling of one service is one key (and
// one lock, AccountLockKey), and different services stay apart.
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
		if a, b := AccountLockKey(p[0], "mpk_x"), AccountLockKey(p[1], " mpk_x "); a != b {
			t.Errorf("AccountLockKey differs for %q and %q", p[0], p[1])
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
		if i := accountIndex(accounts, n); i != 1 {
			t.Errorf("accountIndex(%q) = %d, want 1", n, i)
		}
	}
}
