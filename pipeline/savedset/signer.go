package savedset

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"io"
	"strings"
	"time"
)

// A change set may also be signed off by a person (docs/apply-and-state.md,
// "Who can sign"): `eepipe diff -o SET --sign-with FILE` signs the set's
// content digest, the signer's name and the time with that person's
// ed25519 key, and apply refuses, when the configuration lists its
// trusted signers, a set no listed signer signed. The accounts' seal
// (sign.go) stays the integrity check; the sign-off says who
// approved exactly this content.

// SignerKeySchema names the shape of a signer's private key file.
const SignerKeySchema = "eepipe.signer/v1"

// publicKeyPrefix starts a signer's public key as the configuration
// gives it: "ed25519:" and the key in standard base64.
const publicKeyPrefix = "ed25519:"

// maxSignerName bounds a signer's name, in characters.
const maxSignerName = 100

// SignerKey is one person's signing key: their name and ed25519 private
// key, as the file `eepipe signer new` writes holds them.
type SignerKey struct {
	Name string
	key  ed25519.PrivateKey
}

// String names the key without revealing it.
func (k *SignerKey) String() string {
	return fmt.Sprintf("signing key of %s (%s)", k.Name, k.PublicKey())
}

// GoString is String: %#v shows no key either.
func (k *SignerKey) GoString() string { return k.String() }

// signerKeyFile is the JSON of a signer's key file.
type signerKeyFile struct {
	Schema     string `json:"schema"`
	Name       string `json:"name"`
	PublicKey  string `json:"public_key"`
	PrivateKey string `json:"private_key"` // the 32-byte seed, standard base64
}

// CheckSignerName checks a signer's name as a plan name is checked
// (checkNameText): it is shown in reports, workbooks and the history.
func CheckSignerName(name string) error {
	if name == "" {
		return errors.New("the signer's name is empty")
	}
	if err := checkSavedText(name, maxSignerName, false); err != nil {
		return fmt.Errorf("the signer's name: %w", err)
	}
	if err := pipeline.CheckNameText(name); err != nil {
		return fmt.Errorf("the signer's name: %w", err)
	}
	return nil
}

// NewSignerKey makes a signing key for name from the randomness of rand.
func NewSignerKey(name string, rand io.Reader) (*SignerKey, error) {
	if err := CheckSignerName(name); err != nil {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	return &SignerKey{Name: name, key: priv}, nil
}

// PublicKey is the key's public half as the configuration's public_key
// takes it: "ed25519:" and standard base64.
func (k *SignerKey) PublicKey() string {
	return FormatPublicKey(k.key.Public().(ed25519.PublicKey))
}

// FormatPublicKey writes pub as the configuration's public_key takes it.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads a public key written by FormatPublicKey.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(s, publicKeyPrefix)
	if !ok {
		return nil, fmt.Errorf("%q is not a signer's public key: it starts with %q, as `eepipe signer new` prints it", pipeline.Excerpt(s), publicKeyPrefix)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%q is not a signer's public key: after %q come the %d bytes of an ed25519 key in base64, as `eepipe signer new` prints it",
			pipeline.Excerpt(s), publicKeyPrefix, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// MarshalSignerKey returns the content of k's key file.
func MarshalSignerKey(k *SignerKey) []byte {
	b, _ := json.MarshalIndent(signerKeyFile{Schema: SignerKeySchema, Name: k.Name, PublicKey: k.PublicKey(),
		PrivateKey: base64.StdEncoding.EncodeToString(k.key.Seed())}, "", "  ")
	return append(b, '\n')
}

// ParseSignerKey reads a key file written by MarshalSignerKey. Its errors
// never show the key.
func ParseSignerKey(b []byte) (*SignerKey, error) {
	var f signerKeyFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || f.Schema != SignerKeySchema || dec.More() {
		return nil, fmt.Errorf("it is not a signer's key file (%s) as `eepipe signer new` writes it", SignerKeySchema)
	}
	if err := CheckSignerName(f.Name); err != nil {
		return nil, err
	}
	seed, err := base64.StdEncoding.Strict().DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("its private_key is not an ed25519 key in base64")
	}
	k := &SignerKey{Name: f.Name, key: ed25519.NewKeyFromSeed(seed)}
	if f.PublicKey != k.PublicKey() {
		return nil, errors.New("its public_key is not the one of its private_key: the file was edited")
	}
	return k, nil
}

// SavedSignOff is a person's sign-off of a saved change set: who signed
// (their name and public key), when, and the ed25519 signature of those
// and the set's content digest (signOffMessage).
type SavedSignOff struct {
	Signer    string    `json:"signer"`
	PublicKey string    `json:"public_key"`
	SignedAt  time.Time `json:"signed_at"`
	Signature string    `json:"signature"`
}

// signOffMessage is what a sign-off signs: the content digest of the set
// (everything the accounts' seal covers), the signer's name and public
// key, and the time.
func signOffMessage(digest []byte, o *SavedSignOff) []byte {
	return fmt.Appendf(nil, "eepipe.changeset sign-off v1\ndigest: %s\nsigner: %s\npublic_key: %s\nsigned_at: %s\n",
		hex.EncodeToString(digest), o.Signer, o.PublicKey, o.SignedAt.UTC().Format(time.RFC3339Nano))
}

// SignOff signs s off with k at the time at. s is signed (Sign) first: the
// sign-off covers the content digest the seal covers.
func (s *SavedChangeSet) SignOff(k *SignerKey, at time.Time) error {
	if s.digest == nil {
		return errors.New("the change set is signed off once it is signed")
	}
	o := &SavedSignOff{Signer: k.Name, PublicKey: k.PublicKey(), SignedAt: at.UTC().Truncate(time.Second)}
	o.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(k.key, signOffMessage(s.digest, o)))
	s.SignedOff = o
	return nil
}

// Signer is a trusted signer of the configuration: a name and the public
// key of their signing key.
type Signer struct {
	Name      string
	PublicKey ed25519.PublicKey
}

// VerifySignOff checks the sign-off of s against the trusted signers: it
// must be there, signed by the key of a listed signer, under that
// signer's listed name, over the content of s. It returns the signer's
// name; the errors are *SavedSetError (the set is refused, nothing sent).
func (s *SavedChangeSet) VerifySignOff(signers []Signer) (string, error) {
	refuse := func(format string, a ...any) (string, error) {
		return "", &SavedSetError{Problems: []string{fmt.Sprintf(format, a...)}, err: ErrSetSignature}
	}
	o := s.SignedOff
	if o == nil {
		return refuse("the configuration lists the signers whose sign-off a change set needs (signers:), and this set is signed off by none: " +
			"have a listed signer write it with eepipe diff -o SET --sign-with THEIR-KEY-FILE")
	}
	pub, err := ParsePublicKey(o.PublicKey)
	if err != nil {
		return refuse("its sign-off: %v", err)
	}
	var listed *Signer
	for i := range signers {
		if signers[i].PublicKey.Equal(pub) {
			listed = &signers[i]
		}
	}
	switch {
	case listed == nil:
		return refuse("it is signed off by %q with the key %s, which is not one of the configuration's signers", pipeline.Excerpt(o.Signer), o.PublicKey)
	case listed.Name != o.Signer:
		return refuse("its sign-off names the signer %q, but the configuration lists the key %s as %q's", pipeline.Excerpt(o.Signer), o.PublicKey, listed.Name)
	}
	if s.digest == nil {
		if s.digest, err = s.contentDigest(); err != nil {
			return refuse("%v", err)
		}
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(o.Signature)
	if err != nil || !ed25519.Verify(pub, signOffMessage(s.digest, o), sig) {
		return refuse("the sign-off of %s does not cover the content: the change set was edited after they signed it off", listed.Name)
	}
	return listed.Name, nil
}

// SignerEntry is one trusted signer as the configuration lists it.
type SignerEntry struct {
	Name      string
	PublicKey string
}

// ParseSigners reads the configuration's trusted signers. Each problem
// names its entry (signers[N], from 1); a public key listed twice is one,
// since a sign-off would name either signer.
func ParseSigners(entries []SignerEntry) ([]Signer, []string) {
	var signers []Signer
	var problems []string
	for i, e := range entries {
		where := fmt.Sprintf("signers[%d]", i+1)
		if err := CheckSignerName(e.Name); err != nil {
			problems = append(problems, fmt.Sprintf("%s: name: %v", where, err))
		}
		pub, err := ParsePublicKey(strings.TrimSpace(e.PublicKey))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: public_key: %v", where, err))
			continue
		}
		for j, s := range signers {
			if s.PublicKey.Equal(pub) {
				problems = append(problems, fmt.Sprintf("%s: public_key: the key of signers[%d] (%s) again; a key is one person's", where, j+1, s.Name))
			}
		}
		signers = append(signers, Signer{Name: e.Name, PublicKey: pub})
	}
	return signers, problems
}
