package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sentinels are the errors the client's errors match with errors.Is; what
// a status means to the pipeline is asserted in pipeline/planapi.
var sentinels = []error{ErrUnclearOutcome, ErrUnavailable}

// TestAPIError drives error responses of every kind through a real request
// and checks the typed error, its sentinel and its text.
func TestAPIError(t *testing.T) {
	tests := []struct {
		name        string
		method      string // "GET" uses GetPlan, "POST" CreatePlan, "PATCH" UpdatePlan
		status      int
		contentType string
		body        string
		retryAfter  string
		want        error // sentinel it matches (nil: none); every other sentinel must not match
		messages    []string
		bodyExcerpt string
		text        []string // substrings of Error()
	}{
		{
			name: "422 JSON errors", method: "POST", status: 422, contentType: "application/json",
			body:     `{"errors":["Start date must be on or after 2025-09-01","Sector is not included in the list"]}`,
			want:     nil,
			messages: []string{"Start date must be on or after 2025-09-01", "Sector is not included in the list"},
			text:     []string{"POST " + testBasePath + APIPrefix + "/employment_equity_plans: 422 Unprocessable Entity: Start date must be on or after 2025-09-01; Sector"},
		},
		{
			name: "422 Rails-style field errors", method: "PATCH", status: 422, contentType: "application/json",
			body:     `{"errors":{"sector":["is not included in the list"],"name":"is too long"}}`,
			want:     nil,
			messages: []string{"name is too long", "sector is not included in the list"},
		},
		{
			name: "400", method: "GET", status: 400, contentType: "application/json", body: `{"error":"bad request"}`,
			want: nil, messages: []string{"bad request"},
		},
		{
			name: "401 empty body", method: "GET", status: 401,
			want: nil,
			text: []string{"401 Unauthorized (empty response body)", "check the API key"},
		},
		{
			name: "404 JSON", method: "PATCH", status: 404, contentType: "application/json", body: `{"errors":["Plan not found"]}`,
			want: nil, messages: []string{"Plan not found"},
		},
		{
			name: "409", method: "PATCH", status: 409, contentType: "application/json", body: `{"errors":["Recalculation already in progress"]}`,
			want: nil, messages: []string{"Recalculation already in progress"},
		},
		{
			name: "429 with Retry-After", method: "POST", status: 429, body: "slow down", retryAfter: "30",
			want: nil, bodyExcerpt: "slow down",
			text: []string{`429 Too Many Requests (response: "slow down") (retry after 30s)`},
		},
		{
			name: "502 HTML page on GET", method: "GET", status: 502, contentType: "text/html",
			body:        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{x}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>",
			want:        ErrUnavailable,
			bodyExcerpt: "502 Bad Gateway",
			text:        []string{`502 Bad Gateway (response: "502 Bad Gateway")`},
		},
		{
			name: "500 HTML page on POST is unclear", method: "POST", status: 500, contentType: "text/html",
			body:        "<html><body><p>Internal\n\n   error</p><script>var secret=1</script></body></html>",
			want:        ErrUnclearOutcome,
			bodyExcerpt: "Internal error",
			text:        []string{"may or may not have been applied"},
		},
		{
			name: "JSON without errors key", method: "GET", status: 404, contentType: "application/json", body: `{"status":404}`,
			want: nil, bodyExcerpt: `{"status":404}`,
		},
		{
			name: "secret echoed back is removed", method: "GET", status: 404, contentType: "application/json",
			body: `{"errors":["no plan for secret ` + testSecret + `"]}`,
			want: nil, messages: []string{"no plan for secret [redacted]"},
		},
		{
			name: "long body is cut", method: "GET", status: 404, body: strings.Repeat("é", 500),
			want: nil, bodyExcerpt: strings.Repeat("é", maxExcerpt/2) + "…",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}, func(o *Options) { o.Retry.MaxAttempts = 1 })
			ctx := context.Background()
			var err error
			switch tt.method {
			case "GET":
				_, err = fx.c.GetPlan(ctx, 3)
			case "POST":
				_, err = fx.c.CreatePlan(ctx, PlanCreate{StartDate: "2025-09-01", EndDate: "2026-08-31"})
			case "PATCH":
				name := "x"
				_, err = fx.c.UpdatePlan(ctx, 3, PlanUpdate{Name: &name})
			}
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %#v, want *APIError", err)
			}
			if ae.StatusCode != tt.status || ae.Method != tt.method || !strings.HasPrefix(ae.Path, testBasePath+APIPrefix+"/employment_equity_plans") {
				t.Errorf("APIError = %+v", ae)
			}
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.want; got != want {
					t.Errorf("errors.Is(err, %q) = %v, want %v", s, got, want)
				}
			}
			if strings.Join(ae.Messages, "|") != strings.Join(tt.messages, "|") {
				t.Errorf("Messages = %q, want %q", ae.Messages, tt.messages)
			}
			if ae.Body != tt.bodyExcerpt {
				t.Errorf("Body = %q, want %q", ae.Body, tt.bodyExcerpt)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || msg == "" {
				t.Errorf("Error() is not one line: %q", msg)
			}
			for _, s := range tt.text {
				if !strings.Contains(msg, s) {
					t.Errorf("Error() = %q, want it to contain %q", msg, s)
				}
			}
			if tt.retryAfter != "" && ae.RetryAfter != 30*time.Second {
				t.Errorf("RetryAfter = %v", ae.RetryAfter)
			}
			assertNoSecrets(t, "error", msg)
			assertNoSecrets(t, "log", logText(fx.logs))
		})
	}
}

// TestAPIErrorZeroValue: an APIError built by hand still prints something useful.
func TestAPIErrorZeroValue(t *testing.T) {
	e := &APIError{StatusCode: 418, Method: "GET", Path: "/x"}
	if got := e.Error(); got != "GET /x: 418 I'm a teapot (empty response body)" {
		t.Errorf("Error() = %q", got)
	}
	for _, s := range sentinels {
		if errors.Is(e, s) {
			t.Errorf("418 matches %v", s)
		}
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  plain\ttext\r\n", "plain text"},
		{"<html><body><h1>Oops</h1><p>try\nlater</p></body></html>", "Oops try later"},
		{"<HTML><HEAD><TITLE> Service  Unavailable </TITLE></HEAD></HTML>", "Service Unavailable"},
		{"<html><script>if (a < b) { x() }</script><body>ok</body>", "ok"},
		{"bad\xffutf8\x00ctl", "bad\uFFFDutf8 ctl"},
	}
	for _, tt := range tests {
		if got := excerpt(tt.in); got != tt.want {
			t.Errorf("excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
