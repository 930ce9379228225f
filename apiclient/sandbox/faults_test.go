package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

func TestParseFaults(t *testing.T) {
	tests := []struct {
		spec    string
		entries string
		retry   int
		err     string
	}{
		{"", "[]", 1, ""},
		{"  ", "[]", 1, ""},
		{"503=0.05,429=0.03,reset=0.02,lost=0.02", "[503:0.05 429:0.03 reset:0.02 lost:0.02]", 1, ""},
		{" 502 = 0.5 , RESET=0.5 ,", "[502:0.5 reset:0.5]", 1, ""},
		{"503=1,retry-after=0", "[503:1]", 0, ""},
		{"500=0.1,504=0.1,retry-after=3", "[500:0.1 504:0.1]", 3, ""},
		{"503", "", 0, `"503" is not KIND=PROBABILITY`},
		{"503=", "", 0, `is not KIND=PROBABILITY`},
		{"418=0.1", "", 0, `unknown fault "418"`},
		{"503=1.5", "", 0, "from 0 to 1"},
		{"503=-0.1", "", 0, "from 0 to 1"},
		{"503=abc", "", 0, "from 0 to 1"},
		{"503=0.6,429=0.6", "", 0, "add up to 1.2"},
		{"503=0.1,503=0.2", "", 0, "503 is given twice"},
		{"retry-after=-1", "", 0, "not a whole number of seconds"},
	}
	for _, tc := range tests {
		fs, err := parseFaults(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		var got []string
		for _, e := range fs.entries {
			got = append(got, fmt.Sprintf("%s:%g", e.name, e.p))
		}
		if s := "[" + strings.Join(got, " ") + "]"; s != tc.entries || fs.retryAfter != tc.retry {
			t.Errorf("%q: %s retry %d, want %s retry %d", tc.spec, s, fs.retryAfter, tc.entries, tc.retry)
		}
	}
	if _, err := New(Options{Faults: "nope=1"}); err == nil {
		t.Error("New accepted a bad fault spec")
	}
}

func TestFaultDrawIsSeeded(t *testing.T) {
	draws := func(seed int64) string {
		fi, err := newFaultInjector("503=0.2,429=0.2,reset=0.2,lost=0.2", seed)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i := 0; i < 200; i++ {
			f := fi.draw()
			fmt.Fprintf(&b, "%d/%d ", f.kind, f.status)
		}
		return b.String()
	}
	if draws(42) != draws(42) {
		t.Error("the same seed gave different faults")
	}
	if draws(42) == draws(43) {
		t.Error("different seeds gave the same faults")
	}
	s := draws(7)
	for _, want := range []string{"0/0", "1/503", "1/429", "2/0", "3/0"} {
		if !strings.Contains(s, want) {
			t.Errorf("200 draws never gave %s", want)
		}
	}
	fi, _ := newFaultInjector("", 0)
	if fi.seed == 0 {
		t.Error("seed 0 must pick a random seed")
	}
}

// rawGet sends a signed GET and returns the response or the transport error.
func rawGet(srv *Server, path string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Header.Set("X-Api-Key", acmeKey)
	req.Header.Set("Authorization", apiclient.Signature(acmeSecret, path, nil))
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: testHTTP.Timeout}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestFaultKinds(t *testing.T) {
	srv := startSandbox(t, Options{Seed: 1})
	c := srv.as(t, acmeKey, acmeSecret)

	for _, status := range []int{503, 429, 502} {
		if err := srv.Sandbox.SetFaults(fmt.Sprintf("%d=1", status)); err != nil {
			t.Fatal(err)
		}
		r := c.do("POST", plansPath, planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
		if r.status != status || r.header.Get("Retry-After") != "1" || len(r.errors()) != 1 {
			t.Errorf("%d fault: %d Retry-After %q %s", status, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	_ = srv.Sandbox.SetFaults("503=1,retry-after=0")
	if r := c.do("GET", plansPath, ""); r.header.Get("Retry-After") != "0" {
		t.Errorf("Retry-After %q, want 0", r.header.Get("Retry-After"))
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 0 {
		t.Fatalf("status faults must not run the request: %d plans", n)
	}

	_ = srv.Sandbox.SetFaults("reset=1")
	if _, _, err := rawGet(srv, plansPath); err == nil {
		t.Error("reset: the request got an answer")
	}
	req, _ := http.NewRequest("POST", srv.URL+plansPath, strings.NewReader(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`)))
	if _, err := testHTTP.Do(req); err == nil {
		t.Error("reset POST got an answer")
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 0 {
		t.Fatalf("reset must not run the request: %d plans", n)
	}

	_ = srv.Sandbox.SetFaults("lost=1")
	body := planBody(`"name":"lost","start_date":"2025-09-01","end_date":"2026-08-31"`)
	req, _ = http.NewRequest("POST", srv.URL+plansPath, strings.NewReader(body))
	req.Header.Set("X-Api-Key", acmeKey)
	req.Header.Set("Authorization", apiclient.Signature(acmeSecret, plansPath, []byte(body)))
	if resp, err := testHTTP.Do(req); err == nil {
		resp.Body.Close()
		t.Error("lost POST got an answer")
	}
	_ = srv.Sandbox.SetFaults("")
	plans := srv.Sandbox.Plans("acme")
	if len(plans) != 1 || plans[0].Name != "lost" {
		t.Fatalf("lost: the write must be committed, got %+v", plans)
	}
	st := srv.Sandbox.Stats()
	if st.Writes != 1 {
		t.Errorf("writes %d: only the lost POST succeeded", st.Writes)
	}
	if st.Requests != 7 {
		t.Errorf("requests %d, want 7 (faulted ones count)", st.Requests)
	}
	c.must(200, "GET", plansPath, "")
}

func TestFaultRates(t *testing.T) {
	srv := startSandbox(t, Options{Seed: 99, Faults: "503=0.25,429=0.25"})
	counts := map[int]int{}
	for i := 0; i < 400; i++ {
		resp, _, err := rawGet(srv, plansPath)
		if err != nil {
			t.Fatal(err)
		}
		counts[resp.StatusCode]++
	}
	for _, s := range []int{200, 503, 429} {
		if counts[s] < 60 {
			t.Errorf("status %d came %d times in 400 (counts %v)", s, counts[s], counts)
		}
	}
	if len(counts) != 3 {
		t.Errorf("unexpected statuses %v", counts)
	}
}

func TestStatsAndLatency(t *testing.T) {
	srv := startSandbox(t, Options{Faults: "503=1", Latency: 300 * time.Millisecond})
	c := srv.as(t, acmeKey, acmeSecret)
	// The stats endpoint is never delayed, faulted or counted.
	start := time.Now()
	var st Stats
	c.must(200, "GET", "/_sandbox/stats", "").decode(t, &st)
	if time.Since(start) > 250*time.Millisecond {
		t.Logf("stats took %v (latency must not apply)", time.Since(start))
	}
	if st.Requests != 0 || st.ByRoute == nil {
		t.Errorf("initial stats %+v", st)
	}
	_ = srv.Sandbox.SetFaults("")
	srv.Sandbox.SetLatency(200 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _, err := rawGet(srv, plansPath)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("GET: %v", err)
			}
		}()
	}
	wg.Wait()
	srv.Sandbox.SetLatency(0)
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`))
	c.must(200, "PATCH", targetPath(p, 0, 0), targetBody(`"number_of_african_male_top_managers":1`))
	c.must(422, "PATCH", targetPath(p, 0, 0), targetBody(`"number_of_african_male_top_managers":-1`))
	c.must(204, "DELETE", fmt.Sprintf("%s/%d", plansPath, p.ID), "")
	c.must(202, "PUT", scorecardsURL+"/scorecard_acme_2025/recalculate", "")
	c.must(404, "GET", scorecardsURL+"/scorecard_nope", "")

	resp, err := testHTTP.Get(srv.URL + "/_sandbox/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]any
	if err := jsonDecode(resp, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests", "writes", "max_in_flight", "by_route"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("stats JSON lacks %q: %v", k, raw)
		}
	}
	st = srv.Sandbox.Stats()
	want := Stats{Requests: 4 + 6, Writes: 4, ByRoute: map[string]int64{
		"GET /api/public/v1/employment_equity_plans":  4,
		"POST /api/public/v1/employment_equity_plans": 1,
		"PATCH /api/public/v1/employment_equity_plans/{plan_id}/employment_equity_milestones/{milestone_id}/employment_equity_targets/{target_id}": 2,
		"DELETE /api/public/v1/employment_equity_plans/{id}": 1,
		"PUT /api/public/v1/scorecards/{id}/recalculate":     1,
		"GET /api/public/v1/scorecards/{id}":                 1,
	}}
	if st.Requests != want.Requests || st.Writes != want.Writes || fmt.Sprint(st.ByRoute) != fmt.Sprint(want.ByRoute) {
		t.Errorf("stats %+v\nwant  %+v", st, want)
	}
	if st.MaxInFlight < 2 || st.MaxInFlight > 4 {
		t.Errorf("max_in_flight %d: 4 slow requests ran at once", st.MaxInFlight)
	}
	srv.Sandbox.ResetStats()
	if st := srv.Sandbox.Stats(); st.Requests != 0 || st.Writes != 0 || st.MaxInFlight != 0 || len(st.ByRoute) != 0 {
		t.Errorf("after reset %+v", st)
	}
	r := c.do("POST", "/_sandbox/stats", "")
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST stats: %d", r.status)
	}
}

func TestLatencyCutShortOnClose(t *testing.T) {
	srv, err := Start("127.0.0.1:0", Options{Latency: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := rawGet(srv, plansPath)
		errc <- err
	}()
	for waited := time.Duration(0); srv.Sandbox.Stats().Requests == 0; waited += 5 * time.Millisecond {
		select {
		case err := <-errc:
			_ = srv.Close()
			t.Fatalf("the request ended before the sandbox saw it: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if waited > 30*time.Second {
			_ = srv.Close()
			t.Fatal("the request never reached the sandbox")
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Error("a request delayed by an hour got an answer after Close")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end a request waiting for its latency")
	}
	if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("second Close: %v", err)
	}
}
