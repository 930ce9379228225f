package savedset

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"hash"
	"strings"
)

// A saved change set is signed with HMAC-SHA256 under a key derived from
// the API secrets of the accounts it writes to (docs/apply-and-state.md, "Saved change sets",
// "Who can sign"): whoever holds those key pairs can sign and verify a set,
// on any machine and with any state store, and nobody else can. The file
// carries no key: it names each account with its company id and a
// fingerprint of its API key, and the signature covers those, the service
// and every value.

// SetKey is the change-set signing key of one configured account: its
// name, company and key id, and a key derived from its API secret (the
// secret itself is not kept).
type SetKey struct {
	account   string
	companyID string
	keyID     string // keyID of the account's API key
	keyHint   string // KeyHint of the account's API key
	mac       []byte
}

// String names the key without revealing it.
func (k SetKey) String() string {
	return fmt.Sprintf("change-set key of account %s (company %q, key %s)", k.account, k.companyID, orUnknown(k.keyHint))
}

// GoString is String: %#v shows no key either.
func (k SetKey) GoString() string { return k.String() }

// SetKeys are the signing keys of the configured accounts, by account name.
type SetKeys map[string]SetKey

// setKeyLabel separates the change-set signing key from any other use of
// an API secret.
const setKeyLabel = "eepipe.changeset/v2 signing key\x00"

// NewSetKey derives the change-set signing key of an account from its key
// pair. The secret is used once, here, and not kept.
func NewSetKey(account, companyID, apiKey, apiSecret string) SetKey {
	m := hmac.New(sha256.New, []byte(apiSecret))
	m.Write([]byte(setKeyLabel + apiKey))
	return SetKey{account: account, companyID: companyID, keyID: keyID(apiKey), keyHint: pipeline.KeyHint(apiKey), mac: m.Sum(nil)}
}

// keyID is the fingerprint of an API key a change set records: the first
// 16 hex digits of a SHA-256 of the key. It tells key pairs apart without
// revealing the key.
func keyID(apiKey string) string {
	sum := sha256.Sum256([]byte("eepipe key id\x00" + apiKey))
	return hex.EncodeToString(sum[:8])
}

// SavedKey binds a saved change set to one account: its name, the
// company the configuration gives it, and the fingerprint of its API key.
type SavedKey struct {
	Account   string `json:"account"`
	CompanyID string `json:"company_id"`
	KeyID     string `json:"key_id"`
	KeyHint   string `json:"key_hint,omitempty"`
}

// savedHeader is what a change set's signature covers besides its plans.
type savedHeader struct {
	Schema   string               `json:"schema"`
	Created  string               `json:"created"`
	Service  string               `json:"service"`
	Files    []pipeline.InputFile `json:"files"`
	Accounts []string             `json:"accounts"`
	Keys     []SavedKey           `json:"keys"`
}

// setDigest hashes a change set as it is written or read, plan by plan,
// so that neither needs the whole set in memory: the content digest is
// SHA-256 over the header's JSON and the SHA-256 of the plans' JSON.
type setDigest struct {
	plans hash.Hash
	n     int
}

func newSetDigest() *setDigest { return &setDigest{plans: sha256.New()} }

// plan adds one plan, as JSON, to the digest, and returns the plan's own
// digest (the SHA-256 of that JSON).
func (d *setDigest) plan(p *SavedPlan) ([sha256.Size]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	d.plans.Write(b)
	d.plans.Write([]byte{'\n'})
	d.n++
	return sha256.Sum256(b), nil
}

// sum returns the content digest of a set with header h.
func (d *setDigest) sum(h savedHeader) ([]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	all := sha256.New()
	all.Write([]byte(SavedSetSchema + "\n"))
	all.Write(hb)
	fmt.Fprintf(all, "\n%d\n", d.n)
	all.Write(d.plans.Sum(nil))
	return all.Sum(nil), nil
}

func (s *SavedChangeSet) header() savedHeader {
	return savedHeader{Schema: s.Schema, Created: s.Created.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), Service: s.Service,
		Files: s.Files, Accounts: s.Accounts, Keys: s.Keys}
}

// contentDigest computes the content digest of s from its plans in memory.
func (s *SavedChangeSet) contentDigest() ([]byte, error) {
	d := newSetDigest()
	for i := range s.Plans {
		if _, err := d.plan(&s.Plans[i]); err != nil {
			return nil, err
		}
	}
	return d.sum(s.header())
}

// signature returns the hex HMAC-SHA256 of digest under the keys of the
// accounts of s, in their order.
func (s *SavedChangeSet) signature(digest []byte, keys SetKeys) (string, error) {
	var key []byte
	for _, sk := range s.Keys {
		k, ok := keys[sk.Account]
		if !ok || len(k.mac) == 0 {
			return "", fmt.Errorf("account %s has no key pair to sign with", sk.Account)
		}
		key = append(key, k.mac...)
	}
	m := hmac.New(sha256.New, key)
	m.Write(digest)
	return hex.EncodeToString(m.Sum(nil)), nil
}

// Sign records the company and key id of each account of s and signs it
// with their keys. It does not check the values (Check does).
func (s *SavedChangeSet) Sign(keys SetKeys) error {
	s.Keys = nil
	for _, a := range s.Accounts {
		k, ok := keys[a]
		if !ok || len(k.mac) == 0 {
			return fmt.Errorf("account %s has no key pair to sign the change set with", a)
		}
		s.Keys = append(s.Keys, SavedKey{Account: a, CompanyID: k.companyID, KeyID: k.keyID, KeyHint: k.keyHint})
	}
	d, err := s.contentDigest()
	if err != nil {
		return err
	}
	s.digest = d
	s.Signature, err = s.signature(d, keys)
	return err
}

// ErrSetSignature is the error of a change set whose signature does not
// hold (errors.Is).
var ErrSetSignature = errors.New("the change set's signature does not hold")

// Verify checks that s was signed for service with the key pairs of keys:
// each account it writes to must be configured with the company and key
// pair the set names, and the signature must hold. The errors are
// *SavedSetError: the set is refused, nothing sent.
func (s *SavedChangeSet) Verify(service string, keys SetKeys) error {
	if pipeline.ServiceKey(s.Service) != pipeline.ServiceKey(service) {
		return &SavedSetError{Problems: []string{fmt.Sprintf("the change set was signed for the service %s, but this run talks to %s", s.Service, service)}}
	}
	var problems []string
	for _, sk := range s.Keys {
		k, ok := keys[sk.Account]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("the change set writes to account %s, which is not configured", sk.Account))
		case k.companyID != sk.CompanyID:
			problems = append(problems, fmt.Sprintf("the change set was signed for account %s of company %q, but this configuration's %s is company %q",
				sk.Account, sk.CompanyID, sk.Account, k.companyID))
		case k.keyID != sk.KeyID:
			problems = append(problems, fmt.Sprintf("the change set was signed for account %s with the key pair %s (key id %s), but this configuration's %s holds the key pair %s (key id %s)",
				sk.Account, orUnknown(sk.KeyHint), sk.KeyID, sk.Account, orUnknown(k.keyHint), k.keyID))
		}
	}
	if len(problems) > 0 {
		return &SavedSetError{Problems: problems}
	}
	if s.digest == nil {
		d, err := s.contentDigest()
		if err != nil {
			return &SavedSetError{Problems: []string{err.Error()}}
		}
		s.digest = d
	}
	want, err := s.signature(s.digest, keys)
	if err != nil {
		return &SavedSetError{Problems: []string{err.Error()}}
	}
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(s.Signature))) || len(s.Signature) != len(want) {
		return &SavedSetError{Problems: []string{"the signature does not match the content: the change set was edited after `eepipe diff -o` wrote it " +
			"(or signed with other key pairs)"}, err: ErrSetSignature}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// SavedSetError refuses a saved change set for its content: an edited or
// foreign set, a value no workbook cell could hold. Nothing is sent; the
// command exits 2.
type SavedSetError struct {
	Problems []string
	err      error
}

func (e *SavedSetError) Error() string {
	const most = 20
	ps := e.Problems
	more := ""
	if len(ps) > most {
		more = fmt.Sprintf("; and %d more", len(ps)-most)
		ps = ps[:most]
	}
	return "the change set is refused: " + strings.Join(ps, "; ") + more +
		". Nothing was sent. Write a new change set with eepipe diff -o (and have it signed off again)"
}

func (e *SavedSetError) Unwrap() error { return e.err }
