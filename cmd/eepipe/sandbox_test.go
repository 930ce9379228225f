package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

// lockedBuffer is a bytes.Buffer safe for the logger and the test at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sandboxTestHTTP is the HTTP client of these tests: a stuck request fails
// its test instead of hanging the package.
var sandboxTestHTTP = &http.Client{Timeout: 30 * time.Second}

// runSandboxCmd starts `eepipe <args>` in-process and returns the URL it
// printed, a stop function returning the exit code, and its stderr.
func runSandboxCmd(t *testing.T, args ...string) (url string, stop func() int, stderr *lockedBuffer) {
	t.Helper()
	pr, pw := io.Pipe()
	stderr = &lockedBuffer{}
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: pw, ErrOut: stderr}, Now: time.Now, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		code := Execute(ctx, f, args)
		pw.Close()
		done <- code
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, pr) // nothing more may come; keep the pipe drained
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(30 * time.Second):
			t.Fatalf("the sandbox did not stop within 30s of its context ending: %s", stderr.String())
			return -1
		}
	}
	select {
	case line, ok := <-lines:
		if !ok {
			code := stop()
			t.Fatalf("no line on stdout (exit %d): %s", code, stderr.String())
		}
		m := regexp.MustCompile(`^eepipe sandbox listening on (http://127\.0\.0\.1:[1-9][0-9]*)$`).FindStringSubmatch(line)
		if m == nil {
			stop()
			t.Fatalf("stdout line %q", line)
		}
		return m[1], stop, stderr
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("the sandbox did not report ready: %s", stderr.String())
	}
	return "", nil, nil
}

func TestSandboxCommand(t *testing.T) {
	url, stop, stderr := runSandboxCmd(t, "sandbox", "--listen", "127.0.0.1:0", "--fixtures", filepath.Join("..", "..", "testdata", "sandbox-fixtures.json"), "--recalc-duration", "1h", "--log-format", "json")

	// A signed call as acme, then the stats.
	req, _ := http.NewRequest("GET", url+"/api/public/v1/scorecards", nil)
	req.Header.Set("X-Api-Key", "mpk_sandbox_acme")
	req.Header.Set("Authorization", apiclient.Signature("sandbox-secret-acme", "/api/public/v1/scorecards", nil))
	resp, err := sandboxTestHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scorecards: %d", resp.StatusCode)
	}
	for i := 0; i < 2; i++ {
		req, _ = http.NewRequest("PUT", url+"/api/public/v1/scorecards/scorecard_acme_2025/recalculate", nil)
		req.Header.Set("X-Api-Key", "mpk_sandbox_acme")
		req.Header.Set("Authorization", apiclient.Signature("sandbox-secret-acme", "/api/public/v1/scorecards/scorecard_acme_2025/recalculate", nil))
		resp, err = sandboxTestHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := []int{202, 409}[i]; resp.StatusCode != want {
			t.Errorf("recalculate %d: %d, want %d (--recalc-duration)", i, resp.StatusCode, want)
		}
	}
	resp, err = sandboxTestHTTP.Get(url + "/_sandbox/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Requests    int64            `json:"requests"`
		Writes      int64            `json:"writes"`
		MaxInFlight int64            `json:"max_in_flight"`
		ByRoute     map[string]int64 `json:"by_route"`
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 3 || st.Writes != 1 || st.MaxInFlight != 1 || st.ByRoute["GET /api/public/v1/scorecards"] != 1 {
		t.Errorf("stats %+v", st)
	}
	if code := stop(); code != ExitOK {
		t.Errorf("exit %d after cancel: %s", code, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, "sandbox ready") || !strings.Contains(logs, "sandbox stopped") {
		t.Errorf("stderr: %s", logs)
	}
	for _, secret := range []string{"sandbox-secret-acme", "sandbox-secret-bluecrane", "sandbox-lookup-pass"} {
		if strings.Contains(logs, secret) {
			t.Errorf("a secret appears in the logs: %s", secret)
		}
	}
	if _, err := sandboxTestHTTP.Get(url + "/_sandbox/stats"); err == nil {
		t.Error("still serving after cancel")
	}
}

func TestSandboxCommandDefaults(t *testing.T) {
	var got *sandboxOptions
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, Now: time.Now}
	cmd := NewCmdSandbox(f, func(o *sandboxOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--faults", "503=0.1", "--seed", "7", "--latency", "5ms"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := sandboxOptions{Listen: "127.0.0.1:8080", RecalcDuration: 30 * time.Second, Faults: "503=0.1", Seed: 7, Latency: 5 * time.Millisecond}
	if *got != want {
		t.Errorf("options %+v, want %+v", *got, want)
	}
	// The built-in fixtures serve when --fixtures is not given.
	url, stop, _ := runSandboxCmd(t, "sandbox", "--listen", "127.0.0.1:0")
	defer stop()
	req, _ := http.NewRequest("GET", url+"/api/companies?vat_number=4012345678", nil)
	req.SetBasicAuth("consultant", "sandbox-lookup-pass")
	resp, err := sandboxTestHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Acme Foods (Pty) Ltd") {
		t.Errorf("company search: %d %s", resp.StatusCode, b)
	}
}

func TestSandboxCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"accounts":[{"name":"a","api_key":"k","secret":"s"}],"scorecards":[{"account":"zz","id":"scorecard_1"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sandbox", "--fixtures", bad}, ExitInvalid, `account "zz" is not one of the accounts`},
		{[]string{"sandbox", "--fixtures", filepath.Join(dir, "none.json")}, ExitInvalid, "none.json"},
		{[]string{"sandbox", "--faults", "503=2"}, ExitInvalid, "--faults"},
		{[]string{"sandbox", "--latency", "-1s"}, ExitInvalid, "--latency"},
		{[]string{"sandbox", "--listen", "127.0.0.1:notaport"}, ExitFatal, "listen"},
		{[]string{"sandbox", "extra"}, ExitInvalid, "unknown command"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now}
		code := Execute(context.Background(), f, tc.args)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: stdout %q", tc.args, out.String())
		}
	}
}

// TestSandboxSIGTERMChild is the child process of TestSandboxStopsOnSIGTERM:
// it runs eepipe's Main, with the real signal handling, when the parent
// asks for it, and is skipped otherwise.
func TestSandboxSIGTERMChild(t *testing.T) {
	if os.Getenv("EEPIPE_SANDBOX_SIGTERM_CHILD") != "1" {
		t.Skip("run by TestSandboxStopsOnSIGTERM")
	}
	os.Exit(Main([]string{"sandbox", "--listen", "127.0.0.1:0", "--log-format", "json"}, SystemIO()))
}

// TestSandboxStopsOnSIGTERM runs the sandbox as a real process and stops it
// with SIGTERM: one line on stdout, serving, then a clean exit 0 with the
// stop logged on stderr.
func TestSandboxStopsOnSIGTERM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSandboxSIGTERMChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EEPIPE_SANDBOX_SIGTERM_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		_ = cmd.Wait()
		t.Fatalf("no line on stdout; stderr: %s", stderr.String())
	}
	line := sc.Text()
	m := regexp.MustCompile(`^eepipe sandbox listening on (http://127\.0\.0\.1:[1-9][0-9]*)$`).FindStringSubmatch(line)
	if m == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("stdout line %q", line)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(m[1] + "/_sandbox/stats")
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr: %s", err, stderr.String())
	}
	// The test framework's own "PASS" may follow; the sandbox wrote nothing more.
	if extra := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest)), "PASS")); extra != "" {
		t.Errorf("more on stdout after the ready line: %q", rest)
	}
	if logs := stderr.String(); !strings.Contains(logs, "sandbox stopped") {
		t.Errorf("stderr does not log the stop: %s", logs)
	}
	if _, err := hc.Get(m[1] + "/_sandbox/stats"); err == nil {
		t.Error("still serving after SIGTERM")
	}
}

// parseExports reads the active (uncommented) export lines of a shell file
// written by --write-env: NAME='value' pairs, single-quoted.
func parseExports(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		for rest != "" && !strings.HasPrefix(rest, "#") {
			name, after, ok := strings.Cut(rest, "='")
			if !ok {
				t.Fatalf("export line %q", line)
			}
			var val strings.Builder
			for {
				i := strings.IndexByte(after, '\'')
				if i < 0 {
					t.Fatalf("unterminated quote in %q", line)
				}
				val.WriteString(after[:i])
				after = after[i+1:]
				if strings.HasPrefix(after, `\''`) {
					val.WriteByte('\'')
					after = after[3:]
					continue
				}
				break
			}
			out[strings.TrimSpace(name)] = val.String()
			rest = strings.TrimSpace(after)
		}
	}
	return out
}

func TestSandboxCommandWritesEnv(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "sandbox.env")
	url, stop, stderr := runSandboxCmd(t, "sandbox", "--listen", "127.0.0.1:0", "--write-env", envFile, "--account", "bluecrane", "--latency", "5ms", "--log-format", "json")
	defer stop()
	st, err := os.Stat(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(envFile)
	env := parseExports(t, string(b))
	want := map[string]string{
		"EEPIPE_BASE_URL": url, "EEPIPE_LOOKUP_URL": url,
		"EEPIPE_LOOKUP_USERNAME": "consultant", "EEPIPE_LOOKUP_PASSWORD": "sandbox-lookup-pass",
		"EEPIPE_API_KEY": "mpk_sandbox_bluecrane", "EEPIPE_API_SECRET": "sandbox-secret-bluecrane",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if len(env) != len(want) {
		t.Errorf("exports %v, want exactly %v", env, want)
	}
	if !strings.Contains(string(b), "# export EEPIPE_API_KEY='mpk_sandbox_acme' EEPIPE_API_SECRET='sandbox-secret-acme'") {
		t.Errorf("the other account's pair is not offered as a comment:\n%s", b)
	}

	// The configuration reads these variables, and they work against the
	// sandbox: the plan API with the key pair, the lookup with the user.
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, Now: time.Now, Getenv: func(k string) string { return env[k] }}
	cfg, err := loadConfig(f, connFlags{}, configNeeds{Plans: true, Lookup: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != url || len(cfg.Accounts) != 1 || cfg.Accounts[0].APIKey != "mpk_sandbox_bluecrane" || cfg.Lookup.Password != "sandbox-lookup-pass" {
		t.Fatalf("configuration from the exports: %s", cfg)
	}
	c, err := apiclient.New(apiclient.Options{BaseURL: cfg.BaseURL, APIKey: cfg.Accounts[0].APIKey, APISecret: cfg.Accounts[0].APISecret,
		LookupURL: cfg.Lookup.URL, LookupUsername: cfg.Lookup.Username, LookupPassword: cfg.Lookup.Password, HTTPClient: sandboxTestHTTP})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if sc, err := c.ListScorecards(ctx); err != nil || len(sc) != 1 || sc[0].ID != "scorecard_bluecrane_2025" {
		t.Errorf("scorecards with the exported pair: %v %+v", err, sc)
	}
	if cs, err := c.SearchCompanies(ctx, apiclient.CompanyQuery{VATNumber: "4098765432"}); err != nil || len(cs) != 1 {
		t.Errorf("lookup with the exported user: %v %+v", err, cs)
	}

	// Off a terminal stderr holds JSON log lines only, without secrets;
	// durations carry their unit.
	logs := stderr.String()
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %q", line)
		}
	}
	if strings.Contains(logs, "sandbox-secret") || strings.Contains(logs, "sandbox-lookup-pass") {
		t.Error("a secret appears in the logs")
	}
	if !strings.Contains(logs, `"latency":"5ms"`) || !strings.Contains(logs, `"recalc_duration":"30s"`) {
		t.Errorf("durations without units in %s", logs)
	}
}

func TestSandboxCommandPrintsEnvOnATerminal(t *testing.T) {
	stderr := &lockedBuffer{}
	pr, pw := io.Pipe()
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: pw, ErrOut: stderr, ErrTTY: true}, Now: time.Now, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, f, []string{"sandbox", "--listen", "127.0.0.1:0"})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("no ready line: %s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url := strings.TrimPrefix(sc.Text(), "eepipe sandbox listening on ")
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d", code)
	}
	env := parseExports(t, stderr.String())
	if env["EEPIPE_BASE_URL"] != url || env["EEPIPE_API_KEY"] != "mpk_sandbox_acme" || env["EEPIPE_API_SECRET"] != "sandbox-secret-acme" {
		t.Errorf("exports on the terminal %v (url %s)", env, url)
	}
}

func TestSandboxCommandUnknownAccount(t *testing.T) {
	var out, errb bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now}
	code := Execute(context.Background(), f, []string{"sandbox", "--listen", "127.0.0.1:0", "--account", "nobody"})
	if code != ExitInvalid || !strings.Contains(errb.String(), `no account "nobody"`) || !strings.Contains(errb.String(), "acme") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
