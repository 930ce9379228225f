package pipeline

import (
	"net/url"
	"path"
	"strings"
)

// ServiceKey returns the identity of a service base URL: the key under
// which the state store keeps its history and under which every lock of
// the service's accounts is taken (AccountLockKey, the store's locks). The
// same service spelled with an upper-case scheme or host, its default port
// (80 for http, 443 for https), an empty port, a trailing dot on the host,
// trailing slashes or dot segments in its path is the same service:
// "HTTP://Example.COM:80/api/" and "http://example.com/api" are one key.
// User information in the URL is no part of it.
func ServiceKey(baseURL string) string {
	raw := strings.TrimSpace(baseURL)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.TrimRight(raw, "/")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	switch p := u.Port(); {
	case p == "", scheme == "http" && p == "80", scheme == "https" && p == "443":
	default:
		host += ":" + p
	}
	p := u.EscapedPath()
	if p != "" {
		p = path.Clean("/" + p)
	}
	return scheme + "://" + host + strings.TrimRight(p, "/")
}

// SameAccount reports whether a and b name the same account. It is the
// one rule by which an account named in a file (its account column, a
// grid label, a change set) is found among the configured accounts, by
// which the configuration refuses two accounts of one name, and under
// which the accounts' locks are taken: the rule of names (sameName:
// surrounding spaces and letter case ignored), so "UMOYA", " Umoya " and
// "umoya" are one account.
func SameAccount(a, b string) bool {
	return sameName(a, b)
}

// AccountKey returns the stored form of an account name, the key of its
// by-name lock and of the state store's account filters (the store keeps
// each spelling of a name with its key: docs/apply-and-state.md, "The
// state store"): nameKey in lower case. Names that SameAccount holds
// equal have one AccountKey.
func AccountKey(name string) string {
	return strings.ToLower(nameKey(name))
}
