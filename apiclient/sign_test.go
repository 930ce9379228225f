package apiclient

import "testing"

// TestSignatureVector checks the published test vector of docs/configuration.md, "Authentication".
func TestSignatureVector(t *testing.T) {
	got := SignatureForDigest(
		"d197b7819d6f914677270f939a4c67ad9dc4bd44076e6a0ca7bafab9235a7126",
		"/api/public/v1/scorecards",
		"726a4d0e2707c29beda838e4d0c8cca5753486c3057cf5a722abf65e8f4b3af1",
	)
	want := "HMAC ODNjMzY5N2JmNDI4NWFkZjMwNzlhOTJiMTdmOTVjZGJkMzk0MzM4OGZiYTE5OTEyMWVlOWZjOTZkNmEzNTQ4Mg=="
	if got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
}

func TestSignatureEmptyBody(t *testing.T) {
	a := Signature("s", "/p", nil)
	b := SignatureForDigest("s", "/p", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	if a != b {
		t.Fatalf("empty body: %s != %s", a, b)
	}
	if Signature("s", "/p", []byte("x")) == a || Signature("t", "/p", nil) == a || Signature("s", "/q", nil) == a {
		t.Fatal("signature does not depend on body, secret and path")
	}
}
