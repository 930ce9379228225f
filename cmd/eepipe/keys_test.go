package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/eepipe/eepipe/pipeline/keyrotate"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// keysEnv is a sandbox over HTTP on 127.0.0.1 behind a switch that fails
// chosen requests (fail), and a configuration of two accounts with
// comments: acme's secret in a file, with its key's id; bluecrane's in the
// environment, its key's id unknown.
type keysEnv struct {
	t      *testing.T
	sb     *sandbox.Sandbox
	url    string
	dir    string
	config string
	secret string // acme's secret file
	vars   map[string]string

	mu   sync.Mutex
	fail func(r *http.Request) int // a status to answer instead of the sandbox; 0 passes
}

const keysConfig = `# eepipe configuration of the key tests
base_url: %s   # the sandbox
accounts:
  # the first account, its secret in a file
  - name: acme
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme   # rotated by eepipe keys rotate
    api_key_id: 1
    api_secret_file: acme.secret
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: CRANE_SECRET
`

func newKeysEnv(t *testing.T, opts sandbox.Options) *keysEnv {
	t.Helper()
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &keysEnv{t: t, sb: sb, dir: t.TempDir(), vars: map[string]string{"CRANE_SECRET": "sandbox-secret-bluecrane"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		fail := e.fail
		e.mu.Unlock()
		if fail != nil {
			if st := fail(r); st != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(st)
				fmt.Fprintf(w, `{"errors":["%d injected by the test"]}`, st)
				return
			}
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	e.config = filepath.Join(e.dir, "eepipe.yaml")
	e.secret = filepath.Join(e.dir, "acme.secret")
	writeFile(t, e.config, fmt.Sprintf(keysConfig, srv.URL), 0o600)
	writeFile(t, e.secret, "sandbox-secret-acme\n", 0o600)
	return e
}

func (e *keysEnv) failWith(f func(r *http.Request) int) {
	e.mu.Lock()
	e.fail = f
	e.mu.Unlock()
}

// run runs eepipe with the configuration and args; hook, when set,
// changes keys rotate's options (what the command line cannot).
func (e *keysEnv) run(hook func(*keysRotateOptions), args ...string) result {
	e.t.Helper()
	var out, errb strings.Builder
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now,
		Getenv: testGetenv(e.dir, e.vars), ConfigPath: e.config}
	if hook == nil {
		code := Execute(context.Background(), f, append([]string{"--config", e.config}, args...))
		return result{code, out.String(), errb.String()}
	}
	cmd := NewCmdKeysRotate(f, func(o *keysRotateOptions) error {
		hook(o)
		return runKeysRotate(context.Background(), f, o)
	})
	code := executeCmd(context.Background(), cmd, f, args[2:]) // after "keys rotate"
	return result{code, out.String(), errb.String()}
}

func (e *keysEnv) read(path string) string {
	e.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// works fails the test unless the configuration as it is on disk reads
// the service with every account's key pair (keys status: exit 0), and
// returns acme's key as the configuration holds it.
func (e *keysEnv) works(when string) string {
	e.t.Helper()
	e.failWith(nil)
	r := e.run(nil, "keys", "status", "--json")
	if r.code != 0 {
		e.t.Fatalf("%s: the configuration left behind does not work: keys status exit %d\n%s\n%s", when, r.code, r.out, r.err)
	}
	m := regexp.MustCompile(`(?m)^    api_key: (\S+)`).FindStringSubmatch(e.read(e.config))
	if m == nil {
		e.t.Fatalf("%s: no api_key in\n%s", when, e.read(e.config))
	}
	return m[1]
}

// keyWorks reports whether the sandbox accepts the pair.
func (e *keysEnv) keyWorks(key, secret string) bool {
	e.t.Helper()
	c, err := apiclient.New(apiclient.Options{BaseURL: e.url, APIKey: key, APISecret: secret})
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = c.ListScorecards(context.Background())
	var ae *apiclient.APIError
	if err != nil && !(errors.As(err, &ae) && ae.StatusCode == 401) {
		e.t.Fatal(err)
	}
	return err == nil
}

// TestKeysRotateSecretFile: a rotation of an account whose secret is in a
// file creates the new key, replaces the secret file (0600) and the
// configuration's api_key and api_key_id in place (comments and the rest
// byte for byte), revokes the old key by its configured id, and prints no
// secret; a second rotation revokes the first one's key by the id it wrote.
func TestKeysRotateSecretFile(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	before := e.read(e.config)
	r := e.run(nil, "keys", "rotate", "--account", "ACME", "--expires-in", "90d")
	if r.code != 0 || !strings.Contains(r.err, "The old key mpk_…x_acme (id 1) was revoked.") || r.out != "" {
		t.Fatalf("exit %d\nstdout %q\n%s", r.code, r.out, r.err)
	}
	secret := strings.TrimSpace(e.read(e.secret))
	if st, _ := os.Stat(e.secret); st.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v", st.Mode())
	}
	newKey := e.works("after the rotation")
	after := e.read(e.config)
	want := strings.Replace(before, "api_key: mpk_sandbox_acme   # rotated by eepipe keys rotate\n    api_key_id: 1\n",
		"api_key: "+newKey+"   # rotated by eepipe keys rotate\n    api_key_id: 3\n", 1)
	if after != want {
		t.Errorf("configuration after the rotation:\n%s\nwant\n%s", after, want)
	}
	if !e.keyWorks(newKey, secret) || e.keyWorks("mpk_sandbox_acme", "sandbox-secret-acme") {
		t.Error("the new key does not work, or the old one still does")
	}
	if strings.Contains(r.err+r.out, secret) || strings.Contains(r.err, newKey) {
		t.Errorf("the run shows the new secret or the whole key:\n%s", r.err)
	}
	// The second rotation knows the first one's key by its id.
	r = e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != 0 || !strings.Contains(r.err, "(id 3) was revoked") || !strings.Contains(r.err, "never expires") {
		t.Fatalf("second rotation: exit %d\n%s", r.code, r.err)
	}
	e.works("after the second rotation")
	if e.keyWorks(newKey, secret) {
		t.Error("the first rotation's key still works")
	}
}

// TestKeysRotateEnvironmentSecret: a secret from the environment is
// printed once on stdout with the variable to set; the configuration's
// api_key is changed; the old key, whose id nobody knows, is left active
// with the advice to revoke it in the web application (exit 1). With the
// variable set, the configuration works.
func TestKeysRotateEnvironmentSecret(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	r := e.run(nil, "keys", "rotate", "--account", "bluecrane")
	m := regexp.MustCompile(`^CRANE_SECRET=(\S+)\n$`).FindStringSubmatch(r.out)
	if r.code != ExitDiff || m == nil || !strings.Contains(r.err, "set CRANE_SECRET to the new secret") ||
		!strings.Contains(r.err, "revoke it in the web application") {
		t.Fatalf("exit %d\nstdout %q\n%s", r.code, r.out, r.err)
	}
	if strings.Contains(r.err, m[1]) {
		t.Error("the secret is on stderr too")
	}
	e.vars["CRANE_SECRET"] = m[1]
	e.works("with the new secret in the environment")
	if !e.keyWorks("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane") {
		t.Error("the old key was revoked though its id is unknown")
	}
	// The state store kept the new key's id: the next rotation revokes it.
	r = e.run(nil, "keys", "rotate", "--account", "bluecrane")
	if r.code != 0 || !strings.Contains(r.err, "was revoked") {
		t.Fatalf("second rotation: exit %d\n%s", r.code, r.err)
	}
}

// TestKeysRotateFailures injects a failure at each step of a rotation and
// checks that the configuration left behind holds a working key, that
// the run names it, and the exit status.
func TestKeysRotateFailures(t *testing.T) {
	isNewKey := func(r *http.Request) bool {
		k := r.Header.Get("X-Api-Key")
		return k != "" && k != "mpk_sandbox_acme" && k != "mpk_sandbox_bluecrane"
	}
	for _, tc := range []struct {
		name     string
		fail     func(r *http.Request) int
		hook     func(o *keysRotateOptions)
		code     int
		newKey   bool // the configuration ends on the new key
		messages []string
	}{
		{name: "create", fail: func(r *http.Request) int {
			if r.Method == http.MethodPost {
				return 422
			}
			return 0
		}, code: ExitFatal, messages: []string{"could not create the new key", "The active key of account acme is mpk_…x_acme."}},
		{name: "config write", hook: func(o *keysRotateOptions) {
			o.WriteFile = func(path string, write func(io.Writer) error) error {
				if strings.HasSuffix(path, "eepipe.yaml") {
					return errors.New("disk full (injected)")
				}
				return atomicWrite(path, write)
			}
		}, code: ExitFatal, messages: []string{"could not store the new key in the configuration", "disk full", "was revoked", "The active key of account acme is mpk_…x_acme."}},
		{name: "check read", fail: func(r *http.Request) int {
			if r.Method == http.MethodGet && isNewKey(r) {
				return 401
			}
			return 0
		}, code: ExitFatal, messages: []string{"could not check the new key with a read", "was revoked", "The active key of account acme is mpk_…x_acme."}},
		{name: "revoke", fail: func(r *http.Request) int {
			if r.Method == http.MethodDelete && isNewKey(r) {
				return 403
			}
			return 0
		}, code: ExitDiff, newKey: true, messages: []string{"could not revoke the old key", "(id 1) is still active"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newKeysEnv(t, sandbox.Options{})
			before, secretBefore := e.read(e.config), e.read(e.secret)
			e.failWith(tc.fail)
			args := []string{"keys", "rotate", "--account", "acme"}
			r := e.run(tc.hook, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tc.code, r.err)
			}
			for _, m := range tc.messages {
				if !strings.Contains(r.err, m) {
					t.Errorf("stderr lacks %q:\n%s", m, r.err)
				}
			}
			key := e.works("after the failure")
			if tc.newKey {
				if key == "mpk_sandbox_acme" || !strings.Contains(r.err, "The active key of account acme is "+maskKey(key)) {
					t.Errorf("configuration on %s; stderr\n%s", key, r.err)
				}
				if !e.keyWorks("mpk_sandbox_acme", "sandbox-secret-acme") {
					t.Error("the old key was revoked")
				}
				return
			}
			if after := e.read(e.config); after != before || e.read(e.secret) != secretBefore {
				t.Errorf("the configuration or its secret changed:\n%s", after)
			}
		})
	}
}

// atomicWrite is the writer keys rotate uses by default.
func atomicWrite(path string, write func(io.Writer) error) error {
	return (&configSwitch{opts: &keysRotateOptions{}}).writeWith(path, write)
}

// TestKeysRotateLocked: while another run holds the account's lock, a
// rotation is refused before any request (exit 3) and changes nothing.
func TestKeysRotateLocked(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	held, err := filelock.Dir{Path: filepath.Join(e.dir, "locks")}.Lock(context.Background(),
		pipeline.AccountLockKey("mpk_sandbox_acme"), pipeline.LockInfo{Command: "eepipe keys rotate --account acme", User: "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	before := e.read(e.config)
	var requests int
	e.failWith(func(*http.Request) int { requests++; return 0 })
	r := e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != ExitFatal || !strings.Contains(r.err, "another eepipe run holds the lock of account acme") || requests != 0 {
		t.Fatalf("exit %d, %d requests\n%s", r.code, requests, r.err)
	}
	if e.read(e.config) != before {
		t.Error("the configuration changed")
	}
}

// TestKeysStatus: each account's expiry as the headers state it, as a
// table and as JSON; a key that expires within 30 days makes exit 1, as
// does a refused one.
func TestKeysStatus(t *testing.T) {
	fx := sandbox.DefaultFixtures()
	now := time.Now().UTC()
	fx.Accounts[1].ExpiresAt = now.Add(12*24*time.Hour + time.Hour).Format(time.RFC3339)
	e := newKeysEnv(t, sandbox.Options{Fixtures: fx})
	r := e.run(nil, "keys", "status")
	if r.code != ExitDiff || !regexp.MustCompile(`acme\s+mpk_…x_acme\s+ok\s+never\s+-`).MatchString(r.out) ||
		!regexp.MustCompile(`bluecrane\s+mpk_…ecrane\s+expires soon\s+\S+Z\s+12d`).MatchString(r.out) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	r = e.run(nil, "keys", "status", "--json")
	var doc struct {
		Accounts []keyStatus `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Accounts) != 2 {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if a := doc.Accounts[1]; a.Status != "expires soon" || a.ExpiresIn != "12d" || a.Expires == "" {
		t.Errorf("bluecrane: %+v", a)
	}
	e.vars["CRANE_SECRET"] = "wrong"
	r = e.run(nil, "keys", "status", "--json")
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil || doc.Accounts[1].Status != "refused" || r.code != ExitDiff {
		t.Errorf("refused key: exit %d %+v", r.code, doc.Accounts)
	}
}

// TestKeysRotateWrongKeyID: an api_key_id that is not the old key's is
// caught: another account's id is not found (the old key stays active,
// exit 1); another key of the account is revoked, and the old key still
// working afterwards says so (exit 1), the configuration on the new key.
// The state store's id, when it knows the key, wins over the file's.
func TestKeysRotateWrongKeyID(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	writeFile(t, e.config, strings.Replace(e.read(e.config), "api_key_id: 1", "api_key_id: 2", 1), 0o600) // bluecrane's key
	r := e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != ExitDiff || !strings.Contains(r.err, "could not revoke the old key") || !strings.Contains(r.err, "404") {
		t.Fatalf("another account's id: exit %d\n%s", r.code, r.err)
	}
	e.works("after a revoke of another account's id")
	if !e.keyWorks("mpk_sandbox_acme", "sandbox-secret-acme") || !e.keyWorks("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane") {
		t.Fatal("a key was revoked")
	}

	e = newKeysEnv(t, sandbox.Options{})
	spare, err := apiclient.New(apiclient.Options{BaseURL: e.url, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		t.Fatal(err)
	}
	extra, err := spare.CreateAPIKey(context.Background(), "") // id 3, someone else's key of acme
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, e.config, strings.Replace(e.read(e.config), "api_key_id: 1", fmt.Sprintf("api_key_id: %d", extra.ID), 1), 0o600)
	r = e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != ExitDiff || !strings.Contains(r.err, "is not refused: it still works") || !strings.Contains(r.err, "was not the old key's") {
		t.Fatalf("another key's id: exit %d\n%s", r.code, r.err)
	}
	e.works("after revoking the wrong key")
}

// TestKeysRotateRefusedAfterSwitch: a second rotation started once the
// first has switched the configuration to its new key (and so reads that
// key) is refused as long as the first runs, through the new key's lock;
// the first ends with its new key active and the old one revoked.
func TestKeysRotateRefusedAfterSwitch(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	var second result
	hook := func(o *keysRotateOptions) {
		o.WriteFile = func(path string, write func(io.Writer) error) error {
			if err := atomicWrite(path, write); err != nil {
				return err
			}
			if strings.HasSuffix(path, "eepipe.yaml") && second.err == "" {
				second = e.run(nil, "keys", "rotate", "--account", "acme")
			}
			return nil
		}
	}
	r := e.run(hook, "keys", "rotate", "--account", "acme")
	if r.code != 0 {
		t.Fatalf("first rotation: exit %d\n%s", r.code, r.err)
	}
	if second.code != ExitFatal || !strings.Contains(second.err, "another eepipe run holds the lock of account acme") {
		t.Fatalf("second rotation: exit %d, want 3 (the lock held)\n%s", second.code, second.err)
	}
	key := e.works("after the rotation")
	if key == "mpk_sandbox_acme" || !strings.Contains(r.err, "rotated: the active key is "+maskKey(key)) {
		t.Errorf("configuration on %s; stderr\n%s", key, r.err)
	}
	if e.keyWorks("mpk_sandbox_acme", "sandbox-secret-acme") {
		t.Error("the old key was not revoked")
	}
}

// TestKeysRotateKeepsTheServiceAddress: a rotation through an address
// other than the one the key pair's run history is under is refused
// before any request (exit 2), as apply is; through the history's address
// the new key takes the address over, so a run with it through the other
// address is refused too.
func TestKeysRotateKeepsTheServiceAddress(t *testing.T) {
	for _, tc := range []struct {
		name, history string
		code          int
	}{{"another address", "http://eepipe-elsewhere.invalid", ExitInvalid}, {"its address", "", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newKeysEnv(t, sandbox.Options{})
			history := first(tc.history, e.url)
			ctx := context.Background()
			st, err := statestore.OpenWith(ctx, filepath.Join(e.dir, "state.db"), testStoreOptions)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), User: "ann", Host: "lap", Command: "eepipe apply",
				Service: pipeline.ServiceKey(history), Keys: []string{pipeline.AccountLockKey("mpk_sandbox_acme")}}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			before := e.read(e.config)
			var requests int
			e.failWith(func(*http.Request) int { requests++; return 0 })
			r := e.run(nil, "keys", "rotate", "--account", "acme")
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tc.code, r.err)
			}
			if tc.code != 0 {
				if requests != 0 || e.read(e.config) != before || !strings.Contains(r.err, "same_service_as: "+history) {
					t.Fatalf("%d requests, configuration changed: %v\n%s", requests, e.read(e.config) != before, r.err)
				}
				return
			}
			key := e.works("after the rotation")
			st, err = statestore.OpenWith(ctx, filepath.Join(e.dir, "state.db"), testStoreOptions)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			got, err := st.KeyServices(ctx, []string{pipeline.AccountLockKey(key)})
			if err != nil || got[pipeline.AccountLockKey(key)] != pipeline.ServiceKey(e.url) {
				t.Fatalf("the new key's address: %v (%v), want %s", got, err, pipeline.ServiceKey(e.url))
			}
		})
	}
}

// TestKeysRotateNamesAKeyLeftActive: a rotation stopped before its revoke
// leaves the old key active; the next rotation names it with its id (the
// configuration's api_key_id, which the switch replaced), then rotates.
func TestKeysRotateNamesAKeyLeftActive(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	e.failWith(func(r *http.Request) int {
		if r.Method == http.MethodDelete {
			return 503
		}
		return 0
	})
	if r := e.run(nil, "keys", "rotate", "--account", "acme"); r.code != ExitDiff {
		t.Fatalf("first rotation: exit %d, want 1\n%s", r.code, r.err)
	}
	e.works("after the first rotation")
	r := e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != 0 || !strings.Contains(r.err, "the key mpk_…x_acme (id 1) of account acme is not known revoked") {
		t.Fatalf("second rotation: exit %d\n%s", r.code, r.err)
	}
	if !e.keyWorks("mpk_sandbox_acme", "sandbox-secret-acme") {
		t.Error("the key left active was revoked without being asked")
	}
}

// TestKeysRotateRepairsAHalfWrittenSwitch: a rotation killed between its
// two writes leaves the new secret in the secret file beside the old key
// in the configuration, a pair the service refuses; the next rotation
// finds the key that secret belongs to in the state store, puts it in the
// configuration and says so (exit 3: nothing rotated), and the one after
// rotates.
func TestKeysRotateRepairsAHalfWrittenSwitch(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	hook := func(o *keysRotateOptions) {
		o.WriteFile = func(path string, write func(io.Writer) error) error {
			if strings.HasSuffix(path, "eepipe.yaml") {
				panic("killed between the secret file and the configuration")
			}
			return atomicWrite(path, write)
		}
	}
	func() {
		defer func() { _ = recover() }()
		e.run(hook, "keys", "rotate", "--account", "acme")
	}()
	if e.read(e.secret) == "sandbox-secret-acme\n" {
		t.Fatal("the killed rotation did not write the secret file")
	}
	r := e.run(nil, "keys", "rotate", "--account", "acme")
	if r.code != ExitFatal || !strings.Contains(r.err, "which an interrupted rotation created: the configuration now holds that key") {
		t.Fatalf("after the kill: exit %d\n%s", r.code, r.err)
	}
	key := e.works("after the repair")
	if key == "mpk_sandbox_acme" || !strings.Contains(r.err, "The active key of account acme is "+maskKey(key)) {
		t.Errorf("configuration on %s\n%s", key, r.err)
	}
	if r := e.run(nil, "keys", "rotate", "--account", "acme"); r.code != 0 || !strings.Contains(r.err, "(id 1) of account acme is not known revoked") {
		t.Errorf("the rotation after the repair: exit %d\n%s", r.code, r.err)
	}
}

// TestKeysSwitchPrintsOnlyNewSecrets: a switch to a key pair whose secret
// the environment already holds (the repair of a half-written switch)
// prints no secret; a new secret is printed once.
func TestKeysSwitchPrintsOnlyNewSecrets(t *testing.T) {
	e := newKeysEnv(t, sandbox.Options{})
	var out strings.Builder
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard}, Now: time.Now,
		Getenv: testGetenv(e.dir, e.vars), ConfigPath: e.config}
	cfg, err := loadConfig(f, connFlags{}, configNeeds{Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := rotatedAccount(cfg, "bluecrane")
	if err != nil {
		t.Fatal(err)
	}
	s := &configSwitch{f: f, opts: &keysRotateOptions{}, account: a, lockNew: func(string) error { return nil }}
	same := keyrotate.Created{ID: 2, Pair: keyrotate.Pair{Key: "mpk_other_bluecrane", Secret: a.APISecret}}
	if _, _, err := s.Switch(context.Background(), same); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), a.APISecret) {
		t.Errorf("the secret the environment holds was printed:\n%s", out.String())
	}
	if _, _, err := s.Switch(context.Background(), keyrotate.Created{ID: 3, Pair: keyrotate.Pair{Key: "mpk_new_bluecrane", Secret: "brand-new"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "CRANE_SECRET=brand-new") != 1 {
		t.Errorf("the new secret was not printed once:\n%s", out.String())
	}
}
