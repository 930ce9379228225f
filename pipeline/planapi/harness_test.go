package planapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
)

const (
	testKey    = "mpk_test_0123456789abcdef"
	testSecret = "s3cret-7f3a9c-never-log-me"
	lookupUser = "consultant"
	lookupPass = "lookup-pa55-never-log-me"
)

// recorded is one request as the test server received it.
type recorded struct {
	Method, Path, RawQuery string
	Body                   []byte
}

// server is an httptest server on 127.0.0.1 that checks each request's
// authentication as the service does (HMAC over the path as sent and the
// exact body; Basic for the lookup) and hands it to the current handler.
type server struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	reqs     []recorded
	authFail []string
	handler  http.HandlerFunc
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{t: t, handler: h}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	if !strings.HasPrefix(s.srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server is not on 127.0.0.1: %s", s.srv.URL)
	}
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: body}
	var fail string
	if strings.HasPrefix(rec.Path, apiclient.CompaniesPath) {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(lookupUser+":"+lookupPass))
		if r.Header.Get("Authorization") != want {
			fail = "bad Basic auth"
		}
	} else if r.Header.Get("X-Api-Key") != testKey || r.Header.Get("Authorization") != apiclient.Signature(testSecret, rec.Path, body) {
		fail = "bad signature"
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	if fail != "" {
		s.authFail = append(s.authFail, rec.Method+" "+rec.Path+": "+fail)
	}
	h := s.handler
	s.mu.Unlock()
	if fail != "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h(w, r)
}

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func (s *server) requireAuthOK() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.authFail) > 0 {
		s.t.Fatalf("authentication failures: %v", s.authFail)
	}
}

// client returns a client of s that records its waits instead of sleeping.
func (s *server) client(t *testing.T, mutate ...func(*apiclient.Options)) (*apiclient.Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	opts := apiclient.Options{
		BaseURL: s.srv.URL, APIKey: testKey, APISecret: testSecret,
		LookupURL: s.srv.URL, LookupUsername: lookupUser, LookupPassword: lookupPass,
		Retry:      apiclient.RetryPolicy{MaxAttempts: 1},
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
		Sleep:      sl.sleep,
	}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := apiclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

// sleeps records the client's waits between attempts.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func jsonHandler(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body = %s, want %s", got, want)
	}
}

// startSandbox serves the sandbox on 127.0.0.1 behind wrap (nil: none).
func startSandbox(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = sb
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
