package apiclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// benchCounters returns n counter names shaped like the service's.
func benchCounters(n int) []string {
	races := []string{"african", "coloured", "indian", "white", "foreign"}
	levels := []string{"top_managers", "senior_managers", "professionally_qualified", "skilled_technical", "semi_skilled", "unskilled_employees", "temporary_employees", "interns", "learners"}
	var out []string
	for _, l := range levels {
		for _, r := range races {
			for _, g := range []string{"male", "female"} {
				if len(out) < n {
					out = append(out, "number_of_"+r+"_"+g+"_"+l)
				}
			}
		}
	}
	return out
}

// benchTargetJSON is a stored target with every counter of names.
func benchTargetJSON(id int64, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%d,"target_type":"all_employees"`, id)
	for i, n := range names {
		fmt.Fprintf(&b, `,%q:%d`, n, i*3)
	}
	b.WriteString("}")
	return b.String()
}

// benchPlanJSON is a stored five-year plan with two targets a year.
func benchPlanJSON(names []string) string {
	var b strings.Builder
	b.WriteString(`{"id":7,"name":"EE Plan","start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025","sector":"Manufacturing","era":"post_2025","milestones":[`)
	for y := 1; y <= 5; y++ {
		if y > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"year_number":%d,"start_date":"%d-09-01","end_date":"%d-08-31","targets":[%s,%s]}`,
			70+y, y, 2024+y, 2025+y, benchTargetJSON(int64(700+2*y), names), strings.Replace(benchTargetJSON(int64(701+2*y), names), "all_employees", "disabled_employees", 1))
	}
	b.WriteString("]}")
	return b.String()
}

// cannedTransport answers every request in memory with body, so that a
// benchmark measures the client's own CPU: no network, no server.
type cannedTransport struct{ body []byte }

func (t cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(t.body)), ContentLength: int64(len(t.body)), Request: r}, nil
}

// BenchmarkClient measures the client's CPU and allocations per request:
// a target patch of 10 changed counters (answered with the stored target of
// 90 counters, decoded or not), and a GET of a five-year plan. "memory"
// answers in memory (the client alone); "loopback" goes to an httptest
// server on 127.0.0.1 at zero latency (client, server and the network stack
// of one process).
func BenchmarkClient(b *testing.B) {
	names := benchCounters(90)
	target := []byte(benchTargetJSON(700, names))
	plan := []byte(benchPlanJSON(names))
	patch := map[string]int64{}
	for i, n := range names[:10] {
		patch[n] = int64(i + 1)
	}
	calls := []struct {
		name string
		body []byte
		call func(ctx context.Context, c *Client) error
	}{
		{"PATCH-decoded", target, func(ctx context.Context, c *Client) error {
			_, err := c.UpdateTarget(ctx, 7, 70, 700, patch)
			return err
		}},
		{"PATCH-not-decoded", target, func(ctx context.Context, c *Client) error {
			return c.PatchTarget(ctx, 7, 70, 700, patch)
		}},
		{"GET-plan", plan, func(ctx context.Context, c *Client) error {
			_, err := c.GetPlan(ctx, 7)
			return err
		}},
	}
	for _, where := range []string{"memory", "loopback"} {
		for _, cl := range calls {
			b.Run(where+"/"+cl.name, func(b *testing.B) {
				var hc *http.Client
				base := "http://127.0.0.1:1"
				if where == "memory" {
					hc = &http.Client{Transport: cannedTransport{cl.body}}
				} else {
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						io.Copy(io.Discard, r.Body)
						w.Header().Set("Content-Type", "application/json")
						w.Header().Set("Content-Length", strconv.Itoa(len(cl.body)))
						w.Write(cl.body)
					}))
					defer srv.Close()
					base = srv.URL
				}
				c, err := New(Options{BaseURL: base, APIKey: testKey, APISecret: testSecret, HTTPClient: hc})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := cl.call(ctx, c); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/req")
			})
		}
	}
}
