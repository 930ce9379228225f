package apiclient

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pace"
)

// RetryPolicy is the client's one retry policy; zero fields take the
// defaults (DefaultMaxAttempts, DefaultBaseDelay, DefaultMaxDelay).
//
// What is retried: a request that got no response (connection refused or
// dropped, timeout) and the statuses 429, 502, 503 and 504, for GET, PUT,
// PATCH and DELETE. A POST is sent again only after a 429, which the
// service sends before it applies anything; a POST that failed in any other
// way is never sent blindly again but returned to the caller, which decides
// (the error says whether the outcome is unclear). 409 and every other 4xx
// are answers and are never retried.
//
// How long it waits: the server's Retry-After (delta seconds or an HTTP
// date) when the response carries one, capped at MaxRetryAfter; otherwise
// capped exponential backoff with full jitter, a random duration between 0
// and min(MaxDelay, BaseDelay*2^(attempt-1)) (the bound is the schedule of
// github.com/cenkalti/backoff's ExponentialBackOff, the one the pipeline's
// recalculation polling uses too; the loop is a pace.Pacer call, the one
// shape of wait and retry). Waits end at once when the context ends, or the wait context given with WithWaitContext, and no
// further attempt is started then: the call returns an *InterruptedError
// holding the last attempt's error and the context's. A wait that would
// pass the context's deadline is not started: the last error is returned
// instead.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, the first included; 1 disables retries
	BaseDelay   time.Duration // backoff before the second attempt (before jitter)
	MaxDelay    time.Duration // cap of the backoff (not of Retry-After)
}

// Defaults of RetryPolicy.
const (
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = 250 * time.Millisecond
	DefaultMaxDelay    = 20 * time.Second
)

// MaxRetryAfter caps the wait a server's Retry-After can ask for.
const MaxRetryAfter = 5 * time.Minute

// withDefaults fills zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	return p
}

// newBackOff returns the schedule of backoff bounds of one call: BaseDelay,
// doubling up to MaxDelay, without randomness (the full jitter is applied
// to each bound).
func (p RetryPolicy) newBackOff() pace.Schedule {
	return pace.Exponential(p.BaseDelay, p.MaxDelay)
}

// retryableMethod reports whether requests of method may be sent again
// after any retryable failure (a POST only after a 429, see RetryPolicy).
func retryableMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// retryableStatus reports whether a response status is worth another attempt.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// parseRetryAfter reads a Retry-After header value: delta seconds or an
// HTTP date (relative to now; a date in the past means 0). ok is false when
// the value is absent or malformed. The result is not capped.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				return maxDuration, true
			}
			return 0, false
		}
		if n > uint64(maxDuration/time.Second) {
			return maxDuration, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

const maxDuration = time.Duration(1<<63 - 1)

// fullJitter and sleepCtx are the client's jitter and wait between
// attempts (the defaults of its hooks): those of package pace, the one
// home of wait and retry.
var (
	fullJitter = pace.FullJitter
	sleepCtx   = pace.Sleep
)
