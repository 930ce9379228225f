package apiclient

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Errors that the client's error values match with errors.Is. They say
// what the wire can tell about a failed call; what a status means to the
// caller's domain (not found, invalid, conflict) is read from
// APIError.StatusCode with errors.As.
var (
	// ErrUnclearOutcome is matched by the error of a POST whose outcome is
	// not known: a 5xx answer (a proxy may answer after the service
	// acted), a connection lost after the request was written, or a 2xx
	// answer whose body could not be read. The create may or may not have
	// happened.
	ErrUnclearOutcome = errors.New("no clear answer from the service; the request may or may not have been applied")
	// ErrUnavailable is matched by the error of a call that could not
	// reach the service or kept getting 502, 503 or 504 after the retries
	// ran out (a POST only when nothing was sent).
	ErrUnavailable = errors.New("the service is unreachable")
	// ErrMaybeApplied is matched by the error of a call other than a POST
	// that failed although one of its attempts may have been applied: an
	// earlier attempt got no answer after its request was written, or a
	// 500, 502 or 504 (which may come after the service acted), or the
	// last attempt's connection was lost after its request was written.
	ErrMaybeApplied = errors.New("an attempt of the request may have been applied")
)

// APIError is a response of the service with a status outside 2xx. It never
// holds a secret: the Authorization header, the API secret and the lookup
// password are removed from every text the server sent back.
//
// Callers read its meaning with errors.As and StatusCode (401 and 403 the
// key, 404 not on the account, 409 a recalculation in progress, 400 and
// 422 rejected input, 429 rate limited). errors.Is matches:
//
//	5xx on POST   ErrUnclearOutcome (the create may or may not have happened)
//	502, 503, 504 on other methods, after the retries ran out: ErrUnavailable
type APIError struct {
	StatusCode int
	Method     string
	Path       string        // the request path as sent (without the query string)
	Messages   []string      // the "errors" messages of a JSON error body, when it has them
	Body       string        // a short, sanitised excerpt of any other body; "" when empty
	RetryAfter time.Duration // from the Retry-After header; 0 when absent
	// Lookup is set for an answer of the company lookup (HTTP Basic
	// credentials), unset for the plan API (key and secret): a 401 names
	// the credentials that were refused.
	Lookup bool

	// afterUnclear is set when an earlier attempt of the same call got no
	// clear answer, so this response may describe the effect of that attempt
	// (a 404 to a retried DELETE, a 409 to a retried recalculation).
	afterUnclear bool
	// earlierMaybeApplied is set when an earlier attempt of the same call
	// may have been applied (it was not refused: see refusal).
	earlierMaybeApplied bool
	// cut is set when the call's retries were cut short (InterruptedError):
	// the retries did not run out.
	cut bool
}

// Error returns a one-line description: method, path, status and what the
// service said, or a note that the body was empty.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	switch {
	case len(e.Messages) > 0:
		b.WriteString(": " + strings.Join(e.Messages, "; "))
	case e.Body != "":
		fmt.Fprintf(&b, " (response: %q)", e.Body)
	default:
		b.WriteString(" (empty response body)")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	switch {
	case e.StatusCode == http.StatusUnauthorized && e.Lookup:
		b.WriteString(" (the company lookup refused its username and password: check the lookup username and password, not the API key)")
	case e.StatusCode == http.StatusUnauthorized:
		b.WriteString(" (check the API key and secret, and whether the key has expired)")
	case e.StatusCode >= 300 && e.StatusCode < 400:
		b.WriteString(" (check the base URL: the client does not follow redirects)")
	case e.Unclear():
		b.WriteString(" (the request may or may not have been applied)")
	}
	return b.String()
}

// Is makes errors.Is match ErrUnclearOutcome, ErrUnavailable and
// ErrMaybeApplied (see APIError).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnclearOutcome:
		return e.Unclear()
	case ErrUnavailable:
		return !e.cut && e.Method != http.MethodPost && retryableStatus(e.StatusCode) && e.StatusCode != http.StatusTooManyRequests
	case ErrMaybeApplied:
		return e.Method != http.MethodPost && e.earlierMaybeApplied
	}
	return false
}

// Unclear reports whether the response leaves open whether a POST was
// applied: a server error may come from a proxy after the service acted.
func (e *APIError) Unclear() bool {
	return e.Method == http.MethodPost && e.StatusCode >= 500
}

// TransportError is a request that got no HTTP response at all: the
// connection could not be made, was dropped, timed out or the context
// ended. Unwrap returns the cause (the context's error when it ended).
//
// Whether anything reached the server decides what it means. A failure
// before the request was written (connection refused, DNS failure, TLS
// handshake) is safe: nothing was sent, so nothing was applied, and the
// error matches ErrUnavailable but not ErrUnclearOutcome, even for a POST.
// A failure after the request was written leaves a POST's outcome open: it
// matches ErrUnclearOutcome. For other methods, which are retried, a
// failure that outlasts the retries matches ErrUnavailable.
type TransportError struct {
	Method, Path string
	Attempts     int
	Sent         bool // the request headers were written to a connection
	ctxErr       error
	err          error
	cut          bool // the retries were cut short (InterruptedError)
	// maybeApplied: this attempt's request was written, or an earlier
	// attempt was not refused (see refusal).
	maybeApplied bool
}

func (e *TransportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.Method, e.Path)
	switch {
	case e.ctxErr != nil:
		b.WriteString("stopped: " + e.ctxErr.Error())
	case !e.Sent:
		fmt.Fprintf(&b, "the service is unreachable: %s", e.err)
	default:
		fmt.Fprintf(&b, "no response: %s", e.err)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Unclear() {
		b.WriteString(" (the request may or may not have been applied)")
	}
	return b.String()
}

// Unwrap returns the context's error when the caller's context ended, else
// the transport failure.
func (e *TransportError) Unwrap() error {
	if e.ctxErr != nil {
		return e.ctxErr
	}
	return e.err
}

// Unclear reports whether a POST was written before the failure, so that
// it may have been applied.
func (e *TransportError) Unclear() bool { return e.Sent && e.Method == http.MethodPost }

// Is makes errors.Is match ErrUnclearOutcome, ErrUnavailable and
// ErrMaybeApplied (see TransportError).
func (e *TransportError) Is(target error) bool {
	switch target {
	case ErrUnclearOutcome:
		return e.Unclear()
	case ErrUnavailable:
		if e.ctxErr != nil || e.cut {
			return false
		}
		return !e.Sent || e.Method != http.MethodPost
	case ErrMaybeApplied:
		return e.maybeApplied && e.Method != http.MethodPost
	}
	return false
}

// retryableTransport reports whether a transport failure is worth another
// attempt (the caller's context is checked before): not for certificate and
// TLS record problems, which do not go away by waiting.
func retryableTransport(err error) bool {
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	return !errors.As(err, &cv) && !errors.As(err, &rh)
}

// maxExcerpt is the longest body excerpt or message kept in an APIError.
const (
	maxExcerpt  = 200
	maxMessage  = 500
	maxMessages = 50
)

// newAPIError builds the error for a non-2xx response with body b.
func newAPIError(method, path string, status int, h http.Header, b []byte, retryAfter time.Duration, redact func(string) string) *APIError {
	e := &APIError{StatusCode: status, Method: method, Path: path, RetryAfter: retryAfter}
	if msgs, ok := errorMessages(b); ok {
		for i, m := range msgs {
			if i == maxMessages {
				e.Messages = append(e.Messages, fmt.Sprintf("(and %d more)", len(msgs)-maxMessages))
				break
			}
			if m = truncate(clean(redact(m)), maxMessage); m != "" {
				e.Messages = append(e.Messages, m)
			}
		}
	}
	if len(e.Messages) == 0 {
		e.Body = excerpt(redact(string(b)))
	}
	if status >= 300 && status < 400 {
		if loc := h.Get("Location"); loc != "" {
			e.Messages = append(e.Messages, "redirected to "+truncate(clean(redact(loc)), maxMessage))
		}
	}
	return e
}

// errorMessages reads the messages of a JSON error body. It accepts the
// contract's {"errors":["..."]} and the common variants {"errors":{"field":
// ["..."]}}, {"error":"..."} and {"message":"..."}.
func errorMessages(b []byte) ([]string, bool) {
	var body struct {
		Errors  json.RawMessage `json:"errors"`
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(b, &body) != nil {
		return nil, false
	}
	var out []string
	out = appendMessages(out, "", body.Errors)
	out = appendMessages(out, "", body.Error)
	out = appendMessages(out, "", body.Message)
	return out, len(out) > 0
}

// appendMessages flattens a JSON value of strings, arrays and objects into
// messages; object keys (field names) prefix their messages.
func appendMessages(out []string, prefix string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return out
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s = strings.TrimSpace(s); s != "" {
			if prefix != "" {
				s = prefix + " " + s
			}
			out = append(out, s)
		}
		return out
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		for _, v := range list {
			out = appendMessages(out, prefix, v)
		}
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out = appendMessages(out, p, obj[k])
		}
		return out
	}
	// Numbers and booleans: keep their text.
	if t := strings.TrimSpace(string(raw)); t != "null" {
		if prefix != "" {
			t = prefix + " " + t
		}
		out = append(out, t)
	}
	return out
}

// excerpt returns a short, printable excerpt of a response body: the title
// or text of an HTML page, or the body itself with whitespace collapsed.
func excerpt(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if looksHTML(s) {
		if t := htmlTitle(s); t != "" {
			s = t
		} else {
			s = stripTags(s)
		}
	}
	return truncate(clean(s), maxExcerpt)
}

func looksHTML(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(l, "<!doctype") || strings.HasPrefix(l, "<html") || strings.Contains(l, "<body") || strings.Contains(l, "<title")
}

// htmlTitle returns the text of the page's <title>, or "".
func htmlTitle(s string) string {
	l := strings.ToLower(s)
	i := strings.Index(l, "<title")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(l[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := strings.Index(l[start:], "</title")
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(stripTags(s[start : start+end]))
}

// stripTags removes <...> markup, script and style contents included.
func stripTags(s string) string {
	var b strings.Builder
	l := strings.ToLower(s)
	for i := 0; i < len(s); {
		if s[i] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		for _, skip := range []string{"script", "style"} {
			if strings.HasPrefix(l[i+1:], skip) {
				if end := strings.Index(l[i:], "</"+skip); end >= 0 {
					i += end
				}
			}
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		i += end + 1
		b.WriteByte(' ')
	}
	return b.String()
}

// clean replaces control characters and collapses whitespace.
func clean(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
