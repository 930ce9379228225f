package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
)

// logEvent is one JSON line of stderr.
type logEvent map[string]any

func (e logEvent) str(k string) string { s, _ := e[k].(string); return s }

// jsonEvents parses every stderr line of r as a JSON event.
func jsonEvents(t *testing.T, r result) []logEvent {
	t.Helper()
	var evs []logEvent
	sc := bufio.NewScanner(strings.NewReader(r.err))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev logEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stderr line is not JSON: %q\n%s", sc.Text(), r.err)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[len(evs)-1].str("msg") != "summary" {
		t.Fatalf("stderr does not end with the summary event:\n%s", r.err)
	}
	return evs
}

// wantOutcomeLogged checks the log of a run that ended with outcome: the
// summary is the last event, at level; a run that failed (level error)
// logs its cause at level error before it, with every word of cause.
func wantOutcomeLogged(t *testing.T, r result, outcome, level, cause string) {
	t.Helper()
	evs := jsonEvents(t, r)
	sum := evs[len(evs)-1]
	if sum.str("outcome") != outcome || sum.str("level") != level {
		t.Errorf("summary: outcome %q at level %q, want %q at %q\n%s", sum.str("outcome"), sum.str("level"), outcome, level, r.err)
	}
	if level != "error" {
		return
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.str("level") == "error" && strings.Contains(ev.str("msg"), cause) {
			return
		}
	}
	t.Errorf("no event at level error says %q:\n%s", cause, r.err)
}

// runCtx runs eepipe with ctx, which the test may cancel (a signal).
func (e *env) runCtx(ctx context.Context, args ...string) result {
	e.t.Helper()
	f, out, errb := e.factory()
	code := Execute(ctx, f, args)
	return result{code, out.String(), errb.String()}
}

// TestSummaryLevelFollowsOutcome runs apply to each outcome with JSON
// logs and checks the summary event's level (docs/scheduling.md): info
// for ok, warn for ok with warnings and for differences, error for
// fatal, locked, timeout and interrupted, which also log their cause at
// level error.
func TestSummaryLevelFollowsOutcome(t *testing.T) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 30 * time.Millisecond}, "")
	e := s.env
	var rows []row
	for i := range 12 {
		rows = append(rows, row{name: fmt.Sprintf("Level %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, i+1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "v1.csv"), rows)
	apply := func(ctx context.Context, extra ...string) result {
		return e.runCtx(ctx, append([]string{"--log-format", "json", "apply", file, "--no-recalc", "--state", s.state, "--concurrency", "1"}, extra...)...)
	}

	// ok, with the warnings of a first apply (the plans' company is not
	// checked) or without them (the same file again: in sync).
	for range 2 {
		r := apply(context.Background())
		if r.code != 0 {
			t.Fatalf("apply: exit %d\n%s", r.code, r.err)
		}
		evs := jsonEvents(t, r)
		sum := evs[len(evs)-1]
		want := "info"
		if w, _ := sum["warnings"].([]any); len(w) > 0 {
			want = "warn"
		}
		wantOutcomeLogged(t, r, "ok", want, "")
	}

	// differences: a counter changed on the service is held back (exit 1).
	s.serviceEdit("Level 03", cAMT, 40)
	r := apply(context.Background())
	if r.code != ExitDiff {
		t.Fatalf("apply over a service edit: exit %d\n%s", r.code, r.err)
	}
	wantOutcomeLogged(t, r, "differences", "warn", "")
	v2 := writeCSV(t, filepath.Join(e.dir, "v2.csv"), func() []row {
		out := append([]row(nil), rows...)
		for i := range out {
			out[i].counters = counters(cAMT, 100+i)
		}
		return out
	}())
	file = v2

	// locked: another run holds the --lock file.
	lockPath := filepath.Join(e.dir, "run.lock")
	l, err := filelock.Acquire(context.Background(), lockPath, pipeline.LockInfo{Since: time.Now(), Command: "eepipe apply other.csv"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r = apply(context.Background(), "--lock", lockPath)
	l.Unlock()
	if r.code != ExitFatal {
		t.Fatalf("apply with its lock held: exit %d\n%s", r.code, r.err)
	}
	wantOutcomeLogged(t, r, "locked", "error", "eepipe apply other.csv")

	// timeout: --max-duration passes half-way.
	r = apply(context.Background(), "--max-duration", "150ms", "--overwrite-service-changes")
	if r.code != ExitFatal {
		t.Fatalf("apply past --max-duration: exit %d\n%s", r.code, r.err)
	}
	wantOutcomeLogged(t, r, "timeout", "error", "--max-duration 150ms")

	// interrupted: a signal (the context's end) half-way.
	ctx, cancel := context.WithCancel(context.Background())
	sb := e.srv.Sandbox
	sb.ResetStats()
	go func() {
		for sb.Stats().ByRoute[routeTarget] < 1 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	file = writeCSV(t, filepath.Join(e.dir, "v3.csv"), func() []row {
		out := append([]row(nil), rows...)
		for i := range out {
			out[i].counters = counters(cAMT, 300+i)
		}
		return out
	}())
	r = apply(ctx, "--overwrite-service-changes")
	cancel()
	if r.code != ExitFatal {
		t.Fatalf("interrupted apply: exit %d\n%s", r.code, r.err)
	}
	wantOutcomeLogged(t, r, "interrupted", "error", "interrupted: no new request was sent after the signal")

	// fatal: the service is unreachable (another address: a store of its
	// own, as a key pair's history is under one address).
	e.vars[envBaseURL] = "http://127.0.0.1:1"
	r = e.run("--log-format", "json", "apply", file, "--no-recalc", "--state", filepath.Join(e.dir, "down.db"))
	if r.code != ExitFatal {
		t.Fatalf("apply with the service down: exit %d\n%s", r.code, r.err)
	}
	wantOutcomeLogged(t, r, "fatal", "error", "the service is unreachable")

	// A recalc that failed so (it has no summary event) logs its cause at
	// level error too.
	r = e.run("--log-format", "json", "recalc", "scorecard_acme_2025", "--recalc-wait", "0")
	if r.code != ExitFatal {
		t.Errorf("recalc with the service down: exit %d\n%s", r.code, r.err)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.err), "\n") {
		var ev logEvent
		if json.Unmarshal([]byte(line), &ev) == nil && ev.str("level") == "error" && strings.Contains(ev.str("msg"), "the service is unreachable") {
			return
		}
	}
	t.Errorf("recalc with the service down logs no error event with its cause:\n%s", r.err)
}

// TestAlreadyHeldCountedAlike: apply's summary (its line, and
// counters_already_held in the JSON summary) and history count the
// counters already held of a run alike: a created plan's counter the
// file gives as 0 (which the change set does not count to change) and a
// plan in sync's counters all count, as history lists them.
func TestAlreadyHeldCountedAlike(t *testing.T) {
	s := newStateEnv(t, "")
	e := s.env
	rows := []row{
		{name: "Held A", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 3, cWFS, 0, cIFU, 0)},
		{name: "Held B", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 0, cWFS, 5)},
	}
	file := writeCSV(t, filepath.Join(e.dir, "held.csv"), rows)
	r := s.run("--log-format", "json", "apply", file, "--no-recalc", "--state", s.state)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	evs := jsonEvents(t, r)
	n, _ := evs[len(evs)-1]["counters_already_held"].(float64)
	if n != 3 {
		t.Errorf("counters_already_held = %v, want 3 (the zeros of the created plans)\n%s", n, r.err)
	}
	if !strings.Contains(r.err, pipeline.HeldText(3)) {
		t.Errorf("apply's summary does not say %q:\n%s", pipeline.HeldText(3), r.err)
	}
	h := s.eepipe("history")
	if h.code != 0 || !strings.Contains(h.out, "    "+pipeline.HeldText(3)+"\n") {
		t.Errorf("history does not count the run's %s alike:\n%s", pipeline.HeldText(3), h.out)
	}
}
