package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// demoSplit splits a printed command line into words: single quotes as a
// POSIX shell reads them, and a trailing "# comment" dropped.
func demoSplit(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == '#' && !inWord:
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unclosed quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestDemoServeNextSteps runs `eepipe demo --serve` and then, while its
// sandbox is up, the commands it prints, copied from its own output with
// the environment it prints (and nothing else): the changed counter shows
// as the one difference, apply sends it, and the workbook is then in sync.
func TestDemoServeNextSteps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo out") // a space: the printed paths must be quoted
	var out, errb bytes.Buffer
	outW, errW := &syncWriter{w: &out}, &syncWriter{w: &errb}
	f := &Factory{IO: &IOStreams{In: bytes.NewReader(nil), Out: outW, ErrOut: errW}, Now: time.Now, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan int, 1)
	cmd := NewCmdDemo(f, func(o *demoOptions) error {
		o.Program = "eepipe"
		o.Ready = func() { close(ready) }
		return runDemo(ctx, f, o)
	})
	go func() {
		done <- executeCmd(ctx, cmd, f, []string{"--serve", "--out", dir, "--latency", "1ms", "--recalc-duration", "300ms"})
	}()
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("demo --serve ended (exit %d) before printing its next steps\n%s\n%s", code, out.String(), errb.String())
	}
	outW.mu.Lock()
	printed := out.String()
	outW.mu.Unlock()

	env := map[string]string{}
	var commands [][]string
	for _, line := range strings.Split(printed, "\n") {
		switch {
		case strings.HasPrefix(line, "  export "):
			for _, kv := range demoSplit(t, strings.TrimPrefix(line, "  export ")) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("export line %q", line)
				}
				env[k] = v
			}
		case strings.HasPrefix(line, "  eepipe "):
			commands = append(commands, demoSplit(t, strings.TrimPrefix(line, "  eepipe ")))
		}
	}
	if len(env) == 0 || len(commands) != 3 {
		t.Fatalf("next steps not found (env %v, %d commands) in:\n%s", env, len(commands), printed)
	}
	wantCodes := []int{ExitDiff, ExitOK, ExitOK}
	for i, args := range commands {
		var o, e bytes.Buffer
		cf := &Factory{IO: &IOStreams{In: bytes.NewReader(nil), Out: &o, ErrOut: &e}, Now: time.Now, Getenv: func(k string) string { return env[k] }}
		code := Execute(context.Background(), cf, args)
		if code != wantCodes[i] {
			t.Fatalf("eepipe %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, wantCodes[i], o.String(), e.String())
		}
		switch i {
		case 0:
			if !strings.Contains(o.String(), "1 counter differs") {
				t.Errorf("reconcile does not show the one changed counter:\n%s", o.String())
			}
		case 1:
			if !strings.Contains(e.String(), "1 target patched, 1 counter changed") {
				t.Errorf("apply did not send exactly the changed counter:\n%s", e.String())
			}
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("demo --serve exit %d after Ctrl-C", code)
	}
}

// TestDemoReusesItsFolder: without --out, every run writes to the same
// folder under the user's cache folder rather than a new temporary one.
func TestDemoReusesItsFolder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	a, err := demoDir("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := demoDir("")
	if err != nil {
		t.Fatal(err)
	}
	if a != b || !strings.HasPrefix(a, cache) {
		t.Fatalf("demo folders %s and %s, want one under %s", a, b, cache)
	}
}

func TestDemoShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a/eepipe.yaml": "/tmp/a/eepipe.yaml",
		"/tmp/demo out/x":    "'/tmp/demo out/x'",
		"it's":               `'it'\''s'`,
	} {
		if got := demoShellQuote(in); got != want {
			t.Errorf("demoShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestGoRunBinary: the printed next steps say "go run ./cmd/eepipe" for a
// binary of go run, in its temporary folder or cached in the build cache
// wherever GOCACHE points (the paths as Go 1.26 gives them), and the
// binary's own path otherwise.
func TestGoRunBinary(t *testing.T) {
	for exe, want := range map[string]bool{
		"/tmp/go-build210658613/b001/exe/eepipe": true,
		"/home/u/.cache/go-build/8e/8eb2b811a7c4e5788e6ad96a305312a49b49227673192be0f25e4e773814dfec-d/eepipe": true,
		"/tmp/gocache/8e/8eb2b811a7c4e5788e6ad96a305312a49b49227673192be0f25e4e773814dfec-d/eepipe":            true,
		"/usr/local/bin/eepipe": false,
		"/tmp/gocache/8e/9eb2b811a7c4e5788e6ad96a305312a49b49227673192be0f25e4e773814dfec-d/eepipe": false, // not its shard
		"/home/u/src/eepipe/eepipe": false,
	} {
		if got := goRunBinary(exe); got != want {
			t.Errorf("goRunBinary(%s) = %v, want %v", exe, got, want)
		}
	}
}

// TestDemoKeepsAnotherHistory: the demo starts a new run history in its
// folder each time, but a state.db there that holds runs of a service
// not on this machine is a real history (--out the folder a
// configuration's "state: state.db" names): the demo refuses the folder
// (exit 2) and leaves the store as it is.
func TestDemoKeepsAnotherHistory(t *testing.T) {
	dir := t.TempDir()
	p := demoState(dir).Path
	ctx := context.Background()
	st, err := statestore.OpenWith(ctx, p, statestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginRun(ctx, pipeline.RunRecord{Started: time.Now(), User: "ann", Host: "lap", Command: "eepipe apply", Service: "https://api.example.co.za"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var out, errb bytes.Buffer
	f := &Factory{IO: &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &syncWriter{w: &errb}}, Now: time.Now, Getenv: func(string) string { return "" }}
	code := Execute(ctx, f, []string{"demo", "--out", dir, "--latency", "1ms", "--recalc-duration", "10ms"})
	if code != ExitInvalid || !strings.Contains(errb.String(), "https://api.example.co.za") || !strings.Contains(errb.String(), "--out") {
		t.Errorf("demo into a folder with a real history: exit %d, want 2 naming the service and --out\n%s", code, errb.String())
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the store was removed: %v", err)
	}
	if st, err = statestore.OpenWith(ctx, p, statestore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if runs, err := st.Runs(ctx, pipeline.HistoryQuery{}); err != nil || len(runs) != 1 || runs[0].Service != "https://api.example.co.za" {
		t.Errorf("the store's runs after the demo: %+v (%v), want the one run", runs, err)
	}
}
