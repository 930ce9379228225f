package savedset

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// testSigner makes a signing key for name and its trusted signer.
func testSigner(t testing.TB, name string) (*SignerKey, Signer) {
	t.Helper()
	k, err := NewSignerKey(name, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(k.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return k, Signer{Name: name, PublicKey: pub}
}

// TestSignerKeyFile: a key file reads back to the same key; one whose
// public key was edited, of another schema, or with another field is
// refused; neither the key's text nor an error shows the private key.
func TestSignerKeyFile(t *testing.T) {
	k, _ := testSigner(t, "Thandi Nkosi")
	b := MarshalSignerKey(k)
	back, err := ParseSignerKey(b)
	if err != nil || back.Name != k.Name || !back.key.Equal(k.key) {
		t.Fatalf("ParseSignerKey = %v, %v", back, err)
	}
	seed := base64.StdEncoding.EncodeToString(k.key.Seed())
	if s := fmt.Sprintf("%v %#v %s", k, k, k); strings.Contains(s, seed) || !strings.Contains(s, k.PublicKey()) {
		t.Errorf("the key shows as %s", s)
	}
	other, _ := testSigner(t, "Other")
	for name, text := range map[string]string{
		"public key edited": strings.Replace(string(b), k.PublicKey(), other.PublicKey(), 1),
		"schema":            strings.Replace(string(b), SignerKeySchema, "eepipe.signer/v0", 1),
		"unknown field":     strings.Replace(string(b), `"name"`, `"extra": 1, "name"`, 1),
		"short key":         strings.Replace(string(b), seed, base64.StdEncoding.EncodeToString([]byte("short")), 1),
		"formula name":      strings.Replace(string(b), `"Thandi Nkosi"`, `"=cmd"`, 1),
	} {
		_, err := ParseSignerKey([]byte(text))
		if err == nil || strings.Contains(err.Error(), seed) {
			t.Errorf("%s: ParseSignerKey = %v, want a refusal not showing the key", name, err)
		}
	}
}

// TestParsePublicKey: the form signer new prints reads back; other text,
// a key of another length and non-canonical base64 are refused.
func TestParsePublicKey(t *testing.T) {
	k, _ := testSigner(t, "A")
	if pub, err := ParsePublicKey(k.PublicKey()); err != nil || FormatPublicKey(pub) != k.PublicKey() {
		t.Fatalf("ParsePublicKey(%s) = %v", k.PublicKey(), err)
	}
	for _, s := range []string{"", "ed25519:", "ssh-ed25519 AAAA", strings.TrimPrefix(k.PublicKey(), "ed25519:"), "ed25519:" + base64.StdEncoding.EncodeToString(make([]byte, 31)),
		k.PublicKey() + " ", strings.TrimRight(k.PublicKey(), "=")} {
		if _, err := ParsePublicKey(s); err == nil {
			t.Errorf("ParsePublicKey(%q) accepted", s)
		}
	}
}

// signedOffSet is testSavedSet signed off by k, written and read back as
// apply reads it.
func signedOffSet(t *testing.T, k *SignerKey) []byte {
	t.Helper()
	_, s := testSavedSet(t)
	if err := s.SignOff(k, time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	b, err := MarshalSaved(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifySignOff: a set signed off by a listed signer verifies and
// names them; a set with no sign-off, edited after it (and sealed again
// with the accounts' keys), signed by a key not listed, or naming another
// signer than the listed one for its key is refused.
func TestVerifySignOff(t *testing.T) {
	thandi, listed := testSigner(t, "Thandi Nkosi")
	mallory, _ := testSigner(t, "Mallory")
	signers := []Signer{listed}
	read := func(b []byte) *SavedChangeSet {
		s, err := scanWhole(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(testService, testSetKeys()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := signedOffSet(t, thandi)
	if name, err := read(good).VerifySignOff(signers); err != nil || name != "Thandi Nkosi" {
		t.Fatalf("VerifySignOff = %q, %v", name, err)
	}
	// Edited to 999 and sealed again with the accounts' keys, as anyone
	// holding them can: the seal holds, the sign-off does not.
	edited := read(good)
	plans, _ := scanWhole(good)
	edited.Plans = plans.Plans
	edited.Plans[0].Targets[0].Counters[0].New = 999
	if err := edited.Sign(testSetKeys()); err != nil {
		t.Fatal(err)
	}
	b, _ := MarshalSaved(edited)
	resealed := read(b)

	_, unsigned := testSavedSet(t)
	imposter, _ := testSigner(t, "Thandi Nkosi") // another key under the listed name
	renamed := &SignerKey{Name: "Thandi N.", key: thandi.key}
	for name, tc := range map[string]struct {
		s    *SavedChangeSet
		want string
	}{
		"no sign-off":            {unsigned, "signed off by none"},
		"edited and resealed":    {resealed, "does not cover the content"},
		"key not listed":         {read(signedOffSet(t, mallory)), "not one of the configuration's signers"},
		"listed name, other key": {read(signedOffSet(t, imposter)), "not one of the configuration's signers"},
		"other name":             {read(signedOffSet(t, renamed)), `lists the key`},
	} {
		if _, err := tc.s.VerifySignOff(signers); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Nothing was sent") {
			t.Errorf("%s: VerifySignOff = %v, want a refusal saying %q", name, err, tc.want)
		}
	}
	// A sign-off written after the plans (where a sign-off workbook's
	// readable sheet could not show it above them) is refused as damaged.
	i, j := bytes.Index(good, []byte(`  "sign_off":`)), bytes.Index(good, []byte(`  "plans":`))
	k := bytes.LastIndex(good, []byte(`  "signature":`))
	if i < 0 || j < i || k < j {
		t.Fatalf("the set's fields are not in order:\n%s", good)
	}
	moved := slices.Concat(good[:i], good[j:k], good[i:j], good[k:])
	if _, err := scanWhole(moved); err == nil || !strings.Contains(err.Error(), `"sign_off" comes after "plans"`) {
		t.Errorf("a sign-off after the plans: %v", err)
	}
}

// FuzzParseSignerKey: any input is refused or a key that writes back to a
// file that reads as the same key.
func FuzzParseSignerKey(f *testing.F) {
	k, _ := testSigner(f, "Thandi Nkosi")
	f.Add(MarshalSignerKey(k))
	f.Add([]byte(`{"schema":"eepipe.signer/v1","name":"x","public_key":"ed25519:","private_key":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseSignerKey(b)
		if err != nil {
			return
		}
		back, err := ParseSignerKey(MarshalSignerKey(k))
		if err != nil || back.Name != k.Name || !back.key.Equal(k.key) {
			t.Fatalf("%q: read back %v, %v", b, back, err)
		}
	})
}

// FuzzParsePublicKey: any text is refused or a key that formats back to
// the same text.
func FuzzParsePublicKey(f *testing.F) {
	k, _ := testSigner(f, "A")
	f.Add(k.PublicKey())
	f.Add("ed25519:AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		pub, err := ParsePublicKey(s)
		if err != nil {
			return
		}
		if len(pub) != ed25519.PublicKeySize || FormatPublicKey(pub) != s {
			t.Fatalf("%q read as %x", s, pub)
		}
	})
}
