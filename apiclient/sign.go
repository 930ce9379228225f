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
// service's documentation describes (docs/configuration.md, "Authentication"):
// msg = path + hex(sha256(body)); five times msg = hex(HMAC-SHA256(secret, msg));
// the header is "HMAC " + base64(msg).
func Signature(secret, path string, body []byte) string {
	sum := sha256.Sum256(body)
	var hexed [2 * sha256.Size]byte
	hex.Encode(hexed[:], sum[:])
	return SignatureForDigest(secret, path, string(hexed[:]))
}

// SignatureForDigest is Signature for a body given by its lowercase hex
// SHA-256 digest.
func SignatureForDigest(secret, path, bodyDigestHex string) string {
	// One HMAC, reset between rounds, and fixed buffers: the rounds
	// allocate nothing but the first message.
	m := hmac.New(sha256.New, []byte(secret))
	msg := make([]byte, 0, len(path)+len(bodyDigestHex))
	msg = append(append(msg, path...), bodyDigestHex...)
	var sum [sha256.Size]byte
	var hexed [2 * sha256.Size]byte
	for i := 0; i < signRounds; i++ {
		m.Reset()
		m.Write(msg)
		hex.Encode(hexed[:], m.Sum(sum[:0]))
		msg = hexed[:]
	}
	return "HMAC " + base64.StdEncoding.EncodeToString(msg)
}
