package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

const (
	acmeKey       = "mpk_sandbox_acme"
	acmeSecret    = "sandbox-secret-acme"
	blueKey       = "mpk_sandbox_bluecrane"
	blueSecret    = "sandbox-secret-bluecrane"
	plansPath     = "/api/public/v1/employment_equity_plans"
	scorecardsURL = "/api/public/v1/scorecards"
)

// testHTTP is the HTTP client of the tests: a request that gets stuck fails
// its test after a bounded time instead of hanging the package.
var testHTTP = &http.Client{Timeout: 30 * time.Second}

// startSandbox serves a sandbox on 127.0.0.1 for the test.
func startSandbox(t *testing.T, opts Options) *Server {
	t.Helper()
	srv, err := Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv
}

// caller sends raw signed requests as one account.
type caller struct {
	t           *testing.T
	base        string
	key, secret string
}

func (srv *Server) as(t *testing.T, key, secret string) caller {
	return caller{t: t, base: srv.URL, key: key, secret: secret}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// errors returns the messages of an {"errors":[...]} body.
func (r response) errors() []string {
	var v struct {
		Errors []string `json:"errors"`
	}
	_ = json.Unmarshal(r.body, &v)
	return v.Errors
}

func (r response) decode(t *testing.T, into any) {
	t.Helper()
	if err := json.Unmarshal(r.body, into); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends a request signed over path and body; sign overrides the
// Authorization header when not empty.
func (c caller) do(method, path, body string, sign ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("X-Api-Key", c.key)
	}
	auth := apiclient.Signature(c.secret, strings.SplitN(path, "?", 2)[0], []byte(body))
	if len(sign) > 0 {
		auth = sign[0]
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := testHTTP.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// must sends a request and fails the test unless the status is want.
func (c caller) must(want int, method, path, body string) response {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != want {
		c.t.Fatalf("%s %s %s: status %d, want %d; body %s", method, path, body, r.status, want, r.body)
	}
	return r
}

// createPlan creates a plan and returns it.
func (c caller) createPlan(body string) apiclient.Plan {
	c.t.Helper()
	var p apiclient.Plan
	c.must(201, "POST", plansPath, body).decode(c.t, &p)
	return p
}

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func jsonDecode(resp *http.Response, into any) error {
	return json.NewDecoder(resp.Body).Decode(into)
}
