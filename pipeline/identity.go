package pipeline

import (
	"fmt"
	"net/url"
	"path"
	"slices"
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
	return SameName(a, b)
}

// AccountKey returns the stored form of an account name, the key of its
// by-name lock and of the state store's account filters (the store keeps
// each spelling of a name with its key: docs/apply-and-state.md, "The
// state store"): nameKey in lower case. Names that SameAccount holds
// equal have one AccountKey.
func AccountKey(name string) string {
	return strings.ToLower(NameKey(name))
}

// ServiceAddress is where a configuration reaches the service (BaseURL)
// and, when the configuration declares it (same_service_as), the other
// address under which the run history of the service is kept (SameAs):
// docs/configuration.md, "One service at several addresses".
type ServiceAddress struct {
	BaseURL string
	SameAs  string
}

// History returns the address the run history is kept under: SameAs when
// declared, else BaseURL.
func (a ServiceAddress) History() string {
	if strings.TrimSpace(a.SameAs) != "" {
		return a.SameAs
	}
	return a.BaseURL
}

// Key returns the service key of the history (ServiceKey of History).
func (a ServiceAddress) Key() string { return ServiceKey(a.History()) }

// CheckHistory checks that the run history of each account's key pair is
// kept under this configuration's address. recorded maps an account's
// AccountLockKey to the service key under which the state store holds
// the key pair's history (none: the key pair has no history yet). On the
// service an API key belongs to one account, so a key pair with history
// under another address reaches the same service under a second name: a
// history started there would not know what eepipe wrote under the first,
// and would overwrite the changes made on the service since. The first
// such account is a *ServiceAddressError.
func (a ServiceAddress) CheckHistory(accounts []LockAccount, recorded map[string]string) error {
	here := a.Key()
	for _, acc := range accounts {
		if acc.APIKey == "" {
			continue
		}
		if there, ok := recorded[AccountLockKey(acc.APIKey)]; ok && there != here {
			return &ServiceAddressError{Account: acc.Name, KeyHint: KeyHint(acc.APIKey), Recorded: there, Address: a}
		}
	}
	return nil
}

// OtherHistory returns a warning when none of the accounts' key pairs
// has its address on record (recorded, as for CheckHistory) while the
// store holds runs (of services, by ServiceKey) under other addresses
// only: a store written before the addresses were recorded (schema
// version 10), or a service this store never saw. If this address is one
// of those services, the run would start its second history, which only
// the configuration can tell; "" otherwise.
func (a ServiceAddress) OtherHistory(accounts []LockAccount, recorded map[string]string, services []string) string {
	here := a.Key()
	if len(services) == 0 || slices.Contains(services, here) {
		return ""
	}
	for _, acc := range accounts {
		if _, ok := recorded[AccountLockKey(acc.APIKey)]; ok {
			return ""
		}
	}
	declare := fmt.Sprintf("put \"same_service_as: %s\" in the configuration", services[0])
	if len(services) > 1 {
		declare = "put same_service_as with that address in the configuration"
	}
	return fmt.Sprintf("the state store holds no run history under %s, where this configuration keeps it, but holds some under %s: "+
		"if that is this service at another address, stop and %s, "+
		"or this run starts a second history, in which changes made on the service cannot be told apart from the file's "+
		"(docs/configuration.md); otherwise this run starts the history of %s",
		here, strings.Join(services, ", "), declare, here)
}

// ServiceAddressError says that an account's key pair has run history
// under another address of the service than the one this configuration
// keeps its history under (ServiceAddress.CheckHistory). The run stops
// before anything is sent (exit 2).
type ServiceAddressError struct {
	Account  string
	KeyHint  string         // the key's first characters, never the secret
	Recorded string         // the service key the key pair's history is under
	Address  ServiceAddress // this configuration's
}

func (e *ServiceAddressError) Error() string {
	key := ""
	if e.KeyHint != "" {
		key = " (key " + e.KeyHint + ")"
	}
	here := "this configuration reaches the service at " + withoutPassword(e.Address.BaseURL)
	if strings.TrimSpace(e.Address.SameAs) != "" {
		here += " and keeps its history under " + e.Address.SameAs + " (same_service_as)"
	}
	return fmt.Sprintf("account %s%s has run history in the state store under the service address %s, but %s: "+
		"one key pair belongs to one account of one service, so a second history would not know what eepipe wrote under the first "+
		"and would overwrite the changes made on the service since. If the two addresses reach one service, put "+
		"\"same_service_as: %s\" in the configuration (docs/configuration.md); if they are two services that share the key pair, "+
		"keep their histories in separate state stores (--state)",
		e.Account, key, e.Recorded, here, e.Recorded)
}

// withoutPassword is a base URL as written, its password (if it carries
// one, which the client refuses later) masked: the address is named in
// a message before the client checks it.
func withoutPassword(baseURL string) string {
	if u, err := url.Parse(strings.TrimSpace(baseURL)); err == nil && u.User != nil {
		return u.Redacted()
	}
	return baseURL
}

// accountIndex finds the configured account named name (SameAccount:
// letter case and surrounding spaces ignored), or -1.
func AccountIndex(accounts []Account, name string) int {
	return slices.IndexFunc(accounts, func(a Account) bool { return SameAccount(a.Name, name) })
}
