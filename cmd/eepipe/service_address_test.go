package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline/statestore/statestoretest"
)

// addressEnv runs eepipe with a configuration file of acme alone (the
// environment gives no base URL or key), reaching the sandbox of s at
// one address or another.
type addressEnv struct {
	*stateEnv
	byFile env
	ip     string // http://127.0.0.1:PORT
	host   string // http://localhost:PORT: the same sandbox
}

func newAddressEnv(t *testing.T, s *stateEnv) *addressEnv {
	a := &addressEnv{stateEnv: s, byFile: *s.env, ip: s.srv.URL, host: strings.Replace(s.srv.URL, "127.0.0.1", "localhost", 1)}
	a.byFile.vars = map[string]string{"ACME_SECRET": "sandbox-secret-acme", envLockDir: filepath.Join(s.dir, "locks")}
	return a
}

// config writes a configuration reaching the sandbox at base, with
// same_service_as: sameAs when given.
func (a *addressEnv) config(name, base, sameAs string) string {
	body := "base_url: " + base + "\n"
	if sameAs != "" {
		body += "same_service_as: " + sameAs + "\n"
	}
	body += "accounts:\n  - name: acme\n    api_key: mpk_sandbox_acme\n    api_secret_env: ACME_SECRET\n"
	path := filepath.Join(a.dir, name)
	writeFile(a.t, path, body, 0o600)
	return path
}

// eepipeWith runs eepipe with the configuration cfg and the test's store.
func (a *addressEnv) eepipeWith(cfg string, args ...string) result {
	a.t.Helper()
	return a.byFile.run(append(append([]string{"--config", cfg}, args...), "--state", a.state)...)
}

// TestOneServiceTwoAddressesInTurn: a key pair applied through
// http://127.0.0.1:PORT and then through http://localhost:PORT (one
// sandbox) never gets a second history: the second apply (and a diff)
// exits 2 before any write, naming both addresses and same_service_as,
// and the client's edit on the service stays; declared the same
// (same_service_as), the second apply uses the first history and holds
// the edit back.
func TestOneServiceTwoAddressesInTurn(t *testing.T) {
	testTwoAddressesInTurn(t, newStateEnv(t, ""))
}

// TestOneServiceTwoAddressesInTurnPostgres is
// TestOneServiceTwoAddressesInTurn with a PostgreSQL store.
func TestOneServiceTwoAddressesInTurnPostgres(t *testing.T) {
	testTwoAddressesInTurn(t, newStateEnv(t, statestoretest.PostgresURL(t)))
}

func testTwoAddressesInTurn(t *testing.T, s *stateEnv) {
	a := newAddressEnv(t, s)
	sb := s.srv.Sandbox
	v1 := s.csv("v1.csv", cAMT, 84, cWFS, 2)
	if r := a.eepipeWith(a.config("ip.yaml", a.ip, ""), "apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply through %s: exit %d\n%s", a.ip, r.code, r.err)
	}
	s.serviceEdit("Stateful", cAMT, 91) // the client's edit
	host := a.config("host.yaml", a.host, "")
	for _, cmd := range []string{"apply", "diff"} {
		sb.ResetStats()
		args := []string{cmd, v1}
		if cmd == "apply" {
			args = append(args, "--no-recalc")
		}
		r := a.eepipeWith(host, args...)
		if r.code != ExitInvalid || sb.Stats().Writes != 0 {
			t.Fatalf("%s through %s: exit %d, %d writes; want 2 and none\n%s", cmd, a.host, r.code, sb.Stats().Writes, r.err)
		}
		for _, w := range []string{"under the service address " + a.ip, "reaches the service at " + a.host, `"same_service_as: ` + a.ip + `"`, "nothing was sent"} {
			if !strings.Contains(r.err, w) {
				t.Errorf("%s: the refusal lacks %q:\n%s", cmd, w, r.err)
			}
		}
		if strings.Contains(r.err, "sandbox-secret") {
			t.Errorf("%s: the refusal shows the secret:\n%s", cmd, r.err)
		}
	}
	s.want("Stateful", cAMT, 91)
	if r := s.eepipe("history"); !strings.Contains(r.out, "\n1 run.\n") {
		t.Fatalf("a refused run was recorded:\n%s", r.out)
	}
	sb.ResetStats()
	same := a.config("same.yaml", a.host, a.ip)
	r := a.eepipeWith(same, "apply", v1, "--no-recalc")
	if r.code != ExitDiff || sb.Stats().Writes != 0 || !strings.Contains(r.err, "changed on the service since run 1") {
		t.Fatalf("apply through %s declared the same as %s: exit %d, %d writes; want 1, none, the edit held\n%s", a.host, a.ip, r.code, sb.Stats().Writes, r.err)
	}
	s.want("Stateful", cAMT, 91)
	if r := s.eepipe("history"); !strings.Contains(r.out, "\n2 runs.\n") {
		t.Fatalf("history after the declared run:\n%s", r.out)
	}
}

// TestOneServiceTwoAddressesAtOnce: the applies of one file of new plans
// through the two addresses at once take one lock (the key pair's),
// whatever the address: one waits for the other and creates nothing
// twice. Undeclared, the one that waited then exits 2; declared the same,
// it finds the plans in sync.
func TestOneServiceTwoAddressesAtOnce(t *testing.T) {
	testTwoAddressesAtOnce(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") }, false)
}

// TestOneServiceTwoAddressesAtOncePostgres: as
// TestOneServiceTwoAddressesAtOnce with a PostgreSQL store and a lock
// folder per run, as on two hosts: only the store's lock of the key pair
// keeps them apart.
func TestOneServiceTwoAddressesAtOncePostgres(t *testing.T) {
	testTwoAddressesAtOnce(t, func(t *testing.T) string { return statestoretest.PostgresURL(t) }, true)
}

// testTwoAddressesAtOnce runs the applies at once, each time into a new
// store (newStore) so that either may be the first.
func testTwoAddressesAtOnce(t *testing.T, newStore func(*testing.T) string, twoHosts bool) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 20 * time.Millisecond}, newStore(t))
	a := newAddressEnv(t, s)
	sb := s.srv.Sandbox
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared %v", declared), func(t *testing.T) {
			s.state = newStore(t)
			prefix := fmt.Sprintf("Twice %v", declared)
			file := writeCSV(t, filepath.Join(s.dir, prefix+".csv"), concurrentRows(prefix, 6))
			sameAs := ""
			if declared {
				sameAs = a.ip
			}
			configs := []string{a.config("ip.yaml", a.ip, ""), a.config("host.yaml", a.host, sameAs)}
			results := make([]result, 2)
			var wg sync.WaitGroup
			for i, cfg := range configs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					lockDir := filepath.Join(s.dir, "locks")
					if twoHosts {
						lockDir = filepath.Join(s.dir, fmt.Sprintf("host%d", i))
					}
					results[i] = a.eepipeWith(cfg, "apply", file, "--no-recalc", "--concurrency", "2", "--lock-wait", "5m", "--lock-dir", lockDir)
				}()
			}
			wg.Wait()
			codes := []int{results[0].code, results[1].code}
			slices.Sort(codes)
			want := []int{ExitOK, ExitInvalid}
			if declared {
				want = []int{ExitOK, ExitOK}
			}
			if !slices.Equal(codes, want) {
				t.Errorf("exit codes %v, want %v\n%s\n----\n%s", codes, want, results[0].err, results[1].err)
			}
			n := 0
			for _, p := range sb.Plans("acme") {
				if strings.HasPrefix(p.Name, prefix) {
					n++
				}
			}
			if n != 6 {
				t.Errorf("%d plans of the file on the service, want 6 (none created twice)", n)
			}
		})
	}
}

// TestSameServiceAsChecked: same_service_as is an address as base_url
// is; anything else is a configuration error (exit 2).
func TestSameServiceAsChecked(t *testing.T) {
	a := newAddressEnv(t, newStateEnv(t, ""))
	for _, bad := range []string{"localhost:8080", "ftp://127.0.0.1", "http://user:pw@127.0.0.1"} {
		r := a.eepipeWith(a.config("bad.yaml", a.ip, bad), "diff", a.csv("v.csv", cAMT, 1))
		if r.code != ExitInvalid || !strings.Contains(r.err, "same_service_as") || strings.Contains(r.err, "pw@") {
			t.Errorf("same_service_as %s: exit %d\n%s", bad, r.code, r.err)
		}
	}
}

// TestOneServiceOtherAddressInAnOlderStore: a store that holds history
// under one address and no address of a key pair (as one written before
// the addresses were recorded) cannot tell that a run through another
// address is the same account: the run says so before it writes, naming
// both addresses and same_service_as; through the store's own address
// nothing is said.
func TestOneServiceOtherAddressInAnOlderStore(t *testing.T) {
	s := newStateEnv(t, "")
	a := newAddressEnv(t, s)
	v1 := s.csv("v1.csv", cAMT, 84)
	ip := a.config("ip.yaml", a.ip, "")
	if r := a.eepipeWith(ip, "apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply through %s: exit %d\n%s", a.ip, r.code, r.err)
	}
	db, err := sql.Open("sqlite", s.state)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM eepipe_key_services`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	warning := "the state store holds no run history under " + a.host + ", where this configuration keeps it, but holds some under " + a.ip
	r := a.eepipeWith(a.config("host.yaml", a.host, ""), "diff", v1)
	if r.code != 0 || !strings.Contains(r.err, warning) || !strings.Contains(r.err, `same_service_as: `+a.ip) {
		t.Errorf("diff through %s: exit %d, want 0 and the warning\n%s", a.host, r.code, r.err)
	}
	if r := a.eepipeWith(ip, "diff", v1); r.code != 0 || strings.Contains(r.err, "holds no run history under") {
		t.Errorf("diff through %s: exit %d\n%s", a.ip, r.code, r.err)
	}
}

// TestOneServiceTwoAddressesWithoutASharedLock: two applies through the
// two addresses on one host with a lock folder each (so no lock keeps
// them apart on SQLite): the one whose run record comes second, after
// the other recorded the key pair's address, is not recorded and writes
// nothing (exit 2), so no second history starts and no plan is created
// twice.
func TestOneServiceTwoAddressesWithoutASharedLock(t *testing.T) {
	s := newStateEnv(t, "")
	a := newAddressEnv(t, s)
	sb := s.srv.Sandbox
	file := writeCSV(t, filepath.Join(s.dir, "new.csv"), concurrentRows("Unshared", 3))
	ip, host := a.config("ip.yaml", a.ip, ""), a.config("host.yaml", a.host, "")
	var first result
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// The run through host has checked the store, holds its lock and
		// has listed the plans (none yet: its first request); the run
		// through ip goes all the way before host reads the answer, so
		// host would create every plan again.
		resp, err := http.DefaultTransport.RoundTrip(req)
		once.Do(func() {
			first = a.eepipeWith(ip, "apply", file, "--no-recalc", "--lock-dir", filepath.Join(s.dir, "ip-locks"))
		})
		return resp, err
	})}
	r := a.byFile.runApply(t.Context(), host, func(o *applyOptions) { o.HTTPClient = hc },
		file, "--no-recalc", "--state", s.state, "--lock-dir", filepath.Join(s.dir, "host-locks"))
	if first.code != 0 {
		t.Fatalf("the apply through %s: exit %d\n%s", a.ip, first.code, first.err)
	}
	if r.code != ExitInvalid || !strings.Contains(r.err, "has its run history under the service address "+a.ip) || !strings.Contains(r.err, "nothing was sent") {
		t.Fatalf("the apply through %s: exit %d, want 2\n%s", a.host, r.code, r.err)
	}
	n := 0
	for _, p := range sb.Plans("acme") {
		if strings.HasPrefix(p.Name, "Unshared") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d plans of the file on the service, want 3 (none created twice)", n)
	}
	if h := s.eepipe("history"); !strings.Contains(h.out, "\n1 run.\n") {
		t.Errorf("history:\n%s", h.out)
	}
}

// TestSavedSetTwoAddressesWithoutASharedLock: as
// TestOneServiceTwoAddressesWithoutASharedLock for a saved change set
// applied through http://localhost:PORT while an apply through
// http://127.0.0.1:PORT, with a lock folder of its own, records the key
// pair's address first (during the set's drift check): the set's run is
// not recorded and writes nothing, and exits 2 as the workbook's does
// (the address is the configuration's to declare), not 3.
func TestSavedSetTwoAddressesWithoutASharedLock(t *testing.T) {
	s := newStateEnv(t, "")
	a := newAddressEnv(t, s)
	sb := s.srv.Sandbox
	ip, host := a.config("ip.yaml", a.ip, ""), a.config("host.yaml", a.host, "")
	set := filepath.Join(s.dir, "changes.json")
	if r := a.eepipeWith(host, "diff", writeCSV(t, filepath.Join(s.dir, "saved.csv"), concurrentRows("Saved", 2)), "-o", set); r.code != ExitDiff {
		t.Fatalf("diff -o through %s: exit %d\n%s", a.host, r.code, r.err)
	}
	other := writeCSV(t, filepath.Join(s.dir, "other.csv"), concurrentRows("Other", 1))
	var first result
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// The set's run has checked the store under its lock; the run
		// through ip goes all the way before the set's first request.
		once.Do(func() {
			first = a.eepipeWith(ip, "apply", other, "--no-recalc", "--lock-dir", filepath.Join(s.dir, "ip-locks"))
		})
		return http.DefaultTransport.RoundTrip(req)
	})}
	r := a.byFile.runApply(t.Context(), host, func(o *applyOptions) { o.HTTPClient = hc },
		set, "--no-recalc", "--state", s.state, "--lock-dir", filepath.Join(s.dir, "host-locks"))
	if first.code != 0 {
		t.Fatalf("the apply through %s: exit %d\n%s", a.ip, first.code, first.err)
	}
	if r.code != ExitInvalid || !strings.Contains(r.err, "has its run history under the service address "+a.ip) || !strings.Contains(r.err, "nothing was sent") {
		t.Fatalf("the set's apply through %s: exit %d, want 2\n%s", a.host, r.code, r.err)
	}
	for _, p := range sb.Plans("acme") {
		if strings.HasPrefix(p.Name, "Saved") {
			t.Errorf("plan %q of the refused set was created", p.Name)
		}
	}
	if h := s.eepipe("history"); !strings.Contains(h.out, "\n1 run.\n") {
		t.Errorf("history:\n%s", h.out)
	}
}
