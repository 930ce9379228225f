package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pace"
)

// Options configure a Sandbox; the zero value serves the built-in fixtures
// without latency or faults, with recalculations that finish at once.
type Options struct {
	// Fixtures is the initial state; nil means DefaultFixtures().
	Fixtures *Fixtures
	// Latency is how long after its arrival every response leaves (not
	// /_sandbox/stats): the request is handled at once, and its answer is
	// held until the arrival plus Latency.
	Latency time.Duration
	// RecalcDuration is how long a scorecard recalculation runs; while it
	// runs, another recalculation of the same scorecard gets 409. Zero means
	// a run finishes at once. A run ends when that much time has passed on
	// the real clock or on Now, whichever comes first.
	RecalcDuration time.Duration
	// Faults is a fault spec such as "503=0.05,429=0.03,reset=0.02,lost=0.02"
	// (see SetFaults).
	Faults string
	// Seed seeds the fault generator; zero picks a random seed (see Seed).
	Seed int64
	// Logger receives one debug line per request; nil discards.
	Logger *zap.Logger
	// Now is the clock for timestamps, key expiry and recalculation runs
	// (see RecalcDuration); nil means time.Now.
	Now func() time.Time
	// Timeouts bound how long a client may take; zero fields take the
	// defaults (see Timeouts).
	Timeouts Timeouts
	// MaxBodyReads caps the request bodies read at once (each up to 8 MiB,
	// read only after the key was found known and unexpired); others wait
	// for a slot. Zero means DefaultMaxBodyReads.
	MaxBodyReads int
}

// Timeouts of the sandbox as a server. Zero fields take the defaults.
type Timeouts struct {
	// Header bounds reading a request's headers (default 10s).
	Header time.Duration
	// Body bounds the arrival of a request's body (default 30s), counted
	// from the request's arrival, or from when a read slot was granted for
	// a body the sandbox reads: a client trickling a body is cut off (408
	// when the sandbox was reading it) and the connection closed.
	Body time.Duration
	// Write bounds writing a response, counted from when the response is
	// due (after the latency), so a long latency does not cut it (default
	// 30s).
	Write time.Duration
	// Idle closes a keep-alive connection left without a request that long
	// (default 60s).
	Idle time.Duration
}

// Default server limits (see Timeouts and Options.MaxBodyReads).
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultIdleTimeout   = 60 * time.Second
	DefaultMaxBodyReads  = 16
)

// withDefaults returns t with the defaults in its zero fields.
func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Header, DefaultHeaderTimeout)
	def(&t.Body, DefaultBodyTimeout)
	def(&t.Write, DefaultWriteTimeout)
	def(&t.Idle, DefaultIdleTimeout)
	return t
}

// Sandbox is the emulator: an http.Handler serving the plan and scorecard
// API under /api/public/v1, the company lookup under /api/companies and the
// statistics under /_sandbox/stats. It is safe for concurrent use.
type Sandbox struct {
	log            *zap.Logger
	now            func() time.Time
	recalcDuration time.Duration
	timeouts       Timeouts
	bodySlots      chan struct{} // a token per body being read
	mux            *http.ServeMux

	// Read-only after New.
	lookupUsers map[string]string
	companies   []apiclient.Company

	nextID atomic.Int64 // the next plan, milestone or target id

	// keysMu guards the key pairs (keys.go): by API key and by id.
	keysMu    sync.RWMutex
	keys      map[string]*apiKey
	keyIDs    map[int64]*apiKey
	nextKeyID int64

	// plansMu guards the maps of plans; each plan guards its own state.
	plansMu   sync.RWMutex
	plans     map[int64]*plan
	byAccount map[string]map[int64]*plan

	mu         sync.Mutex // guards the scorecards
	nextSeq    int64
	scorecards map[string]*scorecard

	latency atomic.Int64
	faults  *faultInjector

	statsMu  sync.Mutex
	stats    Stats
	inFlight int64
}

// account is an account of the fixtures; its key pairs are apiKeys.
type account struct {
	Account
}

// plan is a stored plan. id, account, start, end, era, created and the
// milestones with their targets' ids and types are fixed at creation; the
// rest, the targets' counters and the kept encodings change under mu.
type plan struct {
	id         int64
	account    string
	start, end civilDate
	era        string
	created    time.Time
	milestones []*milestone

	mu          sync.Mutex
	name        string
	scorecardID *string
	sector      *string
	updated     time.Time
	full, brief []byte // kept encodings (see encode.go); nil when stale
}

type milestone struct {
	id         int64
	yearNumber int
	start, end civilDate
	targets    []*target
}

type target struct {
	id         int64
	targetType string
	counters   []int64 // by index in the served catalog; under the plan's mu
	enc        []byte  // kept encoding; nil when stale
}

// prefill is a scorecard's workforce as counters of the served catalog, per
// target type; counters of other names are left out.
type prefill struct {
	all, disabled []int64
}

// counters returns the prefill of a target type; nil when there is none.
func (p *prefill) counters(targetType string) []int64 {
	switch {
	case p == nil:
		return nil
	case targetType == targetDisabled:
		return p.disabled
	}
	return p.all
}

func newPrefill(w *Workforce) *prefill {
	if w == nil {
		return nil
	}
	conv := func(m map[string]int64) []int64 {
		out := make([]int64, len(served.names))
		for name, v := range m {
			if i := served.lookup(name); i >= 0 {
				out[i] = v
			}
		}
		return out
	}
	return &prefill{all: conv(w.AllEmployees), disabled: conv(w.DisabledEmployees)}
}

type scorecard struct {
	seq         int64
	account     string
	id          string
	description string
	startDate   string
	endDate     string
	charterID   string
	province    string
	prefill     *prefill // nil: no workforce, a prefill of zeros
	created     time.Time
	updated     time.Time
	// A recalculation runs until either clock reaches its end: Options.Now
	// (a test can move it forward) or the real clock (a test that froze Now
	// still sees runs end).
	recalcUntil     time.Time
	recalcUntilReal time.Time
}

// New returns a Sandbox loaded with opts.Fixtures (validated; their
// Warnings are logged).
func New(opts Options) (*Sandbox, error) {
	fx := opts.Fixtures
	if fx == nil {
		fx = DefaultFixtures()
	}
	if err := fx.Validate(); err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	faults, err := newFaultInjector(opts.Faults, opts.Seed)
	if err != nil {
		return nil, err
	}
	s := &Sandbox{
		log:            opts.Logger,
		now:            opts.Now,
		recalcDuration: opts.RecalcDuration,
		timeouts:       opts.Timeouts.withDefaults(),
		keys:           map[string]*apiKey{},
		keyIDs:         map[int64]*apiKey{},
		nextKeyID:      1,
		lookupUsers:    map[string]string{},
		companies:      slices.Clone(fx.Companies),
		plans:          map[int64]*plan{},
		byAccount:      map[string]map[int64]*plan{},
		scorecards:     map[string]*scorecard{},
		faults:         faults,
	}
	s.nextID.Store(1)
	maxReads := opts.MaxBodyReads
	if maxReads <= 0 {
		maxReads = DefaultMaxBodyReads
	}
	s.bodySlots = make(chan struct{}, maxReads)
	if s.log == nil {
		s.log = zap.NewNop()
	}
	for _, w := range fx.Warnings() {
		s.log.Warn("fixtures: " + w)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.latency.Store(int64(opts.Latency))
	now := s.now()
	for _, a := range fx.Accounts {
		s.addFixtureKey(&account{Account: a}, now)
	}
	for _, u := range fx.LookupUsers {
		s.lookupUsers[u.Username] = u.Password
	}
	for _, f := range fx.Scorecards {
		s.nextSeq++
		sc := &scorecard{
			seq: s.nextSeq, account: f.Account, id: f.ID, description: f.Description,
			startDate: f.StartDate, endDate: f.EndDate, charterID: f.CharterID, province: f.Province,
			created: now, updated: now,
		}
		sc.prefill = newPrefill(f.Workforce)
		s.scorecards[f.ID] = sc
	}
	s.routes()
	s.stats.ByRoute = map[string]int64{}
	return s, nil
}

// Route patterns, also the by_route keys of the statistics.
const (
	routeListPlans       = "GET /api/public/v1/employment_equity_plans"
	routeGetPlan         = "GET /api/public/v1/employment_equity_plans/{id}"
	routeCreatePlan      = "POST /api/public/v1/employment_equity_plans"
	routeUpdatePlan      = "PATCH /api/public/v1/employment_equity_plans/{id}"
	routeDeletePlan      = "DELETE /api/public/v1/employment_equity_plans/{id}"
	routeUpdateTarget    = "PATCH /api/public/v1/employment_equity_plans/{plan_id}/employment_equity_milestones/{milestone_id}/employment_equity_targets/{target_id}"
	routeListScorecards  = "GET /api/public/v1/scorecards"
	routeGetScorecard    = "GET /api/public/v1/scorecards/{id}"
	routeCreateScorecard = "POST /api/public/v1/scorecards"
	routeUpdateScorecard = "PUT /api/public/v1/scorecards/{id}"
	routeDeleteScorecard = "DELETE /api/public/v1/scorecards/{id}"
	routeRecalcScorecard = "PUT /api/public/v1/scorecards/{id}/recalculate"
	routeSearchCompanies = "GET /api/companies"
	statsPath            = "/_sandbox/stats"
	unmatchedRouteSuffix = " (no route)"
	maxRequestBody       = 8 << 20
	unauthorizedMessage  = "Unauthorized: the API key, its signature or its validity is not accepted"
)

func (s *Sandbox) routes() {
	m := http.NewServeMux()
	m.HandleFunc(routeListPlans, s.authed(s.listPlans))
	m.HandleFunc(routeGetPlan, s.authed(s.getPlan))
	m.HandleFunc(routeCreatePlan, s.authed(s.createPlan))
	m.HandleFunc(routeUpdatePlan, s.authed(s.updatePlan))
	m.HandleFunc(routeDeletePlan, s.authed(s.deletePlan))
	m.HandleFunc(routeUpdateTarget, s.authed(s.updateTarget))
	m.HandleFunc(routeListScorecards, s.authed(s.listScorecards))
	m.HandleFunc(routeGetScorecard, s.authed(s.getScorecard))
	m.HandleFunc(routeCreateScorecard, s.authed(s.createScorecard))
	m.HandleFunc(routeUpdateScorecard, s.authed(s.updateScorecard))
	m.HandleFunc(routeDeleteScorecard, s.authed(s.deleteScorecard))
	m.HandleFunc(routeRecalcScorecard, s.authed(s.recalculateScorecard))
	m.HandleFunc(routeCreateKey, s.authed(s.createKey))
	m.HandleFunc(routeRevokeKey, s.authed(s.revokeKey))
	m.HandleFunc(routeSearchCompanies, s.searchCompanies)
	s.mux = m
}

// ServeHTTP implements http.Handler: statistics, faults and latency around
// the routes. The request is handled at once and its answer kept in memory;
// the answer leaves when the latency, counted from the request's arrival,
// has passed.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	if r.ContentLength != 0 {
		// A body, read or not (the server drains an unread one), arrives
		// within the body timeout; readBody moves and then lifts this
		// deadline for a body it reads.
		_ = http.NewResponseController(w).SetReadDeadline(arrival.Add(s.timeouts.Body))
	}
	if r.URL.Path == statsPath {
		s.serveStats(w, r)
		return
	}
	keepEscapedSlashes(r)
	_, pattern := s.mux.Handler(r)
	route := pattern
	if route == "" {
		route = r.Method + unmatchedRouteSuffix
	}
	s.begin(route)
	defer s.end()

	f := s.faults.draw()
	bw := &bufferedWriter{under: w, header: w.Header()}
	outcome := ""
	switch f.kind {
	case faultStatus:
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		writeErrors(bw, f.status, fmt.Sprintf("%d %s (injected by the sandbox)", f.status, http.StatusText(f.status)))
		outcome = "status"
	case faultReset:
		outcome = "reset"
	default:
		if pattern == "" {
			s.noRoute(bw, r)
		} else {
			s.mux.ServeHTTP(bw, r)
		}
		if bw.status == 0 {
			bw.status = http.StatusOK
		}
		if bw.status >= 200 && bw.status < 300 && isWrite(r.Method) {
			s.countWrite()
		}
		if f.kind == faultLost {
			outcome = "lost"
		}
	}

	if d := time.Duration(s.latency.Load()); d > 0 {
		if pace.SleepUntil(r.Context(), arrival.Add(d)) != nil {
			// The client left or the server is closing: no answer (a
			// write was committed all the same, as on a real service).
			s.logRequest(r, route, bw.status, "abandoned", arrival)
			panic(http.ErrAbortHandler)
		}
	}
	s.logRequest(r, route, bw.status, outcome, arrival)
	if outcome == "reset" || outcome == "lost" {
		dropConnection(w)
		return
	}
	// The write timeout counts from now, when the answer is due.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.timeouts.Write))
	bw.flushTo(w)
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (s *Sandbox) logRequest(r *http.Request, route string, status int, fault string, start time.Time) {
	if ce := s.log.Check(zap.DebugLevel, "request"); ce != nil {
		fields := []zap.Field{zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("route", route), zap.Int("status", status), zap.String("took", time.Since(start).String())}
		if fault != "" {
			fields = append(fields, zap.String("fault", fault))
		}
		ce.Write(fields...)
	}
}

// noRoute answers a request no pattern matches: 405 when the path exists
// for other methods, else 404.
func (s *Sandbox) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeErrors(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	writeErrors(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
}

// dropConnection closes the client connection without an answer (a reset
// when the connection is TCP).
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// SetLatency sets the delay added to every later response.
func (s *Sandbox) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// SetFaults replaces the fault spec: comma-separated KIND=PROBABILITY pairs
// where KIND is 429, 500, 502, 503 or 504 (answer that status with
// Retry-After), reset (drop the connection without answering) or lost
// (process the request, commit any write, then drop the connection);
// probabilities are between 0 and 1 and add up to at most 1. The optional
// retry-after=SECONDS sets the Retry-After value (default 1). "" turns
// faults off. The seeded generator is kept.
func (s *Sandbox) SetFaults(spec string) error { return s.faults.set(spec) }

// Seed returns the seed of the fault generator (the one picked when
// Options.Seed was zero), so that a run can be reproduced.
func (s *Sandbox) Seed() int64 { return s.faults.seed }

// Plans returns the full stored state of the plans of the account named
// account (with milestones and targets), by id.
func (s *Sandbox) Plans(account string) []apiclient.Plan {
	var out []apiclient.Plan
	for _, p := range s.accountPlans(account) {
		p.mu.Lock()
		out = append(out, p.wire(true))
		p.mu.Unlock()
	}
	return out
}

// authedHandler is a plan or scorecard handler called for an authenticated
// account with the raw request body.
type authedHandler func(w http.ResponseWriter, r *http.Request, a *account, body []byte)

// authed authenticates in two steps. Before reading the body it checks
// what needs no body: an Authorization header, a known key, not expired;
// a request failing these gets 401 at once, its body unread (and the
// connection is closed rather than drained). Then it reads the body (at
// most maxRequestBody bytes, within the body timeout, holding one of a
// bounded number of read slots) and verifies the HMAC signature over the
// path and the body's digest (constant-time) before calling h.
func (s *Sandbox) authed(h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k := s.lookupKey(r.Header.Get("X-Api-Key"))
		now := s.now()
		expired := k != nil && k.expired(now)
		// An expired key's body is never read; without a body the
		// signature can still be checked, and a signed request learns
		// when its key expired.
		if k == nil || r.Header.Get("Authorization") == "" || (expired && r.ContentLength != 0) {
			s.refuse(w, r)
			return
		}
		body, status, msg := s.readBody(w, r)
		if status != 0 {
			writeErrors(w, status, msg)
			return
		}
		if !validSignature(k.secret, r, body) {
			writeErrors(w, http.StatusUnauthorized, unauthorizedMessage)
			return
		}
		// Only a signed request learns about its key's expiry.
		if k.hasExpires {
			w.Header().Set("X-Api-Key-Expires", k.expires.UTC().Format(time.RFC3339))
			if left := k.expires.Sub(now); expired {
				writeErrors(w, http.StatusUnauthorized, unauthorizedMessage)
				return
			} else if left <= 30*24*time.Hour {
				w.Header().Set("X-Api-Key-Expires-In", expiresIn(left))
			}
		}
		h(w, r, k.acct, body)
	}
}

// refuse answers 401 without reading the body; a request that still has
// a body to send gets its connection closed after the answer, so that the
// server does not read the body to reuse the connection.
func (s *Sandbox) refuse(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	writeErrors(w, http.StatusUnauthorized, unauthorizedMessage)
}

// readBody reads the request body within the limits: at most
// maxRequestBody bytes (413), within the body timeout (408), holding a read
// slot. status is 0 on success.
func (s *Sandbox) readBody(w http.ResponseWriter, r *http.Request) (body []byte, status int, msg string) {
	if r.ContentLength == 0 {
		return nil, 0, ""
	}
	if r.ContentLength > maxRequestBody {
		w.Header().Set("Connection", "close")
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxRequestBody)
	}
	select {
	case s.bodySlots <- struct{}{}:
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	}
	defer func() { <-s.bodySlots }()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.timeouts.Body))
	// A declared length is read into a buffer of that size (plus room to
	// see the end), so a body never costs more than it holds.
	size := int64(512)
	if r.ContentLength > 0 {
		size += r.ContentLength
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxRequestBody))
	body = buf.Bytes()
	if err != nil {
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxRequestBody)
		case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
			return nil, http.StatusRequestTimeout, fmt.Sprintf("the request body was not received within %s", s.timeouts.Body)
		}
		return nil, http.StatusBadRequest, "the request body could not be read"
	}
	// The body is in: no read deadline while the request is handled (a
	// passing deadline would cancel the request's context).
	_ = rc.SetReadDeadline(time.Time{})
	return body, 0, ""
}

// bufferedWriter keeps a handler's answer in memory until it is due.
type bufferedWriter struct {
	under  http.ResponseWriter // for the connection's deadlines (Unwrap)
	header http.Header
	status int
	body   []byte
	owned  bool // body is a copy of the bufferedWriter's own
}

func (b *bufferedWriter) Header() http.Header { return b.header }

// Unwrap returns the connection's ResponseWriter, so that a
// ResponseController sets the connection's deadlines through b.
func (b *bufferedWriter) Unwrap() http.ResponseWriter { return b.under }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

// Write keeps p. The first slice is kept as it is, not copied: the
// sandbox's writers never change a slice after writing it.
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	switch {
	case b.body == nil:
		b.body = p
	case !b.owned:
		b.body = append(append(make([]byte, 0, len(b.body)+len(p)), b.body...), p...)
		b.owned = true
	default:
		b.body = append(b.body, p...)
	}
	return len(p), nil
}

func (b *bufferedWriter) flushTo(w http.ResponseWriter) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if len(b.body) > 0 && b.status != http.StatusNoContent && b.status != http.StatusNotModified {
		w.Header().Set("Content-Length", strconv.Itoa(len(b.body)))
	}
	w.WriteHeader(b.status)
	if len(b.body) > 0 {
		_, _ = w.Write(b.body)
	}
}

// expiresIn formats the time left on a key: whole days rounded to the
// nearest ("12d"; a key that expires ten days from now, a little less by the
// time a request arrives, says "10d", and so does one with ten days and an
// hour left), or on the last day the hours counted up ("5h" for 4.5 hours).
func expiresIn(left time.Duration) string {
	const day = 24 * time.Hour
	if left >= day {
		return fmt.Sprintf("%dd", int((left+day/2)/day))
	}
	h := (left + time.Hour - 1) / time.Hour
	return fmt.Sprintf("%dh", int(h))
}

// validSignature compares the Authorization header (constant-time) with
// the signature of the body and the request path: the path exactly as sent
// on the request line first (what a client signs), then Go's escaping of
// it and the decoded path, so that clients which sign the path before
// escaping it are accepted too.
func validSignature(secret string, r *http.Request, body []byte) bool {
	got := []byte(r.Header.Get("Authorization"))
	if len(got) == 0 {
		return false
	}
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	for _, p := range signedPaths(r) {
		if subtle.ConstantTimeCompare(got, []byte(apiclient.SignatureForDigest(secret, p, digest))) == 1 {
			return true
		}
	}
	return false
}

// signedPaths returns the distinct forms of the request path a client may
// have signed: the raw path of the request line (without the query), the
// escaped path and the decoded path.
func signedPaths(r *http.Request) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(requestPath(r))
	add(r.URL.EscapedPath())
	add(r.URL.Path)
	return out
}

// requestPath returns the path of the request line as the client sent it,
// without the query; "" when the request line has none.
func requestPath(r *http.Request) string {
	raw := r.RequestURI
	if !strings.HasPrefix(raw, "/") {
		// Absolute form ("http://host/path?q"): keep the path part.
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			return ""
		}
		return u.EscapedPath()
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	return raw
}

// keepEscapedSlashes makes the router see an escaped slash ("%2F") in a
// path segment as part of that segment, as the client meant, also when the
// client left other characters unescaped that Go would escape (Go then
// drops the raw path and would split the segment at the slash).
func keepEscapedSlashes(r *http.Request) {
	raw := requestPath(r)
	if raw == r.URL.EscapedPath() || !strings.Contains(raw, "%") {
		return
	}
	segs := strings.Split(raw, "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return
		}
		segs[i] = url.PathEscape(u)
	}
	if p := strings.Join(segs, "/"); p != r.URL.EscapedPath() {
		r.URL.RawPath = p
	}
}

// writeRaw writes b, a JSON document with its newline, with status; b is
// not changed afterwards.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, "the sandbox could not encode its answer")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeErrors writes {"errors":[...]} with status.
func writeErrors(w http.ResponseWriter, status int, messages ...string) {
	b, _ := json.Marshal(map[string][]string{"errors": messages})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Server is a Sandbox served over HTTP on a TCP address.
type Server struct {
	// URL is the base URL of both the plan API and the company lookup,
	// for example http://127.0.0.1:41234.
	URL     string
	Sandbox *Sandbox

	srv      *http.Server
	cancel   context.CancelFunc
	done     chan error
	waitOnce sync.Once
	serveErr error
}

// wait returns what Serve returned, once it has.
func (s *Server) wait() error {
	s.waitOnce.Do(func() { s.serveErr = <-s.done })
	return s.serveErr
}

// Start listens on addr (port 0 picks a free port) and serves a new Sandbox
// in the background until Close or Shutdown.
func Start(addr string, opts Options) (*Server, error) {
	sb, err := New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// ReadTimeout stays unset: the body's deadline is set per request once
	// the key is known (Sandbox.readBody), and a read deadline still running
	// while a request waits out its latency would cancel it. WriteTimeout
	// is extended per request when its answer is due.
	srv := &http.Server{
		Handler:           sb,
		ReadHeaderTimeout: sb.timeouts.Header,
		WriteTimeout:      sb.timeouts.Write,
		IdleTimeout:       sb.timeouts.Idle,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          zap.NewStdLog(sb.log.Named("http")),
	}
	s := &Server{URL: "http://" + urlHost(addr, ln.Addr()), Sandbox: sb, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// urlHost returns host:port for the URL of a listener: an unspecified
// address (":8080", "0.0.0.0:8080") is reached on the loopback address.
func urlHost(addr string, la net.Addr) string {
	tcp, ok := la.(*net.TCPAddr)
	if !ok {
		return la.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
		if h, _, err := net.SplitHostPort(addr); err == nil && strings.Contains(h, ":") {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// Shutdown stops accepting connections and waits for requests in progress
// (latency waits are cut short) until ctx ends; then it closes the rest.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	if serr := s.wait(); serr != nil && err == nil {
		err = serr
	}
	return err
}

// Close stops the server at once, closing every connection.
func (s *Server) Close() error {
	s.cancel()
	err := s.srv.Close()
	if serr := s.wait(); serr != nil && err == nil {
		err = serr
	}
	return err
}
