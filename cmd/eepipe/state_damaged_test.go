package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyRefusesADamagedStore: a state store with a damaged page is
// refused at open: exit 3 before any request, the message says what was
// found and what to do, and the store is left byte for byte as it was.
func TestApplyRefusesADamagedStore(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1)
	if r := s.eepipe("apply", v1, "--no-recalc"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.err)
	}
	data, err := os.ReadFile(s.state)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 3*4096 {
		t.Fatalf("store of %d bytes: too small to damage a page", len(data))
	}
	for i := 4096; i < 4096+64; i++ { // page 2's b-tree header and cell pointers
		data[i] = 0xA5
	}
	if err := os.WriteFile(s.state, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != ExitFatal || !strings.Contains(r.err, "integrity check") || !strings.Contains(r.err, "nothing was sent") {
		t.Fatalf("apply over a damaged store: exit %d\n%s", r.code, r.err)
	}
	if n := s.srv.Sandbox.Stats().Requests; n != 0 {
		t.Fatalf("%d requests sent over a damaged store", n)
	}
	after, err := os.ReadFile(s.state)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, data) {
		t.Fatal("the damaged store was changed")
	}
}

// TestClientDataFilesArePrivate: the run report, the history report and a
// saved change set hold the same client data as the state store, and are
// written, as it is, with mode 0600.
func TestClientDataFilesArePrivate(t *testing.T) {
	s := newStateEnv(t, "")
	v1 := s.csv("v1.csv", cAMT, 1)
	run, hist, set := filepath.Join(s.dir, "run.csv"), filepath.Join(s.dir, "history.json"), filepath.Join(s.dir, "set.json")
	if r := s.eepipe("apply", v1, "--no-recalc", "--report", run); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	if r := s.eepipe("history", "--report", hist); r.code != 0 {
		t.Fatalf("history: exit %d\n%s", r.code, r.err)
	}
	v2 := s.csv("v2.csv", cAMT, 2)
	if r := s.eepipe("diff", v2, "-o", set); r.code != ExitDiff {
		t.Fatalf("diff: exit %d\n%s", r.code, r.err)
	}
	for _, p := range []string{run, hist, set, s.state} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), st.Mode().Perm())
		}
	}
}
