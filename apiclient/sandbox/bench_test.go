//go:build unix

package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

// The benchmarks below measure what the sandbox costs per request when many
// requests arrive at once (b.RunParallel with 32 goroutines on the default
// GOMAXPROCS), as `eepipe apply --concurrency 32` drives it. Each reports
// cpu-µs/op: the process's user+system CPU time per request, from
// getrusage, which is what the sandbox takes from the client's cores.
//
//	go test ./apiclient/sandbox -run '^$' -bench 'Sandbox' -benchtime 2000x
//
// The Handler benchmarks call ServeHTTP directly (the sandbox's own cost
// plus building the request); the HTTP benchmarks go over 127.0.0.1 and so
// also count net/http on both sides and the client's signing.

// cpuTime returns the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs body and reports its CPU time per operation.
func reportCPU(b *testing.B, body func()) {
	b.Helper()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	c0 := cpuTime()
	body()
	b.StopTimer()
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-c0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}
}

// discardWriter is a ResponseWriter that keeps the status and counts the
// body's bytes.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discardWriter) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = 200
	}
	d.n += len(p)
	return len(p), nil
}

// signedRequest builds a request signed as acme.
func signedRequest(method, path string, body []byte, auth string) *http.Request {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("X-Api-Key", acmeKey)
	r.Header.Set("Authorization", auth)
	r.Header.Set("Accept", "application/json")
	if len(body) > 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// serve runs one request through the handler and fails unless want.
func serve(b *testing.B, h http.Handler, r *http.Request, want int) {
	var w discardWriter
	h.ServeHTTP(&w, r)
	if w.status != want {
		b.Errorf("%s %s: status %d, want %d", r.Method, r.URL.Path, w.status, want)
	}
}

// benchSandbox returns a sandbox holding n five-year plans of acme, filled
// from the scorecard's workforce, and their ids.
func benchSandbox(b *testing.B, n int) (*Sandbox, []apiclient.Plan) {
	b.Helper()
	sb, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`))
	auth := apiclient.Signature(acmeSecret, plansPath, body)
	for i := 0; i < n; i++ {
		serve(b, sb, signedRequest("POST", plansPath, body, auth), 201)
	}
	return sb, sb.Plans("acme")
}

func BenchmarkSandboxHandlerGet(b *testing.B) {
	sb, plans := benchSandbox(b, 64)
	type get struct{ path, auth string }
	gets := make([]get, len(plans))
	for i, p := range plans {
		path := fmt.Sprintf("%s/%d", plansPath, p.ID)
		gets[i] = get{path, apiclient.Signature(acmeSecret, path, nil)}
	}
	var next atomic.Int64
	reportCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g := gets[next.Add(1)%int64(len(gets))]
				serve(b, sb, signedRequest("GET", g.path, nil, g.auth), 200)
			}
		})
	})
}

func BenchmarkSandboxHandlerCreate(b *testing.B) {
	sb, _ := benchSandbox(b, 0)
	body := []byte(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`))
	auth := apiclient.Signature(acmeSecret, plansPath, body)
	reportCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				serve(b, sb, signedRequest("POST", plansPath, body, auth), 201)
			}
		})
	})
}

func BenchmarkSandboxHandlerPatch(b *testing.B) {
	sb, plans := benchSandbox(b, 64)
	type patch struct {
		path, auth string
		body       []byte
	}
	var patches []patch
	for i, p := range plans {
		path := targetPath(p, i%5, i%2)
		body := []byte(targetBody(fmt.Sprintf(`"number_of_african_male_top_managers":%d,"number_of_white_female_senior_managers":%d`, i, i+1)))
		patches = append(patches, patch{path, apiclient.Signature(acmeSecret, path, body), body})
	}
	var next atomic.Int64
	reportCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p := patches[next.Add(1)%int64(len(patches))]
				serve(b, sb, signedRequest("PATCH", p.path, p.body, p.auth), 200)
			}
		})
	})
}

// httpBench serves sb on 127.0.0.1 and returns a function sending one
// signed request as acme and failing unless want.
func httpBench(b *testing.B) (*Server, func(method, path string, body []byte, auth string, want int)) {
	b.Helper()
	srv, err := Start("127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return srv, func(method, path string, body []byte, auth string, want int) {
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		req.Header.Set("X-Api-Key", acmeKey)
		req.Header.Set("Authorization", auth)
		resp, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Errorf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
}

func BenchmarkSandboxHTTPGet(b *testing.B) {
	srv, send := httpBench(b)
	body := []byte(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`))
	send("POST", plansPath, body, apiclient.Signature(acmeSecret, plansPath, body), 201)
	p := srv.Sandbox.Plans("acme")[0]
	path := fmt.Sprintf("%s/%d", plansPath, p.ID)
	auth := apiclient.Signature(acmeSecret, path, nil)
	reportCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				send("GET", path, nil, auth, 200)
			}
		})
	})
}

func BenchmarkSandboxHTTPCreate(b *testing.B) {
	_, send := httpBench(b)
	body := []byte(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`))
	auth := apiclient.Signature(acmeSecret, plansPath, body)
	reportCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				send("POST", plansPath, body, auth, 201)
			}
		})
	})
}

// BenchmarkSandboxLatency20ms measures how long a GET takes, one at a time
// over 127.0.0.1, with 20 ms of latency: the latency is a deadline from the
// request's arrival, so the answer should leave at 20 ms, not 20 ms plus
// the handling.
func BenchmarkSandboxLatency20ms(b *testing.B) {
	srv, send := httpBench(b)
	body := []byte(planBody(`"start_date":"2025-09-01","end_date":"2030-08-31","scorecard_id":"scorecard_acme_2025"`))
	send("POST", plansPath, body, apiclient.Signature(acmeSecret, plansPath, body), 201)
	p := srv.Sandbox.Plans("acme")[0]
	path := fmt.Sprintf("%s/%d", plansPath, p.ID)
	auth := apiclient.Signature(acmeSecret, path, nil)
	srv.Sandbox.SetLatency(20 * time.Millisecond)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		send("GET", path, nil, auth, 200)
	}
	b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond)/float64(b.N), "ms/request")
}
