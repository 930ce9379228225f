package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
)

// TestStorePathInMissingFolderRefused: a state store (--state,
// EEPIPE_STATE, state: in the configuration), a lock file (--lock) or a
// lock folder (--lock-dir, EEPIPE_LOCK_DIR) inside a folder that does
// not exist is refused as an output file's (exit 2, naming the flag and
// the folder), before any request, and nothing is created: a mistyped
// path never starts an empty history nor takes a lock nobody else sees.
func TestStorePathInMissingFolderRefused(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	v1 := s.csv("v1.csv", cAMT, 1)
	missing := filepath.Join(e.dir, "typo2")
	stateCfg := filepath.Join(e.dir, "state.yaml")
	writeFile(t, stateCfg, "state: typo2/s.db\n", 0o600)
	// A lock file in --output-dir, which the run creates, is no mistake.
	out := filepath.Join(e.dir, "out")
	if r := e.run("export", "--output-dir", out, "--lock", filepath.Join(out, "l.lock")); r.code != 0 {
		t.Fatalf("export --output-dir with its lock inside: exit %d\n%s", r.code, r.err)
	}
	for _, tc := range []struct {
		name, flag string
		vars       map[string]string
		args       []string
	}{
		{"apply --state", "--state", nil, []string{"apply", v1, "--no-recalc", "--state", filepath.Join(missing, "s.db")}},
		{"apply EEPIPE_STATE", envState, map[string]string{envState: filepath.Join(missing, "s.db")}, []string{"apply", v1, "--no-recalc"}},
		{"apply state:", "state:", map[string]string{envState: ""}, []string{"--config", stateCfg, "apply", v1, "--no-recalc"}},
		{"diff --state", "--state", nil, []string{"diff", v1, "--state", filepath.Join(missing, "s.db")}},
		{"reconcile --state", "--state", nil, []string{"reconcile", v1, "--state", filepath.Join(missing, "s.db")}},
		{"apply --lock", "--lock", nil, []string{"apply", v1, "--no-recalc", "--lock", filepath.Join(missing, "l.lock")}},
		{"export --lock", "--lock", nil, []string{"export", "-o", filepath.Join(e.dir, "x.xlsx"), "--lock", filepath.Join(missing, "l.lock")}},
		{"apply --lock-dir", "--lock-dir", nil, []string{"apply", v1, "--no-recalc", "--lock-dir", filepath.Join(missing, "locks")}},
		{"apply EEPIPE_LOCK_DIR", envLockDir, map[string]string{envLockDir: filepath.Join(missing, "locks")}, []string{"apply", v1, "--no-recalc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := *e
			run.vars = map[string]string{}
			for k, v := range e.vars {
				run.vars[k] = v
			}
			for k, v := range tc.vars {
				run.vars[k] = v
			}
			s.srv.Sandbox.ResetStats()
			r := run.run(tc.args...)
			if r.code != ExitInvalid || !strings.Contains(r.err, tc.flag+" ") || !strings.Contains(r.err, "the folder "+missing+" does not exist; create it first") {
				t.Errorf("exit %d, want 2 naming %s and the folder:\n%s", r.code, tc.flag, r.err)
			}
			if n := s.srv.Sandbox.Stats().Requests; n != 0 {
				t.Errorf("%d requests sent before the refusal", n)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("%s was created (%v)", missing, err)
			}
		})
	}
}

// TestReadOnlyCommandsCreateNoStore: diff and reconcile given a store
// that does not exist compare without history, say so, and create
// nothing, as export and check do; apply creates it and says it is new.
func TestReadOnlyCommandsCreateNoStore(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	v1 := s.csv("v1.csv", cAMT, 1)
	store := filepath.Join(e.dir, "new.db")
	for _, args := range [][]string{{"--debug", "diff", v1}, {"reconcile", v1}, {"apply", v1, "--dry-run"}} {
		r := e.run(append(args, "--state", store)...)
		if r.code != ExitDiff || !strings.Contains(r.err, "there is no state store at "+store+", so there is no run history to compare with") ||
			!strings.Contains(r.err, "nothing was created") {
			t.Errorf("%v: exit %d, want 1 saying there is no store\n%s", args, r.code, r.err)
		}
		for _, p := range []string{store, store + "-wal", store + "-shm"} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("%v created %s (%v)", args, p, err)
			}
		}
	}
	// Commands that keep no history never open a store.
	e.vars[envState] = store
	if r := e.run("export", "-o", filepath.Join(e.dir, "x.xlsx")); r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.err)
	}
	if r := e.run("check", v1); r.code != 0 && r.code != ExitDiff { // 1: the targets are not shown to be met
		t.Fatalf("check: exit %d\n%s", r.code, r.err)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("export or check created %s (%v)", store, err)
	}
	r := e.run("apply", v1, "--no-recalc", "--state", store)
	if r.code != 0 || !strings.Contains(r.err, "the state store "+store+" does not exist: this run creates it, with no history") {
		t.Fatalf("apply into a new store: exit %d\n%s", r.code, r.err)
	}
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("apply did not create the store: %v", err)
	}
}

// TestNewStoreSaysSoBeforeTheFirstWrite: an apply into a store that
// holds no history of plans already on the service (a mistyped --state:
// a new file in an existing folder) warns, before its first write, that
// changes made on the service cannot be told apart from the file's, and
// says it again in the summary on the console, the JSON summary line and
// the run report's notes.
func TestNewStoreSaysSoBeforeTheFirstWrite(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	// A proxy in front of the sandbox, which looks at the run's log when
	// the first write arrives.
	target, err := url.Parse(s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var stderr atomic.Pointer[syncWriter]
	var warnedFirst, writes atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && writes.Add(1) == 1 {
			if sw := stderr.Load(); sw != nil {
				sw.mu.Lock()
				if strings.Contains(sw.w.String(), "holds no history of the") {
					warnedFirst.Store(1)
				}
				sw.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	e.vars[envBaseURL] = front.URL
	v1 := s.csv("v1.csv", cAMT, 1, cWFS, 2)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	s.serviceEdit("Stateful", cAMT, 10) // the client's edit, which the real store would hold back
	typo := filepath.Join(e.dir, "typo.db")
	report := filepath.Join(e.dir, "run.json")
	f, _, errb := e.factory()
	stderr.Store(f.IO.ErrOut.(*syncWriter))
	writes.Store(0)
	code := Execute(t.Context(), f, []string{"apply", s.csv("v2.csv", cAMT, 3, cWFS, 2), "--no-recalc", "--state", typo, "--report", report, "--log-format", "json"})
	out := errb.String()
	if code != 0 {
		t.Fatalf("apply into %s: exit %d\n%s", typo, code, out)
	}
	if writes.Load() == 0 || warnedFirst.Load() != 1 {
		t.Errorf("%d writes; the warning was logged before the first: %v\n%s", writes.Load(), warnedFirst.Load() == 1, out)
	}
	for _, w := range []string{"already exists on the service and the state store " + typo + " holds no history of the 1 change",
		"changes made on the service cannot be told apart from the file's"} {
		if !strings.Contains(out, w) {
			t.Errorf("the log lacks %q:\n%s", w, out)
		}
	}
	note := "1 change to 1 plan that already existed on the service had no history in the state store " + typo
	if !strings.Contains(out, "note: "+note) {
		t.Errorf("the printed summary lacks the note %q:\n%s", note, out)
	}
	sum := summaryLine(t, out)
	if sum["changes_without_history"] != float64(1) || !strings.Contains(strings.Join(anyStrings(sum["warnings"]), "\n"), note) {
		t.Errorf("the JSON summary: %v", sum)
	}
	var rep reports.RunReportJSON
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), note) {
		t.Errorf("the run report's notes %q lack %q", rep.Notes, note)
	}
	// With the right store the same file's change is held back, and
	// nothing is said about a missing history.
	s.serviceEdit("Stateful", cAMT, 10)
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != ExitDiff || strings.Contains(r.err, "holds no history") || !strings.Contains(r.err, "changed on the service since run 1") {
		t.Errorf("apply with the right store: exit %d\n%s", r.code, r.err)
	}
}

// anyStrings is a JSON list of strings as []string.
func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
