package apiclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eepipe/eepipe/pace"
)

// APIPrefix is the path of the plan and scorecard API under the base URL.
const APIPrefix = "/api/public/v1"

// CompaniesPath is the path of the company search under the lookup URL.
const CompaniesPath = "/api/companies"

// maxResponseBody bounds how much of a response body is read.
const maxResponseBody = 64 << 20

// Options configures a Client.
//
// BaseURL is the plan and scorecard service, e.g. https://host or
// https://host/prefix (requests then go to /prefix/api/public/v1/...). The
// API key and secret sign every request to it. LookupURL is the company
// lookup service, with HTTP Basic credentials; it may be the same host. One
// of BaseURL and LookupURL must be set; a method whose service is not
// configured returns an error.
//
// HTTPClient is used as given except that redirects are never followed (a
// redirect would break the request signature); nil means a client with
// sane timeouts. Logger nil means no logging. UserAgent "" means
// "eepipe/<module version>".
type Options struct {
	BaseURL, APIKey, APISecret                string
	LookupURL, LookupUsername, LookupPassword string
	HTTPClient                                *http.Client
	Logger                                    *zap.Logger
	Retry                                     RetryPolicy
	UserAgent                                 string

	// Sleep waits between attempts; it must return early with ctx's error
	// when ctx ends. nil means a timer (tests inject a recorder).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is the typed client of the plan and scorecard API and of the
// company lookup. It is safe for concurrent use.
type Client struct {
	base, lookup *url.URL // nil when not configured; Path without trailing slash
	key, secret  string
	lookupUser   string
	lookupPass   string
	http         *http.Client
	log          *zap.Logger
	retry        RetryPolicy
	userAgent    string
	secrets      []string // texts removed from anything the server sends back

	// Hooks for tests: waiting between attempts, the clock Retry-After
	// dates are read against, and the backoff jitter.
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time
	jitter func(max time.Duration) time.Duration

	expMu     sync.Mutex
	expires   string // X-Api-Key-Expires last seen
	expiresIn string // X-Api-Key-Expires-In last seen
	expWarned bool
}

// New returns a client for opts. It checks the URLs and that the plan API
// has its key pair; it does not contact the service.
func New(opts Options) (*Client, error) {
	c := &Client{
		key:        opts.APIKey,
		secret:     opts.APISecret,
		lookupUser: opts.LookupUsername,
		lookupPass: opts.LookupPassword,
		log:        opts.Logger,
		retry:      opts.Retry.withDefaults(),
		userAgent:  opts.UserAgent,
		sleep:      sleepCtx,
		now:        time.Now,
		jitter:     fullJitter,
	}
	if opts.BaseURL == "" && opts.LookupURL == "" {
		return nil, errors.New("apiclient: neither the service base URL nor the company lookup URL is set")
	}
	var err error
	if opts.BaseURL != "" {
		if c.base, err = parseBaseURL("base URL", opts.BaseURL); err != nil {
			return nil, err
		}
		if strings.TrimSpace(opts.APIKey) == "" {
			return nil, errors.New("apiclient: the API key is empty")
		}
		if opts.APISecret == "" {
			return nil, errors.New("apiclient: the API secret is empty")
		}
	}
	if opts.LookupURL != "" {
		if c.lookup, err = parseBaseURL("company lookup URL", opts.LookupURL); err != nil {
			return nil, err
		}
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if opts.Sleep != nil {
		c.sleep = opts.Sleep
	}
	if c.userAgent == "" {
		c.userAgent = defaultUserAgent()
	}
	if opts.HTTPClient != nil {
		hc := *opts.HTTPClient
		c.http = &hc
	} else {
		c.http = defaultHTTPClient()
	}
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, s := range []string{opts.APISecret, opts.LookupPassword} {
		if s != "" {
			c.secrets = append(c.secrets, s)
		}
	}
	if opts.LookupUsername != "" || opts.LookupPassword != "" {
		c.secrets = append(c.secrets, base64.StdEncoding.EncodeToString([]byte(opts.LookupUsername+":"+opts.LookupPassword)))
	}
	return c, nil
}

// parseBaseURL checks a configured URL: http or https, a host, no
// credentials, query or fragment. The error never repeats a password.
func parseBaseURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("apiclient: the %s is not a URL", what)
	}
	if u.User != nil {
		return nil, fmt.Errorf("apiclient: the %s must not carry credentials (%s); configure them separately", what, u.Redacted())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("apiclient: the %s %q must start with http:// or https://", what, u.String())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("apiclient: the %s %q has no host", what, u.String())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("apiclient: the %s %q must not have a query or fragment", what, u.String())
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	v, err := url.Parse(u.Scheme + "://" + u.Host + p)
	if err != nil {
		return nil, fmt.Errorf("apiclient: the %s %q: %w", what, u.String(), err)
	}
	return v, nil
}

// defaultHTTPClient is the client used when Options.HTTPClient is nil: an
// overall timeout per attempt, bounded dial and TLS handshakes, and enough
// idle connections per host for concurrent runs.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.ResponseHeaderTimeout = 90 * time.Second
	tr.ExpectContinueTimeout = time.Second
	tr.IdleConnTimeout = 90 * time.Second
	tr.MaxIdleConns = 128
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// defaultUserAgent is "eepipe/<version>" with the module version of the
// binary when it has one.
func defaultUserAgent() string {
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "eepipe/" + v
}

// KeyExpiry reports the key-expiry headers of docs/scheduling.md, key expiry as the last
// response carried them: expires is X-Api-Key-Expires (ISO 8601, "" when
// not sent) and in is X-Api-Key-Expires-In ("12d", "5h"). ok is true when a
// response carried X-Api-Key-Expires-In, that is when the key expires within
// 30 days; the client then has logged one warning, and scheduled commands
// repeat it in their summary.
func (c *Client) KeyExpiry() (expires, in string, ok bool) {
	c.expMu.Lock()
	defer c.expMu.Unlock()
	return c.expires, c.expiresIn, c.expiresIn != ""
}

// noteExpiry records the key-expiry headers of a response and warns once.
func (c *Client) noteExpiry(h http.Header) {
	in := truncate(clean(h.Get("X-Api-Key-Expires-In")), 64)
	exp := truncate(clean(h.Get("X-Api-Key-Expires")), 64)
	if in == "" && exp == "" {
		return
	}
	c.expMu.Lock()
	if exp != "" {
		c.expires = exp
	}
	if in != "" {
		c.expiresIn = in
	}
	warn := in != "" && !c.expWarned
	if warn {
		c.expWarned = true
	}
	expires := c.expires
	c.expMu.Unlock()
	if warn {
		c.log.Warn("the API key expires soon; ask for a new key pair before it does",
			zap.String("api_key", keyPrefix(c.key)),
			zap.String("expires_in", in),
			zap.String("expires", expires))
	}
}

// keyPrefix is the part of an API key that logs may show.
func keyPrefix(key string) string {
	const n = 8
	if len(key) <= n {
		return key
	}
	return key[:n] + "…"
}

// redact removes the secrets and the given request-specific values (the
// Authorization header) from text the server sent back.
func (c *Client) redact(s string, extra ...string) string {
	for _, list := range [][]string{c.secrets, extra} {
		for _, sec := range list {
			if sec != "" && strings.Contains(s, sec) {
				s = strings.ReplaceAll(s, sec, "[redacted]")
			}
		}
	}
	return s
}

// call is one logical request; it may be sent several times.
type call struct {
	method string
	lookup bool       // company lookup (Basic auth) instead of the plan API (HMAC)
	path   string     // escaped path under the base URL, starting with "/"
	query  url.Values // lookup query; nil for none
	body   []byte     // exact bytes sent; nil means no body
	out    any        // decoded from a 2xx body when not nil
}

// send performs c with the retry policy and decodes the answer.
func (c *Client) send(ctx context.Context, cl call) error {
	target, path, err := c.target(cl)
	if err != nil {
		return err
	}
	s := &sending{c: c, cl: cl, ctx: ctx, target: target, path: path, refusedOnly: true}
	pacer := s.pacer()
	err = pacer.Call(ctx, s.attempt)
	if pi, ok := err.(*pace.Interrupted); ok {
		return interrupted(cl, path, pi.Attempts, pi.Wait, pi.Last, pi.Cause, s.refusedOnly)
	}
	if err != nil {
		return err
	}
	return s.result
}

// target is the URL cl is sent to, and its path as sent and as signed.
func (c *Client) target(cl call) (target, path string, err error) {
	base := c.base
	if cl.lookup {
		base = c.lookup
		if base == nil {
			return "", "", errors.New("apiclient: the company lookup is not configured (no lookup URL)")
		}
	} else if base == nil {
		return "", "", errors.New("apiclient: the plan service is not configured (no base URL)")
	}
	u, err := url.Parse(base.Scheme + "://" + base.Host + base.EscapedPath() + cl.path)
	if err != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("apiclient: %s %q is not a valid request path", cl.method, cl.path)
	}
	if cl.query != nil {
		u.RawQuery = cl.query.Encode()
	}
	return u.String(), u.EscapedPath(), nil
}

// sending is one send of a call: its attempts and what they found.
type sending struct {
	c            *Client
	cl           call
	ctx          context.Context
	target, path string // the URL, and the path as sent and as signed

	priorUnclear bool  // an earlier attempt may have reached the service
	refusedOnly  bool  // every attempt so far was refused unapplied
	result       error // the call's outcome: its decoded answer's error
}

// pacer is the call's retry policy, logging each wait.
func (s *sending) pacer() pace.Pacer {
	c, cl, path := s.c, s.cl, s.path
	return pace.Pacer{
		Schedule:       func() pace.Schedule { return pace.Jittered(c.retry.newBackOff(), c.jitter) },
		MaxAttempts:    c.retry.MaxAttempts,
		MaxRetryAfter:  MaxRetryAfter,
		WithinDeadline: true,
		WaitCtx:        waitContext(s.ctx), // ends the waits and the decision to retry
		Sleep:          c.sleep,
		OnWait: func(a pace.Attempt, wait time.Duration, last error) {
			if ce := c.log.Check(zap.DebugLevel, "retrying"); ce != nil {
				ce.Write(zap.String("method", cl.method), zap.String("path", path), zap.Int("attempt", a.N),
					zap.Duration("wait", wait), zap.String("reason", last.Error()))
			}
		},
		OnDeadline: func(_ pace.Attempt, wait time.Duration, _ error) {
			if ce := c.log.Check(zap.DebugLevel, "not retrying: the wait would pass the deadline"); ce != nil {
				ce.Write(zap.String("method", cl.method), zap.String("path", path), zap.Duration("wait", wait))
			}
		},
	}
}

// attempt sends the call once and judges the answer (answer) or its
// absence (failed).
func (s *sending) attempt(a pace.Attempt) pace.Verdict {
	c, cl, ctx, path := s.c, s.cl, s.ctx, s.path
	if err := ctx.Err(); err != nil {
		return pace.Done(&TransportError{Method: cl.method, Path: path, Attempts: a.N - 1, ctxErr: err})
	}
	var wrote atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	req, authValue, err := s.request(tctx)
	if err != nil {
		return pace.Done(err)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	var status int
	if err == nil {
		status = resp.StatusCode
		var b []byte
		if status >= 200 && status < 300 && cl.out == nil {
			err = discardBody(resp.Body) // nothing to decode: keep no copy
		} else {
			b, err = readBody(resp.Body, resp.ContentLength)
		}
		resp.Body.Close()
		if !cl.lookup {
			c.noteExpiry(resp.Header)
		}
		if err == nil {
			return s.answer(a, resp, b, start, authValue)
		}
	}
	// No response, or the body was cut off: a transport failure.
	return s.failed(a, err, status, wrote.Load(), start, authValue)
}

// request builds the attempt's request, signed (the plan API: HMAC) or
// with Basic auth (the lookup); authValue is the credential, to redact.
func (s *sending) request(ctx context.Context) (req *http.Request, authValue string, err error) {
	c, cl := s.c, s.cl
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err = http.NewRequestWithContext(ctx, cl.method, s.target, body)
	if err != nil {
		return nil, "", fmt.Errorf("apiclient: %s %s: %w", cl.method, s.path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.lookup {
		if c.lookupUser != "" || c.lookupPass != "" {
			req.SetBasicAuth(c.lookupUser, c.lookupPass)
			authValue = req.Header.Get("Authorization")
		}
	} else {
		authValue = Signature(c.secret, s.path, cl.body)
		req.Header.Set("X-Api-Key", c.key)
		req.Header.Set("Authorization", authValue)
	}
	return req, authValue, nil
}

// answer judges a response read whole (body b): a 2xx is decoded into
// the call's result; any other status is an *APIError, retried when its
// status and the method allow.
func (s *sending) answer(a pace.Attempt, resp *http.Response, b []byte, start time.Time, authValue string) pace.Verdict {
	c, cl, path := s.c, s.cl, s.path
	status := resp.StatusCode
	if ce := c.log.Check(zap.DebugLevel, "request"); ce != nil {
		ce.Write(zap.String("method", cl.method), zap.String("path", path), zap.Int("status", status),
			zap.Duration("duration", time.Since(start)), zap.Int("attempt", a.N))
	}
	if status >= 200 && status < 300 {
		s.result = decode(cl, path, status, b)
		return pace.Done(nil)
	}
	ra, hasRA := parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	apiErr := newAPIError(cl.method, path, status, resp.Header, b, ra, func(str string) string { return c.redact(str, authValue) })
	apiErr.afterUnclear = s.priorUnclear
	apiErr.earlierMaybeApplied = !s.refusedOnly
	apiErr.Lookup = cl.lookup
	v := pace.Verdict{Err: apiErr, Retryable: retryableStatus(status),
		// A 429 is refused before anything is applied: even a
		// POST may be sent again.
		Repeatable: retryableMethod(cl.method) || status == http.StatusTooManyRequests,
		RetryAfter: ra, HasRetryAfter: hasRA}
	if v.Retryable && v.Repeatable && !a.Last {
		s.priorUnclear = s.priorUnclear || status >= 500
		s.refusedOnly = s.refusedOnly && refusal(status, nil)
	}
	return v
}

// failed judges an attempt that got no response, or whose body was cut
// off (status, when not 0): a *TransportError, sent again only when the
// method and the failure allow. wrote tells the request's headers went
// out.
func (s *sending) failed(a pace.Attempt, err error, status int, wrote bool, start time.Time, authValue string) pace.Verdict {
	c, cl, path := s.c, s.cl, s.path
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return pace.Done(&TransportError{Method: cl.method, Path: path, Attempts: a.N, Sent: wrote || s.priorUnclear,
			maybeApplied: wrote || !s.refusedOnly, ctxErr: ctxErr, err: err})
	}
	te := &TransportError{Method: cl.method, Path: path, Attempts: a.N, Sent: wrote, maybeApplied: wrote || !s.refusedOnly, err: unwrapURLError(err)}
	if status != 0 {
		te.err = fmt.Errorf("reading the %d response: %w", status, te.err)
	}
	te.err = redactedError{te.err, c.redact(te.err.Error(), authValue)}
	if ce := c.log.Check(zap.DebugLevel, "request failed"); ce != nil {
		ce.Write(zap.String("method", cl.method), zap.String("path", path), zap.Int("status", status),
			zap.Duration("duration", time.Since(start)), zap.Int("attempt", a.N), zap.Error(te.err))
	}
	if a.Last || !retryableMethod(cl.method) || !retryableTransport(err) {
		if s.priorUnclear && !te.Sent {
			te.Sent = true // an earlier attempt may have been applied
		}
		return pace.Done(te)
	}
	s.priorUnclear = s.priorUnclear || te.Sent
	s.refusedOnly = s.refusedOnly && refusal(0, te)
	return pace.Again(te)
}

// interrupted returns the error of a call whose retries were cut short by
// the end of a context (cause), after attempts attempts ending in last.
func interrupted(cl call, path string, attempts int, wait time.Duration, last, cause error, refusedOnly bool) error {
	var ae *APIError
	var te *TransportError
	switch {
	case errors.As(last, &ae):
		ae.cut = true
	case errors.As(last, &te):
		te.cut = true
	}
	return &InterruptedError{Method: cl.method, Path: path, Attempts: attempts, Wait: wait, Last: last, Cause: cause, refusedOnly: refusedOnly}
}

// redactedError keeps the chain of an error but prints a redacted text.
type redactedError struct {
	err  error
	text string
}

func (e redactedError) Error() string { return e.text }
func (e redactedError) Unwrap() error { return e.err }

// unwrapURLError drops the *url.Error layer (its text repeats method and
// URL, which the caller's error already names).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// readBody reads a response body up to maxResponseBody; size is the
// announced length (-1 when unknown), used to read into one buffer of the
// right size.
func readBody(r io.Reader, size int64) ([]byte, error) {
	var b []byte
	if size > 0 && size <= maxResponseBody {
		b = make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		var one [1]byte
		n, err := r.Read(one[:])
		if n == 0 && (err == io.EOF || err == nil) {
			return b, nil // the usual case: the body was as long as announced
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		b = append(b, one[:n]...) // longer than announced: read the rest
	}
	rest, err := io.ReadAll(io.LimitReader(r, maxResponseBody+1-int64(len(b))))
	if err != nil {
		return nil, err
	}
	b = append(b, rest...)
	if len(b) > maxResponseBody {
		return nil, fmt.Errorf("the response body is larger than %d MiB", maxResponseBody>>20)
	}
	return b, nil
}

// discardBody reads a body to its end (so that the connection can be
// reused) without keeping it, up to maxResponseBody.
func discardBody(r io.Reader) error {
	n, err := io.Copy(io.Discard, io.LimitReader(r, maxResponseBody+1))
	if err == nil && n > maxResponseBody {
		err = fmt.Errorf("the response body is larger than %d MiB", maxResponseBody>>20)
	}
	return err
}

// DecodeError is a 2xx response whose body could not be read as expected.
// For a POST it matches ErrUnclearOutcome: the service accepted the
// request, but what it created is not known. Unwrap returns the JSON error.
type DecodeError struct {
	Method, Path string
	StatusCode   int
	Excerpt      string // a short, sanitised excerpt of the body; "" when empty
	err          error
}

func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("%s %s: the %d response is not the expected JSON: %v", e.Method, e.Path, e.StatusCode, e.err)
	if e.Excerpt != "" {
		msg += fmt.Sprintf(" (response: %q)", e.Excerpt)
	} else {
		msg += " (empty response body)"
	}
	return msg
}

// Unwrap returns the decoding error.
func (e *DecodeError) Unwrap() error { return e.err }

// Unclear reports whether the request was a POST: the service acted, but
// what it created is not known.
func (e *DecodeError) Unclear() bool { return e.Method == http.MethodPost }

// Is makes errors.Is match ErrUnclearOutcome for a POST.
func (e *DecodeError) Is(target error) bool {
	return target == ErrUnclearOutcome && e.Unclear()
}

// decode reads a 2xx body into cl.out (unknown fields are ignored).
func decode(cl call, path string, status int, b []byte) error {
	if cl.out == nil {
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return &DecodeError{Method: cl.method, Path: path, StatusCode: status, err: errors.New("no body")}
	}
	if fd, ok := cl.out.(fastDecoder); ok && json.Valid(b) && fd.decodeFast(b) {
		return nil
	}
	if err := json.Unmarshal(b, cl.out); err != nil {
		return &DecodeError{Method: cl.method, Path: path, StatusCode: status, Excerpt: excerpt(string(b)), err: err}
	}
	return nil
}

// Do sends one signed request to the plan API: path is under the base URL
// (for example "/api/public/v1/scorecards", optionally with a query string,
// which is not signed), body is sent and signed byte for byte (nil sends no
// body), and a 2xx JSON answer is decoded into out when out is not nil. It
// follows the retry policy and returns the same errors as the typed methods.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("apiclient: the request path %q does not start with /", path)
	}
	p, q, hasQuery := strings.Cut(path, "?")
	cl := call{method: strings.ToUpper(method), path: p, body: body, out: out}
	if hasQuery {
		v, err := url.ParseQuery(q)
		if err != nil {
			return fmt.Errorf("apiclient: the query of %q: %w", path, err)
		}
		cl.query = v
	}
	return c.send(ctx, cl)
}

// sendJSON encodes in (wrapped under key) and sends it.
func (c *Client) sendJSON(ctx context.Context, method, path, key string, in, out any) error {
	b, err := json.Marshal(map[string]any{key: in})
	if err != nil {
		return fmt.Errorf("apiclient: encoding the %s body: %w", key, err)
	}
	return c.send(ctx, call{method: method, path: path, body: b, out: out})
}

func plansPath() string { return APIPrefix + "/employment_equity_plans" }

func planPath(id int64) string { return plansPath() + "/" + strconv.FormatInt(id, 10) }

func targetPath(planID, milestoneID, targetID int64) string {
	return planPath(planID) + "/employment_equity_milestones/" + strconv.FormatInt(milestoneID, 10) +
		"/employment_equity_targets/" + strconv.FormatInt(targetID, 10)
}

func scorecardsPath() string { return APIPrefix + "/scorecards" }

func scorecardPath(id string) string { return scorecardsPath() + "/" + url.PathEscape(id) }

// ListPlans returns every plan of the account (without milestones).
func (c *Client) ListPlans(ctx context.Context) ([]Plan, error) {
	var docs []planDoc
	if err := c.send(ctx, call{method: http.MethodGet, path: plansPath(), out: &docs}); err != nil {
		return nil, err
	}
	if docs == nil {
		return nil, nil
	}
	out := make([]Plan, len(docs))
	for i := range docs {
		out[i] = docs[i].plan()
	}
	return out, nil
}

// GetPlan returns one plan with its milestones and targets.
func (c *Client) GetPlan(ctx context.Context, id int64) (*Plan, error) {
	var doc planDoc
	if err := c.send(ctx, call{method: http.MethodGet, path: planPath(id), out: &doc}); err != nil {
		return nil, err
	}
	out := doc.plan()
	return &out, nil
}

// CreatePlan creates a plan. It is sent again only after a 429 (refused
// before anything was applied); an error matching ErrUnclearOutcome means
// the plan may exist now.
func (c *Client) CreatePlan(ctx context.Context, p PlanCreate) (*Plan, error) {
	var doc planDoc
	if err := c.sendJSON(ctx, http.MethodPost, plansPath(), "employment_equity_plan", p, &doc); err != nil {
		return nil, err
	}
	out := doc.plan()
	return &out, nil
}

// UpdatePlan changes a plan's name, scorecard_id or sector.
func (c *Client) UpdatePlan(ctx context.Context, id int64, u PlanUpdate) (*Plan, error) {
	var doc planDoc
	if err := c.sendJSON(ctx, http.MethodPatch, planPath(id), "employment_equity_plan", u, &doc); err != nil {
		return nil, err
	}
	out := doc.plan()
	return &out, nil
}

// DeletePlan deletes a plan with its milestones and targets. A 404 to a
// retry, after an attempt that got no clear answer, counts as deleted.
func (c *Client) DeletePlan(ctx context.Context, id int64) error {
	return goneIsDone(c.send(ctx, call{method: http.MethodDelete, path: planPath(id)}))
}

// UpdateTarget sets the given counters of one target and returns the
// target as stored.
func (c *Client) UpdateTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) (*Target, error) {
	if counters == nil {
		counters = map[string]int64{}
	}
	var out Target
	if err := c.send(ctx, call{method: http.MethodPatch, path: targetPath(planID, milestoneID, targetID), body: targetBody(counters), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// PatchTarget is UpdateTarget for a caller that does not need the target
// back: the same request, but the answer's body is not decoded.
func (c *Client) PatchTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) error {
	return c.send(ctx, call{method: http.MethodPatch, path: targetPath(planID, milestoneID, targetID), body: targetBody(counters)})
}

// targetBody is {"employment_equity_target":{...counters}}, byte for byte
// what encoding/json writes (keys sorted; nil is {}), written without
// reflection when every key is a plain identifier.
func targetBody(counters map[string]int64) []byte {
	keys := make([]string, 0, len(counters))
	size := len(`{"employment_equity_target":{}}`)
	for k := range counters {
		if !plainKey(k) {
			b, _ := json.Marshal(map[string]any{"employment_equity_target": counters}) // cannot fail: string keys, int64 values
			return b
		}
		keys = append(keys, k)
		size += len(k) + 4 + 20
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, `{"employment_equity_target":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, counters[k], 10)
	}
	return append(b, "}}"...)
}

// plainKey reports whether k needs no JSON escaping: letters, digits, _.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ListScorecards returns every scorecard of the account.
func (c *Client) ListScorecards(ctx context.Context) ([]Scorecard, error) {
	var out []Scorecard
	if err := c.send(ctx, call{method: http.MethodGet, path: scorecardsPath(), out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// GetScorecard returns one scorecard.
func (c *Client) GetScorecard(ctx context.Context, id string) (*Scorecard, error) {
	var out Scorecard
	if err := c.send(ctx, call{method: http.MethodGet, path: scorecardPath(id), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateScorecard creates a scorecard. Like every POST it is sent again
// only after a 429.
func (c *Client) CreateScorecard(ctx context.Context, in ScorecardInput) (*Scorecard, error) {
	var out Scorecard
	if err := c.sendJSON(ctx, http.MethodPost, scorecardsPath(), "scorecard", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateScorecard changes the non-empty fields of in (a partial update).
func (c *Client) UpdateScorecard(ctx context.Context, id string, in ScorecardInput) (*Scorecard, error) {
	var out Scorecard
	if err := c.sendJSON(ctx, http.MethodPut, scorecardPath(id), "scorecard", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteScorecard deletes a scorecard. A 404 to a retry, after an attempt
// that got no clear answer, counts as deleted.
func (c *Client) DeleteScorecard(ctx context.Context, id string) error {
	return goneIsDone(c.send(ctx, call{method: http.MethodDelete, path: scorecardPath(id)}))
}

// RecalculateScorecard starts a recalculation of the scorecard's totals;
// any 2xx answer is success. An *APIError with StatusCode 409 means a run
// is in progress; the caller waits and asks again. A 409 to a retry,
// after an attempt that got no clear answer, is success: the run in
// progress is most likely the one that attempt started.
func (c *Client) RecalculateScorecard(ctx context.Context, id string) error {
	err := c.send(ctx, call{method: http.MethodPut, path: scorecardPath(id) + "/recalculate"})
	var ae *APIError
	if errors.As(err, &ae) && ae.afterUnclear && ae.StatusCode == http.StatusConflict {
		c.log.Debug("recalculation already running after an unclear attempt; taking it as accepted", zap.String("scorecard_id", id))
		return nil
	}
	return err
}

// goneIsDone treats a 404 that answers a retried DELETE as success.
func goneIsDone(err error) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.afterUnclear && ae.StatusCode == http.StatusNotFound {
		return nil
	}
	return err
}

// SearchCompanies searches the company lookup; a record matches when any
// one of the given identifiers matches. Empty parameters are not sent. No
// match is an empty slice.
func (c *Client) SearchCompanies(ctx context.Context, q CompanyQuery) ([]Company, error) {
	v := url.Values{}
	for k, s := range map[string]string{"vat_number": q.VATNumber, "registration_number": q.RegistrationNumber, "id_number": q.IDNumber} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out []Company
	if err := c.send(ctx, call{method: http.MethodGet, lookup: true, path: CompaniesPath, query: v, out: &out}); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Company{}
	}
	return out, nil
}

// withheldExcerpt stands for the body of a key create's answer in an
// error: the body may hold the new secret.
const withheldExcerpt = "[withheld: the answer may hold a secret]"

// KeysPath is the path of the API keys under the base URL (contract-notes A5).
const KeysPath = APIPrefix + "/api_keys"

func keyPath(id int64) string { return KeysPath + "/" + strconv.FormatInt(id, 10) }

// CreateAPIKey creates a key pair of the calling key's account, signed with
// the client's key. expiresIn is "30d", "90d", "180d" or "365d", or ""
// for a key that never expires (the body is then {}). Like every POST it is
// sent again only after a 429; an error matching ErrUnclearOutcome means a
// key may have been created whose secret was not received. A 422 is the
// service's refusal (the account holds the most keys it may, or expiresIn
// is not one it takes). The returned error never holds the new secret.
func (c *Client) CreateAPIKey(ctx context.Context, expiresIn string) (*APIKey, error) {
	body := []byte("{}")
	if expiresIn != "" {
		b, err := json.Marshal(map[string]string{"expires_in": expiresIn})
		if err != nil {
			return nil, fmt.Errorf("apiclient: encoding the api_keys body: %w", err)
		}
		body = b
	}
	// The answer is read bare, or wrapped as {"api_key": {...}} like the
	// other resources' (contract-notes A5 leaves it open).
	var doc struct {
		APIKey
		Wrapped *APIKey `json:"api_key"`
	}
	err := c.send(ctx, call{method: http.MethodPost, path: KeysPath, body: body, out: &doc})
	out := doc.APIKey
	if out.Key == "" && doc.Wrapped != nil {
		out = *doc.Wrapped
	}
	var de *DecodeError
	if errors.As(err, &de) {
		de.Excerpt = withheldExcerpt // the answer may hold the new secret
	}
	if err != nil {
		return nil, err
	}
	if out.Key == "" || out.Secret == "" || out.ID == 0 {
		return nil, &DecodeError{Method: http.MethodPost, Path: KeysPath, StatusCode: http.StatusCreated,
			Excerpt: withheldExcerpt, err: errors.New("the answer lacks the new key's id, key or secret")}
	}
	return &out, nil
}

// RevokeAPIKey revokes the account's key id, signed with the client's key,
// which must be another key of the account (a key cannot revoke itself:
// 422). A 404 means no active key of the account has that id; a 404 to a
// retry, after an attempt that got no clear answer, counts as revoked.
func (c *Client) RevokeAPIKey(ctx context.Context, id int64) error {
	return goneIsDone(c.send(ctx, call{method: http.MethodDelete, path: keyPath(id)}))
}
