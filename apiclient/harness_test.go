package apiclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Credentials of the test server. The secrets are scanned for in every
// error text and log line the tests produce.
const (
	testBasePath   = "/prefix/svc"
	testKey        = "mpk_test_0123456789abcdef"
	testSecret     = "s3cret-7f3a9c-never-log-me"
	testLookupUser = "consultant"
	testLookupPass = "lookup-pa55-never-log-me"
)

// recorded is one request as the test server received it.
type recorded struct {
	Method   string
	Path     string // escaped, as on the wire
	RawQuery string
	Header   http.Header
	Body     []byte
}

// testServer is an httptest server on 127.0.0.1 under a non-empty base path
// that checks every request's authentication the way the service does
// (HMAC over the path as sent and the exact body; Basic for the lookup) and
// then hands it to the current handler.
type testServer struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	reqs     []recorded
	authFail []string
	handler  func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newTestServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body []byte)) *testServer {
	t.Helper()
	ts := &testServer{t: t, handler: h}
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.serve))
	if !strings.HasPrefix(ts.srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server is not on 127.0.0.1: %s", ts.srv.URL)
	}
	t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *testServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		ts.t.Errorf("reading request body: %v", err)
		return
	}
	rec := recorded{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	ts.mu.Lock()
	ts.reqs = append(ts.reqs, rec)
	h := ts.handler
	ts.mu.Unlock()

	if msg := checkAuth(rec); msg != "" {
		ts.mu.Lock()
		ts.authFail = append(ts.authFail, rec.Method+" "+rec.Path+": "+msg)
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"errors":["not authorised"]}`)
		return
	}
	h(w, r, body)
}

// checkAuth verifies a request as the service would; "" means fine.
func checkAuth(rec recorded) string {
	switch {
	case strings.HasPrefix(rec.Path, testBasePath+APIPrefix+"/") || rec.Path == testBasePath+APIPrefix:
		if got := rec.Header.Get("X-Api-Key"); got != testKey {
			return "X-Api-Key = " + got
		}
		if want := Signature(testSecret, rec.Path, rec.Body); rec.Header.Get("Authorization") != want {
			return "bad signature"
		}
	case rec.Path == testBasePath+CompaniesPath:
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(testLookupUser+":"+testLookupPass))
		if rec.Header.Get("Authorization") != want {
			return "bad basic auth"
		}
	default:
		return "unexpected path " + rec.Path
	}
	return ""
}

func (ts *testServer) setHandler(h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	ts.mu.Lock()
	ts.handler = h
	ts.mu.Unlock()
}

func (ts *testServer) requests() []recorded {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]recorded(nil), ts.reqs...)
}

// requireAuthOK fails the test when a request failed authentication.
func (ts *testServer) requireAuthOK() {
	ts.t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, f := range ts.authFail {
		ts.t.Errorf("authentication failed server-side: %s", f)
	}
}

// sleepRecorder replaces the client's wait between attempts: it records
// the requested durations and returns at once (or ctx's error).
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// fixture is a client bound to a test server, with observed logs and
// recorded waits.
type fixture struct {
	ts     *testServer
	c      *Client
	logs   *observer.ObservedLogs
	sleeps *sleepRecorder
}

func newFixture(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body []byte), mutate ...func(*Options)) *fixture {
	t.Helper()
	ts := newTestServer(t, h)
	core, logs := observer.New(zapcore.DebugLevel)
	opts := Options{
		BaseURL: ts.srv.URL + testBasePath, APIKey: testKey, APISecret: testSecret,
		LookupURL: ts.srv.URL + testBasePath, LookupUsername: testLookupUser, LookupPassword: testLookupPass,
		Logger: zap.New(core),
		Retry:  RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second},
	}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sr := &sleepRecorder{}
	c.sleep = sr.sleep
	c.jitter = func(d time.Duration) time.Duration { return d } // the bound itself, so waits are checkable
	if opts.HTTPClient == nil {
		// A stuck request fails its test instead of hanging the package
		// (the default client allows minutes per attempt).
		c.http.Timeout = testRequestTimeout
	}
	t.Cleanup(c.http.CloseIdleConnections)
	return &fixture{ts: ts, c: c, logs: logs, sleeps: sr}
}

// testRequestTimeout bounds every HTTP exchange and every wait of a test
// for something that should happen at once; reaching it is a failure.
const testRequestTimeout = 20 * time.Second

// receive returns the next value of ch, failing the test when none comes
// within testRequestTimeout.
func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(testRequestTimeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, testRequestTimeout)
	}
	panic("unreachable")
}

// jsonHandler answers every request with status and body.
func jsonHandler(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sequence answers the n-th request with the n-th handler (the last one
// repeats).
func sequence(hs ...func(http.ResponseWriter, *http.Request, []byte)) func(http.ResponseWriter, *http.Request, []byte) {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request, b []byte) {
		mu.Lock()
		h := hs[min(n, len(hs)-1)]
		n++
		mu.Unlock()
		h(w, r, b)
	}
}

// dropConnection closes the connection without answering.
func dropConnection(w http.ResponseWriter, _ *http.Request, _ []byte) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// logText renders every observed log entry with its fields.
func logText(logs *observer.ObservedLogs) string {
	var b bytes.Buffer
	for _, e := range logs.All() {
		fmt.Fprintf(&b, "%s %s %v\n", e.Level, e.Message, e.ContextMap())
	}
	return b.String()
}

// assertNoSecrets fails when text contains a credential or a signature.
func assertNoSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{
		testSecret, testLookupPass,
		base64.StdEncoding.EncodeToString([]byte(testLookupUser + ":" + testLookupPass)),
		"HMAC ",
	} {
		if strings.Contains(text, s) {
			t.Errorf("%s contains a secret (%q): %s", what, s, text)
		}
	}
}

// hasStatus reports whether err is an *APIError with the given status.
func hasStatus(err error, code int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode == code
}
