package apiclient

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// signRounds is how many times the message is folded through HMAC-SHA256.
const signRounds = 5

// Signature computes the value of the Authorization header for a request to
// path (no scheme, host or query string) with the given raw body, as the
// service's documentation describes (contract-notes A1):
// msg = path + hex(sha256(body)); five times msg = hex(HMAC-SHA256(secret, msg));
// the header is "HMAC " + base64(msg).
func Signature(secret, path string, body []byte) string {
	sum := sha256.Sum256(body)
	return SignatureForDigest(secret, path, hex.EncodeToString(sum[:]))
}

// SignatureForDigest is Signature for a body given by its lowercase hex
// SHA-256 digest.
func SignatureForDigest(secret, path, bodyDigestHex string) string {
	msg := []byte(path + bodyDigestHex)
	key := []byte(secret)
	for i := 0; i < signRounds; i++ {
		m := hmac.New(sha256.New, key)
		m.Write(msg)
		sum := m.Sum(nil)
		msg = []byte(hex.EncodeToString(sum))
	}
	return "HMAC " + base64.StdEncoding.EncodeToString(msg)
}
