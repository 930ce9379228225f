package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
)

func status(code int, headers ...string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code != http.StatusNoContent {
			fmt.Fprintf(w, `{"errors":["status %d"]}`, code)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	fx := newFixture(t, sequence(status(429, "Retry-After", "7"), status(503, "Retry-After", " 2 "), jsonHandler(200, `[]`)))
	if _, err := fx.c.ListPlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := fx.sleeps.get(), []time.Duration{7 * time.Second, 2 * time.Second}; !reflect.DeepEqual(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	if n := len(fx.ts.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	fx.ts.requireAuthOK()
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	fx := newFixture(t, sequence(
		status(503, "Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)),
		status(429, "Retry-After", now.Add(-time.Hour).Format(http.TimeFormat)), // in the past: no wait
		jsonHandler(200, scorecardJSON)))
	fx.c.now = func() time.Time { return now }
	if _, err := fx.c.GetScorecard(context.Background(), "scorecard_acme_2025"); err != nil {
		t.Fatal(err)
	}
	if got, want := fx.sleeps.get(), []time.Duration{90 * time.Second, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

func TestRetryAfterCapped(t *testing.T) {
	fx := newFixture(t, sequence(status(503, "Retry-After", "86400"), jsonHandler(200, `[]`)))
	if _, err := fx.c.ListScorecards(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fx.sleeps.get(); len(got) != 1 || got[0] != MaxRetryAfter {
		t.Errorf("waits = %v, want [%v]", got, MaxRetryAfter)
	}
}

// TestRetryBackoff: without Retry-After the waits grow exponentially from
// BaseDelay and are capped at MaxDelay (jitter is the identity here); the
// attempts are limited and the last error is returned.
func TestRetryBackoff(t *testing.T) {
	fx := newFixture(t, status(502), func(o *Options) {
		o.Retry = RetryPolicy{MaxAttempts: 6, BaseDelay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond}
	})
	_, err := fx.c.GetPlan(context.Background(), 1)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 502 || !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnclearOutcome) {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
	want := []time.Duration{100, 200, 400, 500, 500}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if got := fx.sleeps.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	fx.ts.requireAuthOK()
}

func TestRetryDefaultAttempts(t *testing.T) {
	fx := newFixture(t, status(504))
	_, err := fx.c.ListPlans(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != DefaultMaxAttempts {
		t.Errorf("%d requests, want %d", n, DefaultMaxAttempts)
	}
}

func TestFullJitterBounds(t *testing.T) {
	for i := 0; i < 1000; i++ {
		if d := fullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("fullJitter = %v", d)
		}
	}
	if fullJitter(0) != 0 {
		t.Error("fullJitter(0) != 0")
	}
	b := RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Hour}.withDefaults().newBackOff()
	var d time.Duration
	for range 500 {
		d = b.NextBackOff()
	}
	if d != time.Hour {
		t.Errorf("backoff bound after 500 attempts = %v (overflow?)", d)
	}
}

// TestRetrySucceedsAndResendsSameBytes: 503 then 200 succeeds; the body is
// sent again byte for byte and signed (the server checks every attempt).
func TestRetrySucceedsAndResendsSameBytes(t *testing.T) {
	for _, method := range []string{"PATCH", "PUT", "DELETE", "GET"} {
		t.Run(method, func(t *testing.T) {
			ok := map[string]string{"PATCH": targetJSON, "PUT": scorecardJSON, "GET": planJSON, "DELETE": ""}[method]
			fx := newFixture(t, sequence(status(503), jsonHandler(200, ok)))
			ctx := context.Background()
			var err error
			switch method {
			case "PATCH":
				_, err = fx.c.UpdateTarget(ctx, 1, 2, 3, map[string]int64{"number_of_african_male_top_managers": 4})
			case "PUT":
				_, err = fx.c.UpdateScorecard(ctx, "scorecard_1", ScorecardInput{Description: "d"})
			case "DELETE":
				err = fx.c.DeletePlan(ctx, 1)
			case "GET":
				_, err = fx.c.GetPlan(ctx, 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			fx.ts.requireAuthOK()
			reqs := fx.ts.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if reqs[0].Method != method || string(reqs[0].Body) != string(reqs[1].Body) || reqs[0].Path != reqs[1].Path {
				t.Errorf("attempts differ: %q vs %q", reqs[0].Body, reqs[1].Body)
			}
			if got := fx.sleeps.get(); len(got) != 1 || got[0] != 100*time.Millisecond {
				t.Errorf("waits = %v", got)
			}
		})
	}
}

// TestPostNeverRetried: a POST answered 503, 502, 500 or 422, or whose
// connection drops, is sent once; the error says whether the outcome is
// unclear.
func TestPostNeverRetried(t *testing.T) {
	tests := []struct {
		name    string
		handler func(http.ResponseWriter, *http.Request, []byte)
		unclear bool
		status  int // the *APIError's status; 0 for none
	}{
		{"503", status(503, "Retry-After", "1"), true, 503},
		{"502", status(502), true, 502},
		{"500", status(500), true, 500},
		{"dropped connection", dropConnection, true, 0},
		{"422", status(422), false, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, tt.handler)
			_, err := fx.c.CreatePlan(context.Background(), PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
			if err == nil {
				t.Fatal("no error")
			}
			if n := len(fx.ts.requests()); n != 1 {
				t.Errorf("POST sent %d times", n)
			}
			if len(fx.sleeps.get()) != 0 {
				t.Errorf("waited: %v", fx.sleeps.get())
			}
			if got := errors.Is(err, ErrUnclearOutcome); got != tt.unclear {
				t.Errorf("ErrUnclearOutcome = %v, want %v: %v", got, tt.unclear, err)
			}
			if tt.unclear && errors.Is(err, ErrUnavailable) {
				t.Errorf("a POST that may have been applied matches ErrUnavailable: %v", err)
			}
			if tt.status != 0 && !hasStatus(err, tt.status) {
				t.Errorf("err = %v, want an APIError %d", err, tt.status)
			}
			assertNoSecrets(t, "error", err.Error())
		})
	}
}

// TestPostRetriedOn429: a 429 is refused before the service applies
// anything, so the one retry policy sends a POST again after it, waiting
// the Retry-After (or the backoff without one); when the 429s outlast the
// attempts, the error is the 429, which is not unclear.
func TestPostRetriedOn429(t *testing.T) {
	fx := newFixture(t, sequence(status(429, "Retry-After", "7"), status(429), jsonHandler(201, planJSON)))
	p, err := fx.c.CreatePlan(context.Background(), PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
	if err != nil || p.ID == 0 {
		t.Fatalf("create after 429s: %+v, %v", p, err)
	}
	reqs := fx.ts.requests()
	if len(reqs) != 3 || reqs[0].Method != "POST" || string(reqs[0].Body) != string(reqs[2].Body) {
		t.Errorf("%d requests", len(reqs))
	}
	fx.ts.requireAuthOK()
	if got, want := fx.sleeps.get(), []time.Duration{7 * time.Second, 200 * time.Millisecond}; !reflect.DeepEqual(got, want) {
		t.Errorf("waits = %v, want %v (Retry-After, then the second backoff bound)", got, want)
	}

	fx = newFixture(t, status(429, "Retry-After", "1"), func(o *Options) { o.Retry.MaxAttempts = 3 })
	_, err = fx.c.CreatePlan(context.Background(), PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
	if !hasStatus(err, 429) || errors.Is(err, ErrUnclearOutcome) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != 3 {
		t.Errorf("POST sent %d times, want 3", n)
	}
}

// TestAnswersNotRetried: 409, 422, 404, 401 and 400 are answers.
func TestAnswersNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 409, 422} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			fx := newFixture(t, status(code))
			err := fx.c.RecalculateScorecard(context.Background(), "scorecard_1")
			var ae *APIError
			if !errors.As(err, &ae) || ae.StatusCode != code {
				t.Fatalf("err = %v", err)
			}
			if n := len(fx.ts.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestDroppedConnectionRetried: a GET whose connection drops is sent again;
// when it keeps dropping, the error matches ErrUnavailable.
func TestDroppedConnectionRetried(t *testing.T) {
	fx := newFixture(t, sequence(dropConnection, jsonHandler(200, `[]`)))
	if _, err := fx.c.ListPlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(fx.ts.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	fx = newFixture(t, dropConnection, func(o *Options) { o.Retry.MaxAttempts = 3 })
	_, err := fx.c.ListPlans(context.Background())
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnclearOutcome) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// closedAddr returns a 127.0.0.1 address whose port was free a moment
// ago. Another test (of any package running at the same time) may listen
// on it by now: use refusedAddr where the platform has it.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestConnectionRefused: nothing was sent, so even a POST is not unclear;
// the error matches ErrUnavailable. GETs are retried first.
//
// The address is held by a socket that never listens (refusedAddr), so no
// server started meanwhile by a test running in parallel can take the port
// and hold the requests (a sandbox with an hour of latency did: the package
// hung for minutes). The request timeout bounds what is left.
func TestConnectionRefused(t *testing.T) {
	base := "http://" + refusedAddr(t) + testBasePath
	c, err := New(Options{BaseURL: base, APIKey: testKey, APISecret: testSecret, Retry: RetryPolicy{MaxAttempts: 3},
		HTTPClient: &http.Client{Timeout: testRequestTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	sr := &sleepRecorder{}
	c.sleep = sr.sleep

	_, err = c.CreatePlan(context.Background(), PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnclearOutcome) {
		t.Fatalf("POST err = %v", err)
	}
	if !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("err = %v", err)
	}
	if len(sr.get()) != 0 {
		t.Errorf("POST waited to retry: %v", sr.get())
	}
	assertNoSecrets(t, "error", err.Error())

	_, err = c.ListPlans(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("GET err = %v", err)
	}
	if n := len(sr.get()); n != 2 {
		t.Errorf("GET waited %d times, want 2", n)
	}
}

// TestRetriedDeleteGone: a DELETE whose answer was lost is retried; the 404
// that follows means the first attempt worked.
func TestRetriedDeleteGone(t *testing.T) {
	fx := newFixture(t, sequence(dropConnection, status(404)))
	if err := fx.c.DeletePlan(context.Background(), 5); err != nil {
		t.Fatalf("err = %v", err)
	}
	fx = newFixture(t, status(404))
	if err := fx.c.DeleteScorecard(context.Background(), "scorecard_x"); !hasStatus(err, 404) {
		t.Fatalf("plain 404: err = %v", err)
	}
}

// TestRetriedRecalculateConflict: a recalculation whose answer was lost is
// retried; the 409 that follows is the run it started.
func TestRetriedRecalculateConflict(t *testing.T) {
	fx := newFixture(t, sequence(status(503), status(409)))
	if err := fx.c.RecalculateScorecard(context.Background(), "scorecard_acme_2025"); err != nil {
		t.Fatalf("err = %v", err)
	}
	fx = newFixture(t, sequence(status(429, "Retry-After", "1"), status(409)))
	if err := fx.c.RecalculateScorecard(context.Background(), "scorecard_acme_2025"); !hasStatus(err, 409) {
		t.Fatalf("after a clear 429: err = %v, want ErrConflict", err)
	}
}

// TestCancelStopsRetryAfterWait uses the real wait: the server asks for an
// hour, the test cancels the context as soon as the client starts waiting,
// and the call must return with context.Canceled instead of waiting.
func TestCancelStopsRetryAfterWait(t *testing.T) {
	fx := newFixture(t, status(503, "Retry-After", "3600"))
	waiting := make(chan time.Duration, 1)
	fx.c.sleep = func(ctx context.Context, d time.Duration) error {
		select {
		case waiting <- d:
		default:
		}
		return sleepCtx(ctx, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := fx.c.ListPlans(ctx)
		done <- err
	}()

	var asked time.Duration
	guardStart := time.NewTimer(testRequestTimeout)
	defer guardStart.Stop()
	select {
	case asked = <-waiting:
	case err := <-done:
		t.Fatalf("returned before waiting: %v", err)
	case <-guardStart.C:
		t.Fatal("the client neither waited nor returned")
	}
	if asked != MaxRetryAfter {
		t.Errorf("asked to wait %v, want %v", asked, MaxRetryAfter)
	}
	cancel()
	// The wait asked for is minutes; a correct client returns as soon as
	// the context ends. The guard only turns a hang into a failure.
	guard := time.NewTimer(asked / 10)
	defer guard.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if !strings.Contains(err.Error(), "503") {
			t.Errorf("err = %v, want it to name the last answer", err)
		}
	case <-guard.C:
		t.Fatal("cancellation did not stop the wait")
	}
	if n := len(fx.ts.requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// TestDeadlineShorterThanRetryAfter: a wait that would pass the context's
// deadline is not started; the server's answer is returned at once.
func TestDeadlineShorterThanRetryAfter(t *testing.T) {
	fx := newFixture(t, status(429, "Retry-After", "120"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := fx.c.ListPlans(ctx)
	var ae *APIError
	if !errors.As(err, &ae) || ae.RetryAfter != 120*time.Second || !hasStatus(err, 429) {
		t.Fatalf("err = %v", err)
	}
	if len(fx.sleeps.get()) != 0 {
		t.Errorf("waited: %v", fx.sleeps.get())
	}
}

func TestCanceledBeforeSending(t *testing.T) {
	fx := newFixture(t, jsonHandler(200, `[]`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fx.c.ListPlans(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if n := len(fx.ts.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestCanceledDuringPost: a POST whose context ends while the server holds
// it may have been applied.
func TestCanceledDuringPost(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case arrived <- struct{}{}:
		default: // never block a handler: the server's cleanup waits for it
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release) // before the server's cleanup, which waits for its handlers
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := fx.c.CreatePlan(ctx, PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
		done <- err
	}()
	guard := time.NewTimer(testRequestTimeout)
	defer guard.Stop()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("returned before the server got the request: %v", err)
	case <-guard.C:
		t.Fatal("the request never reached the server")
	}
	cancel()
	err := receive(t, "CreatePlan after cancel", done)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnclearOutcome) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999999999999999", maxDuration, true},
		{"Thu, 01 Jan 2026 12:01:30 GMT", 90 * time.Second, true},
		{"Thursday, 01-Jan-26 12:00:10 GMT", 10 * time.Second, true}, // RFC 850
		{"Thu Jan  1 12:00:20 2026", 20 * time.Second, true},         // ANSI C
		{"Wed, 31 Dec 2025 12:00:00 GMT", 0, true},                   // past
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestKeyExpiryWarnsOnce: the expiry headers on every response of
// concurrent calls give one warning per client, with the key's prefix and never the secret.
func TestKeyExpiryWarnsOnce(t *testing.T) {
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("X-Api-Key-Expires", "2026-12-01T00:00:00Z")
		w.Header().Set("X-Api-Key-Expires-In", "12d")
		if strings.HasSuffix(r.URL.Path, "/9") {
			w.WriteHeader(404)
			return
		}
		io.WriteString(w, `[]`)
	})
	if _, _, ok := fx.c.KeyExpiry(); ok {
		t.Error("KeyExpiry ok before any response")
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			if _, err := fx.c.ListPlans(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := fx.c.GetPlan(ctx, 9); !hasStatus(err, 404) {
		t.Fatal(err)
	}
	warns := fx.logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", len(warns), logText(fx.logs))
	}
	m := warns[0].ContextMap()
	if m["expires_in"] != "12d" || m["expires"] != "2026-12-01T00:00:00Z" || m["api_key"] != "mpk_test…" {
		t.Errorf("warning fields = %v", m)
	}
	exp, in, ok := fx.c.KeyExpiry()
	if !ok || exp != "2026-12-01T00:00:00Z" || in != "12d" {
		t.Errorf("KeyExpiry = %q, %q, %v", exp, in, ok)
	}
	text := logText(fx.logs)
	assertNoSecrets(t, "log", text)
	if strings.Contains(text, testKey) {
		t.Errorf("log contains the whole API key: %s", text)
	}
}

// TestKeyExpiryFarAway: only X-Api-Key-Expires (more than 30 days left) is
// not a warning.
func TestKeyExpiryFarAway(t *testing.T) {
	fx := newFixture(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("X-Api-Key-Expires", "2027-12-01T00:00:00Z")
		io.WriteString(w, `[]`)
	})
	if _, err := fx.c.ListPlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exp, _, ok := fx.c.KeyExpiry(); ok || exp != "2027-12-01T00:00:00Z" {
		t.Errorf("KeyExpiry = %q, %v", exp, ok)
	}
	if n := fx.logs.FilterMessageSnippet("expires").Len(); n != 0 {
		t.Errorf("%d expiry warnings", n)
	}
}

// TestNoSecretsAnywhere runs failing calls of every kind with debug
// logging on and scans every error text and log line for credentials.
func TestNoSecretsAnywhere(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request, body []byte) {
		// A hostile or broken server that echoes the request's credentials.
		w.WriteHeader(500)
		fmt.Fprintf(w, "<html><title>%s %s</title></html>", r.Header.Get("Authorization"), testSecret)
	}
	fx := newFixture(t, sequence(echo, dropConnection, status(502), echo))
	ctx := context.Background()
	var errs []error
	_, err := fx.c.CreatePlan(ctx, PlanCreate{StartDate: "2025-09-01"})
	errs = append(errs, err)
	_, err = fx.c.ListPlans(ctx)
	errs = append(errs, err)
	_, err = fx.c.SearchCompanies(ctx, CompanyQuery{VATNumber: "1"})
	errs = append(errs, err)
	for _, err := range errs {
		if err == nil {
			t.Fatal("expected an error")
		}
		assertNoSecrets(t, "error", err.Error())
		assertNoSecrets(t, "error (%#v)", fmt.Sprintf("%+v %#v", err, err))
	}
	assertNoSecrets(t, "log", logText(fx.logs))
}

// TestNoNewKeySecretAnywhere: a key create whose answer holds a secret but
// does not decode (or lacks the key), and failing key calls, never show
// the new secret or the client's own in an error or a log line.
func TestNoNewKeySecretAnywhere(t *testing.T) {
	const fresh = "Nw42-new-key-SECRET-z"
	answers := []string{
		`{"id":"seven","key":"mpk_new","secret":"` + fresh + `"}`,
		`{"id":7,"secret":"` + fresh + `"}`,
		`{"id":7,"key":"mpk_new","secret":"` + fresh + `"`,
	}
	n := 0
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(500)
			fmt.Fprintf(w, "%s %s", r.Header.Get("Authorization"), testSecret)
			return
		}
		w.WriteHeader(201)
		fmt.Fprint(w, answers[n%len(answers)])
		n++
	})
	ctx := context.Background()
	for range answers {
		k, err := fx.c.CreateAPIKey(ctx, "90d")
		if err == nil {
			t.Fatalf("created %v from a broken answer", k)
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v %#v", err, err)} {
			assertNoSecrets(t, "create error", text)
			if strings.Contains(text, fresh) {
				t.Errorf("the create's error shows the new secret: %s", text)
			}
		}
	}
	err := fx.c.RevokeAPIKey(ctx, 7)
	if err == nil {
		t.Fatal("revoke against a 500: no error")
	}
	assertNoSecrets(t, "revoke error", err.Error())
	logs := logText(fx.logs)
	assertNoSecrets(t, "log", logs)
	if strings.Contains(logs, fresh) {
		t.Errorf("the log shows the new secret")
	}
	k := APIKey{ID: 7, Key: "mpk_new_key_abc", Secret: fresh}
	if s := fmt.Sprintf("%v %+v %#v %s", k, k, k, k); strings.Contains(s, fresh) {
		t.Errorf("an APIKey prints its secret: %s", s)
	}
}

// TestCreateAPIKeyAnswers: the create's answer is read bare or wrapped as
// {"api_key": {...}}; the body sent is {} without a lifetime.
func TestCreateAPIKeyAnswers(t *testing.T) {
	var bodies []string
	answers := []string{
		`{"id":7,"key":"mpk_bare","secret":"s1","expires_at":null,"created_at":"2026-12-01T00:00:00Z"}`,
		`{"api_key":{"id":8,"key":"mpk_wrapped","secret":"s2","expires_at":"2027-03-01T00:00:00Z","created_at":"2026-12-01T00:00:00Z"}}`,
	}
	fx := newFixture(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		bodies = append(bodies, string(body))
		w.WriteHeader(201)
		fmt.Fprint(w, answers[len(bodies)-1])
	})
	a, err := fx.c.CreateAPIKey(context.Background(), "")
	if err != nil || a.ID != 7 || a.Key != "mpk_bare" || a.ExpiresAt != nil {
		t.Fatalf("bare: %v %v", a, err)
	}
	b, err := fx.c.CreateAPIKey(context.Background(), "90d")
	if err != nil || b.ID != 8 || b.Secret != "s2" || b.ExpiresAt == nil || *b.ExpiresAt != "2027-03-01T00:00:00Z" {
		t.Fatalf("wrapped: %v %v", b, err)
	}
	if bodies[0] != `{}` || bodies[1] != `{"expires_in":"90d"}` {
		t.Errorf("bodies %q", bodies)
	}
}

// TestMaybeAppliedAfterALostAnswer: a patch whose first attempt was
// written and got no answer, and whose retries were all refused (503),
// fails with an error that matches ErrMaybeApplied (the first may have
// been applied); refusals alone, or a clear refusal (422), do not
// match it; a POST never does (ErrUnclearOutcome says it there).
func TestMaybeAppliedAfterALostAnswer(t *testing.T) {
	patch := func(c *Client) error {
		_, err := c.UpdateTarget(context.Background(), 1, 2, 3, map[string]int64{"a": 1})
		return err
	}
	for _, tc := range []struct {
		name  string
		h     func(http.ResponseWriter, *http.Request, []byte)
		maybe bool
	}{
		{"lost, then refused", sequence(dropConnection, status(503)), true},
		{"refused, then lost", sequence(status(503), dropConnection), true},
		{"a 504, then refused", sequence(status(504), status(503)), true},
		{"refused only", status(503), false},
		{"answered 422", jsonHandler(422, `{"errors":["bad"]}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, tc.h, func(o *Options) {
				o.Retry = RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
			})
			err := patch(fx.c)
			if err == nil || errors.Is(err, ErrMaybeApplied) != tc.maybe {
				t.Errorf("err = %v: matches ErrMaybeApplied %t, want %t", err, errors.Is(err, ErrMaybeApplied), tc.maybe)
			}
		})
	}
	fx := newFixture(t, sequence(dropConnection, status(503)))
	if _, err := fx.c.CreatePlan(context.Background(), PlanCreate{Name: "P"}); err == nil || errors.Is(err, ErrMaybeApplied) {
		t.Errorf("create: %v", err)
	}
}
