package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// changeSetPadding is the whitespace a padded change set carries: 200 MiB,
// a 210 MB file under the 256 MiB bound of a change set.
const changeSetPadding = 200 << 20

// changeSetPaddings are where a change set is padded: inside a plan (the
// decoder would hold the plan's value whole), before the plans' list
// (that list is one value), and after the set.
var changeSetPaddings = []struct{ name, after string }{
	{"inside a plan", `"new": 50`},
	{"before the plans", `"plans":`},
	{"after the set", ""},
}

// padChangeSet writes to path the change set text orig with
// changeSetPadding bytes of spaces, tabs, CRs and newlines after the first
// occurrence of after (at the end when after is "").
func padChangeSet(tb testing.TB, orig, after, path string) {
	tb.Helper()
	at := len(orig)
	if after != "" {
		i := strings.Index(orig, after)
		if i < 0 {
			tb.Fatalf("the change set holds no %q", after)
		}
		at = i + len(after)
	}
	fh, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	chunk := bytes.Repeat([]byte(" \t\r\n    "), 1<<17) // 1 MiB
	_, err = io.WriteString(fh, orig[:at])
	for n := 0; err == nil && n < changeSetPadding; n += len(chunk) {
		_, err = fh.Write(chunk)
	}
	if err == nil {
		_, err = io.WriteString(fh, orig[at:])
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// diffSetProcess runs `eepipe diff set` as a process of its own (this
// test binary as eepipe, without the supervisor) and returns its exit
// status, its output and its peak resident memory.
func diffSetProcess(tb testing.TB, e *env, set string) (code int, out string, peak int64) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "diff", set)
	cmd.Env = append(os.Environ(), envRunMain+"=1", envNoSupervisor+"=1", envState+"="+filepath.Join(e.dir, "state.db"))
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	hwm := costWatchRSS(cmd.Process.Pid)
	err := cmd.Wait()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		tb.Fatalf("diff %s: %v\n%s", set, err, stderr.String())
	}
	return code, stdout.String(), hwm()
}

// TestPaddedChangeSetBounded: a change set padded with 200 MiB of
// whitespace, inside a plan, before its plans or after it, is read by
// `eepipe diff SET` (each of its passes) in under 64 MB of resident
// memory, and shows what the same set unpadded shows
// (docs/apply-and-state.md, "Memory").
func TestPaddedChangeSetBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 210 MB change set")
	}
	if raceEnabled {
		t.Skip("measures memory, which the race detector's shadow memory would swamp, on 630 MB of reads it slows tenfold")
	}
	e, set := savedSetEnv(t)
	b, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	code, want, plain := diffSetProcess(t, e, set)
	if code != ExitDiff || !strings.Contains(want, "Fresh") {
		t.Fatalf("diff of the set: exit %d\n%s", code, want)
	}
	t.Logf("unpadded: peak RSS %.1f MB", float64(plain)/1e6)
	for _, pad := range changeSetPaddings {
		t.Run(pad.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "padded.json")
			padChangeSet(t, string(b), pad.after, path)
			code, out, peak := diffSetProcess(t, e, path)
			os.Remove(path)
			t.Logf("%s: peak RSS %.1f MB", pad.name, float64(peak)/1e6)
			if code != ExitDiff || out != want {
				t.Fatalf("exit %d, want 1 with the unpadded set's output\n%s\nwant:\n%s", code, out, want)
			}
			if peak > 64e6 {
				t.Errorf("peak RSS %.1f MB, want under 64 MB", float64(peak)/1e6)
			}
		})
	}
}

// BenchmarkPaddedChangeSet reports the peak resident memory (rss-MB) of
// `eepipe diff SET` for the set of TestPaddedChangeSetBounded unpadded and
// padded with 200 MiB of whitespace in each place:
//
//	go test ./cmd/eepipe -run '^$' -bench BenchmarkPaddedChangeSet -benchtime 1x
func BenchmarkPaddedChangeSet(b *testing.B) {
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	dir := b.TempDir()
	e := &env{t: &testing.T{}, srv: srv, dir: dir, vars: map[string]string{envLockDir: filepath.Join(dir, "locks")}}
	e.singleAccount()
	set := writeSavedSet(e)
	orig, err := os.ReadFile(set)
	if err != nil {
		b.Fatal(err)
	}
	measure := func(b *testing.B, path string) {
		var peak int64
		for b.Loop() {
			code, out, p := diffSetProcess(b, e, path)
			if code != ExitDiff {
				b.Fatalf("exit %d\n%s", code, out)
			}
			peak = max(peak, p)
		}
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Size())/1e6, "file-MB")
		b.ReportMetric(float64(peak)/1e6, "rss-MB")
	}
	b.Run("unpadded", func(b *testing.B) { measure(b, set) })
	for _, pad := range changeSetPaddings {
		b.Run(strings.ReplaceAll(pad.name, " ", "_"), func(b *testing.B) {
			path := filepath.Join(dir, "padded.json")
			padChangeSet(b, string(orig), pad.after, path)
			defer os.Remove(path)
			measure(b, path)
		})
	}
}
