package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

func TestAuthentication(t *testing.T) {
	srv := startSandbox(t, Options{})
	good := apiclient.Signature(acmeSecret, plansPath, nil)
	tests := []struct {
		name      string
		key, sign string
		body      string
		want      int
	}{
		{"valid", acmeKey, good, "", 200},
		{"missing key", "", good, "", 401},
		{"unknown key", "mpk_sandbox_nobody", good, "", 401},
		{"missing signature", acmeKey, "", "", 401},
		{"wrong secret", acmeKey, apiclient.Signature("not-the-secret", plansPath, nil), "", 401},
		{"other account's secret", acmeKey, apiclient.Signature(blueSecret, plansPath, nil), "", 401},
		{"signature of another path", acmeKey, apiclient.Signature(acmeSecret, scorecardsURL, nil), "", 401},
		{"signature of another body", acmeKey, apiclient.Signature(acmeSecret, plansPath, []byte("{}")), "", 401},
		{"signature without scheme", acmeKey, good[len("HMAC "):], "", 401},
		{"digest of the body, not of nothing", acmeKey, good, "{}", 401},
	}
	var first []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := caller{t: t, base: srv.URL, key: tc.key}
			sign := tc.sign
			if sign == "" {
				sign = " "
			}
			r := c.do("GET", plansPath, tc.body, sign)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d (%s)", r.status, tc.want, r.body)
			}
			if tc.want == 401 {
				msgs := r.errors()
				if len(msgs) != 1 {
					t.Fatalf("401 body %s: want one message", r.body)
				}
				if first == nil {
					first = msgs
				} else if msgs[0] != first[0] {
					t.Errorf("401 message %q differs from %q: it must not say why", msgs[0], first[0])
				}
			}
		})
	}
}

func TestSignatureOverBodyOnWrites(t *testing.T) {
	srv := startSandbox(t, Options{})
	body := `{"employment_equity_plan":{"start_date":"2025-09-01","end_date":"2026-08-31"}}`
	c := srv.as(t, acmeKey, acmeSecret)
	// Signed over a different body than the one sent: refused, nothing stored.
	r := c.do("POST", plansPath, body, apiclient.Signature(acmeSecret, plansPath, []byte(body+" ")))
	if r.status != 401 {
		t.Fatalf("status %d, want 401", r.status)
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 0 {
		t.Fatalf("%d plans stored after a refused request", n)
	}
	c.must(201, "POST", plansPath, body)
}

func TestKeyExpiry(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	fx := DefaultFixtures()
	add := func(name, expires string) {
		fx.Accounts = append(fx.Accounts, Account{Name: name, APIKey: "mpk_" + name, Secret: "s-" + name, CompanyID: "8ovHrj", ExpiresAt: expires})
	}
	add("far", "2027-06-01T00:00:00Z")
	add("days", "2026-12-04T23:00:00Z")    // 12 days 11 hours: the nearest day
	add("tendays", "2026-12-02T11:59:59Z") // a second short of 10 days: "10d"
	add("tenplus", "2026-12-02T13:00:00Z") // 10 days and an hour: "10d"
	add("hours", "2026-11-22T16:30:00Z")   // 4.5 hours: rounded up
	add("dateonly", "2026-12-01")          // start of that day, UTC
	add("nozone", "2026-11-27T12:00:00")   // ISO 8601 without a zone: UTC
	add("fraction", "2026-11-23T12:00:00.5+00:00")
	add("past", "2026-11-22T11:59:59Z")
	add("offset", "2026-11-22T14:00:00+02:00") // exactly now: expired
	srv := startSandbox(t, Options{Fixtures: fx, Now: func() time.Time { return now }})
	tests := []struct {
		name              string
		status            int
		expires, expireIn string
	}{
		{"acme", 200, "", ""},
		{"far", 200, "2027-06-01T00:00:00Z", ""},
		{"days", 200, "2026-12-04T23:00:00Z", "12d"},
		{"tendays", 200, "2026-12-02T11:59:59Z", "10d"},
		{"tenplus", 200, "2026-12-02T13:00:00Z", "10d"},
		{"hours", 200, "2026-11-22T16:30:00Z", "5h"},
		{"dateonly", 200, "2026-12-01T00:00:00Z", "9d"},
		{"nozone", 200, "2026-11-27T12:00:00Z", "5d"},
		{"fraction", 200, "2026-11-23T12:00:00Z", "1d"},
		{"past", 401, "2026-11-22T11:59:59Z", ""},
		{"offset", 401, "2026-11-22T12:00:00Z", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, secret := "mpk_"+tc.name, "s-"+tc.name
			if tc.name == "acme" {
				key, secret = acmeKey, acmeSecret
			}
			r := srv.as(t, key, secret).do("GET", plansPath, "")
			if r.status != tc.status {
				t.Fatalf("status %d, want %d", r.status, tc.status)
			}
			if got := r.header.Get("X-Api-Key-Expires"); got != tc.expires {
				t.Errorf("X-Api-Key-Expires %q, want %q", got, tc.expires)
			}
			if got := r.header.Get("X-Api-Key-Expires-In"); got != tc.expireIn {
				t.Errorf("X-Api-Key-Expires-In %q, want %q", got, tc.expireIn)
			}
		})
	}
	// A wrong signature on an expiring key says nothing about the key.
	r := srv.as(t, "mpk_days", "wrong").do("GET", plansPath, "")
	if r.status != 401 || r.header.Get("X-Api-Key-Expires") != "" {
		t.Errorf("bad signature: status %d, expiry header %q", r.status, r.header.Get("X-Api-Key-Expires"))
	}
}

func TestExpiresIn(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour:            "30d",
		24 * time.Hour:                 "1d",
		10*24*time.Hour - time.Second:  "10d",
		10*24*time.Hour + time.Second:  "10d",
		10*24*time.Hour + 11*time.Hour: "10d",
		10*24*time.Hour + 12*time.Hour: "11d",
		36*time.Hour - time.Second:     "1d",
		24*time.Hour - time.Minute:     "24h",
		5 * time.Hour:                  "5h",
		4*time.Hour + 1:                "5h",
		time.Minute:                    "1h",
		12*24*time.Hour + 23*time.Hour: "13d",
		12 * 24 * time.Hour:            "12d",
	} {
		if got := expiresIn(d); got != want {
			t.Errorf("expiresIn(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestUnknownRoutes(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	r := c.do("GET", "/api/public/v1/nothing", "")
	if r.status != http.StatusNotFound || len(r.errors()) != 1 {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
	r = c.do("PUT", plansPath, "")
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
		t.Errorf("wrong method: %d Allow %q %s", r.status, r.header.Get("Allow"), r.body)
	}
	if got := srv.Sandbox.Stats().ByRoute["PUT (no route)"]; got != 1 {
		t.Errorf("by_route PUT (no route) = %d", got)
	}
}

// rawRequest sends a GET whose request line carries path byte for byte
// (no client-side escaping or cleaning) and returns the status.
func rawRequest(t *testing.T, srv *Server, path, key, auth string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(srv.URL, "http://"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: sandbox\r\nX-Api-Key: %s\r\nAuthorization: %s\r\nAccept: application/json\r\nConnection: close\r\n\r\n", path, key, auth)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSignatureOverRawPath: the signature covers the path as the client
// sent it, whatever escaping the client chose (docs/configuration.md, "Authentication": the
// request path, no scheme, host or query); a signature of the decoded path
// is accepted too, one of another escaping is not.
func TestSignatureOverRawPath(t *testing.T) {
	const id = "scorecard_x/y z|~"
	fx := DefaultFixtures()
	sc := fx.Scorecards[0]
	sc.ID, sc.Workforce = id, nil
	fx.Scorecards = append(fx.Scorecards, sc)
	srv := startSandbox(t, Options{Fixtures: fx})
	prefix := scorecardsURL + "/"
	tests := []struct {
		name, sent, signed string
		want               int
	}{
		{"Go's escaping", prefix + "scorecard_x%2Fy%20z%7C~", prefix + "scorecard_x%2Fy%20z%7C~", 200},
		{"lower-case escapes", prefix + "scorecard_x%2fy%20z%7c%7e", prefix + "scorecard_x%2fy%20z%7c%7e", 200},
		{"raw characters Go would escape", prefix + "scorecard_x%2Fy%20z|~", prefix + "scorecard_x%2Fy%20z|~", 200},
		{"with a query", prefix + "scorecard_x%2Fy%20z|~?a=1", prefix + "scorecard_x%2Fy%20z|~", 200},
		{"signed decoded", prefix + "scorecard_x%2Fy%20z%7C~", prefix + id, 200},
		{"signed with another escaping", prefix + "scorecard_x%2Fy%20z|~", prefix + "scorecard_x%2Fy%20z%7C%7E", 401},
		{"signed with the query", prefix + "scorecard_x%2Fy%20z%7C~?a=1", prefix + "scorecard_x%2Fy%20z%7C~?a=1", 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rawRequest(t, srv, tc.sent, acmeKey, apiclient.Signature(acmeSecret, tc.signed, nil))
			if got != tc.want {
				t.Errorf("GET %s signed over %s: status %d, want %d", tc.sent, tc.signed, got, tc.want)
			}
		})
	}
	// The typed client reaches the same scorecard.
	c, err := apiclient.New(apiclient.Options{BaseURL: srv.URL, APIKey: acmeKey, APISecret: acmeSecret})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetScorecard(t.Context(), id)
	if err != nil || got.ID != id {
		t.Fatalf("GetScorecard(%q) = %+v, %v", id, got, err)
	}
	if err := c.RecalculateScorecard(t.Context(), id); err != nil {
		t.Fatalf("RecalculateScorecard(%q): %v", id, err)
	}
}

// TestParseExpiry: expires_at takes the ISO 8601 forms people write; a
// form without a zone is UTC.
func TestParseExpiry(t *testing.T) {
	want := time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)
	for _, s := range []string{
		"2026-12-01T08:30:00Z", "2026-12-01T10:30:00+02:00", "2026-12-01T10:30:00+0200",
		"2026-12-01T08:30:00.000Z", "2026-12-01T08:30:00", "2026-12-01T08:30", "2026-12-01T10:30+02:00",
		"2026-12-01 08:30:00", " 2026-12-01T08:30:00Z ",
	} {
		got, err := parseExpiry(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseExpiry(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := parseExpiry("2026-12-01"); err != nil || !got.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date: %v, %v", got, err)
	}
	for _, s := range []string{"", "soon", "01/12/2026", "2026-13-01", "2026-12-01T25:00"} {
		if _, err := parseExpiry(s); err == nil {
			t.Errorf("parseExpiry(%q) accepted", s)
		}
	}
}
