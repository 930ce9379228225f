package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/table"
)

// runWithFiles runs eepipe as a process run from cron would be: stdout and
// stderr are files (not terminals), found so by FileIO as by SystemIO.
func runWithFiles(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	open := func(name string) *os.File {
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fh.Close() })
		return fh
	}
	in, out, errf := open("stdin"), open("stdout"), open("stderr")
	io := FileIO(in, out, errf)
	if io.ErrTTY || !io.ErrNotTTY {
		t.Fatal("a file is taken for a terminal")
	}
	f := &Factory{IO: io, Now: time.Now, Getenv: testGetenv(dir, env)}
	code = Execute(context.Background(), f, args)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return code, read("stdout"), read("stderr")
}

// TestStderrIsJSONOffATerminal runs commands with stderr a file and parses
// every stderr line as a JSON event: validation problems, the apply and
// export summaries, "report written" lines and errors included.
func TestStderrIsJSONOffATerminal(t *testing.T) {
	e := newCkEnv(t)
	good := e.path("plans.csv")
	if err := table.WriteFlatCSV(good, ckPlans(t)[:2], nil); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join("..", "..", "testdata", "bad", "bad_sector.csv")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		wantMsgs []string // substrings of some event's msg
	}{
		{"validate with problems", []string{"validate", bad, "--report", e.path("problems.json")}, ExitInvalid, []string{"Problem report written to"}},
		{"apply with problems", []string{"apply", bad}, ExitInvalid, []string{"validation problem", "the input has 2 errors; nothing was sent"}},
		{"apply", []string{"apply", good, "--no-recalc", "--report", e.path("run.xlsx")}, ExitOK, []string{"Applied: plans 2 created", "Run report written to"}},
		{"export", []string{"export", "-o", e.path("out.xlsx")}, ExitOK, []string{"Exported 2 plans"}},
		{"reconcile", []string{"reconcile", good, "--report", e.path("rec.json")}, ExitOK, []string{"Reconciliation report written to"}},
		{"check", []string{"check", good}, ExitDiff, nil},
		{"usage error", []string{"apply"}, ExitInvalid, []string{"apply needs at least one workbook or folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runWithFiles(t, e.vars, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			var msgs []string
			sc := bufio.NewScanner(strings.NewReader(stderr))
			n := 0
			for sc.Scan() {
				n++
				var ev map[string]any
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("stderr line %d is not JSON: %q\n%s", n, sc.Text(), stderr)
				}
				for _, k := range []string{"level", "ts", "msg"} {
					if _, ok := ev[k]; !ok {
						t.Errorf("stderr line %d has no %q: %s", n, k, sc.Text())
					}
				}
				msgs = append(msgs, ev["msg"].(string))
				if ev["msg"] == "validation problem" {
					if ev["file"] == nil || ev["problem"] == nil || ev["severity"] == nil {
						t.Errorf("validation problem without its place: %s", sc.Text())
					}
				}
			}
			if n == 0 {
				t.Fatal("nothing on stderr")
			}
			all := strings.Join(msgs, "\n")
			for _, w := range tc.wantMsgs {
				if !strings.Contains(all, w) {
					t.Errorf("no event with %q among:\n%s", w, all)
				}
			}
		})
	}
}

// TestStderrConsoleOnRequest: --log-format console off a terminal keeps
// the lines for people as they are.
func TestStderrConsoleOnRequest(t *testing.T) {
	code, _, stderr := runWithFiles(t, nil, "--log-format", "console", "apply")
	if code != ExitInvalid || !strings.HasPrefix(stderr, "eepipe: apply needs at least one workbook or folder\n") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// TestStderrJSONMultiLineError: an error of several lines is one event.
func TestStderrJSONMultiLineError(t *testing.T) {
	bad := filepath.Join("..", "..", "testdata", "bad", "bad_sector.csv")
	code, _, stderr := runWithFiles(t, nil, "apply", bad)
	if code != ExitInvalid {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var ev struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if ev.Level == "error" && strings.HasPrefix(ev.Msg, "configuration:\n") && strings.Contains(ev.Msg, "no service URL") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the configuration error is not one event:\n%s", stderr)
	}
}
