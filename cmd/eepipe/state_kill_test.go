//go:build unix

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// testStoreOptions open a store in the tests: another run's upgrade of a
// PostgreSQL store's schema is waited for up to 10 seconds.
var testStoreOptions = statestore.Options{LockWait: 10 * time.Second}

// TestKillDuringApplyLeavesStoreConsistent runs apply as a child process
// (this test binary as eepipe), kills it with SIGKILL half-way, and checks
// that the store holds what was written before the kill, that every value
// it says was applied is on the service, and that the next run converges
// without creating any plan twice.
func TestKillDuringApplyLeavesStoreConsistent(t *testing.T) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 40 * time.Millisecond}, "")
	e := s.env
	const plans = 12
	var rows []row
	for i := range plans {
		rows = append(rows, row{name: fmt.Sprintf("Kill %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
			counters: counters(cAMT, i+1, cWFS, 2*i+1)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "v1.csv"), rows)

	cmd := exec.Command(os.Args[0], "apply", file, "--state", s.state, "--no-recalc", "--concurrency", "1")
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sb := e.srv.Sandbox
	for sb.Stats().ByRoute[routeTarget] < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	killEepipe(t, cmd)
	patched := sb.Stats().ByRoute[routeTarget]
	if patched >= plans {
		t.Fatalf("every target was patched before the kill (%d)", patched)
	}

	// The store is intact and holds the writes made before the kill.
	db, err := sql.Open("sqlite", s.state)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	db.Close()
	st, err := statestore.OpenWith(context.Background(), s.state, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs(context.Background(), pipeline.HistoryQuery{})
	hist, _ := st.History(context.Background(), pipeline.HistoryQuery{Counter: cAMT})
	st.Close()
	if len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("runs after the kill: %+v", runs)
	}
	// With one request in flight, at most the write in flight at the kill
	// is on the service but not on record.
	if n := int64(len(hist)); n < patched-1 || n > patched {
		t.Errorf("%d writes recorded, %d targets patched on the service", n, patched)
	}
	for _, h := range hist {
		_, _, _, got := s.target(h.PlanName)
		if got[cAMT] != h.After {
			t.Errorf("%s: the store says %d was applied, the service holds %d", h.PlanName, h.After, got[cAMT])
		}
	}

	// The next run converges: every plan once, every value right.
	if r := s.eepipe("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s", r.code, r.err)
	}
	list, err := s.client.ListPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range plans {
		name := fmt.Sprintf("Kill %02d", i)
		planNamed(t, list, name) // exactly one
		s.want(name, cAMT, i+1, cWFS, 2*i+1)
	}
	sb.ResetStats()
	if r := s.eepipe("apply", file, "--no-recalc"); r.code != 0 || sb.Stats().Writes != 0 {
		t.Fatalf("third apply: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
}

// TestKillInBatchingWindowAdoptsUnansweredWrites kills an apply at
// concurrency 8 while about 8 target writes are on the service but their
// answers are still on the way (the sandbox handles a request at once and
// answers after its latency), so the journal holds them as pending: the
// tail of a batch whose answers were never recorded. The store must open
// and be consistent: every value on the service that the run wrote has a
// record (answered or pending), and every answered one is on the service.
// The next apply, of the file the run before wrote (so that each counter
// the killed run changed reads as "the file still holds what eepipe last
// wrote" unless its write is known), must adopt the unanswered writes the
// service holds, never hold them as changed on the service, and converge.
func TestKillInBatchingWindowAdoptsUnansweredWrites(t *testing.T) {
	s := newStateEnvWith(t, sandbox.Options{Latency: 60 * time.Millisecond}, "")
	e := s.env
	const plans = 40
	mk := func(file string, base int) string {
		var rows []row
		for i := range plans {
			rows = append(rows, row{name: fmt.Sprintf("Window %02d", i), start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll,
				counters: counters(cAMT, base+i)})
		}
		return writeCSV(t, filepath.Join(e.dir, file), rows)
	}
	v1, v2 := mk("v1.csv", 100), mk("v2.csv", 500)
	if r := s.eepipe("apply", v1, "--no-recalc", "--concurrency", "8"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	sb := e.srv.Sandbox
	sb.ResetStats()
	cmd := exec.Command(os.Args[0], "apply", v2, "--state", s.state, "--no-recalc", "--concurrency", "8")
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for sb.Stats().ByRoute[routeTarget] < 12 {
		time.Sleep(2 * time.Millisecond)
	}
	killEepipe(t, cmd)

	// The store opens, is intact, and its history agrees with the service.
	db, err := sql.Open("sqlite", s.state)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	type rec struct {
		outcome string
		after   int64
	}
	recs := map[string]rec{}
	// A write's counters are packed in its row: [[counter id, before, after, sent], ...].
	rows, err := db.Query(`SELECT w.plan_name, w.outcome, json_extract(c.value, '$[2]') FROM eepipe_writes w, json_each(w.counters) c
		WHERE w.run_id = (SELECT MAX(id) FROM eepipe_runs)
		AND json_extract(c.value, '$[0]') = (SELECT id FROM eepipe_counter_names WHERE name = ?)`, cAMT)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var r rec
		if err := rows.Scan(&name, &r.outcome, &r.after); err != nil {
			t.Fatal(err)
		}
		recs[name] = r
	}
	rows.Close()
	db.Close()
	st, err := statestore.OpenWith(context.Background(), s.state, testStoreOptions)
	if err != nil {
		t.Fatalf("the store does not open after the kill: %v", err)
	}
	st.Close()
	unanswered, written, unsent := 0, 0, 0
	for i := range plans {
		name := fmt.Sprintf("Window %02d", i)
		_, _, _, got := s.target(name)
		r, ok := recs[name]
		switch {
		case got[cAMT] == int64(500+i):
			written++
			if !ok {
				t.Errorf("%s: the service holds the killed run's value %d, but the journal has no record of the write", name, got[cAMT])
			} else if r.outcome == pipeline.OutcomePending {
				unanswered++
			} else if r.outcome != "ok" {
				t.Errorf("%s: on the service, recorded as %q", name, r.outcome)
			}
		case ok && r.outcome == "ok":
			t.Errorf("%s: recorded as applied (%d), the service holds %d", name, r.after, got[cAMT])
		case ok && r.outcome == pipeline.OutcomePending:
			unsent++ // recorded, then killed before it was sent
		}
	}
	if written == plans {
		t.Fatalf("every target was written before the kill")
	}
	if unanswered == 0 {
		t.Fatalf("no write was on the service with its answer unrecorded at the kill (%d written): the test missed the window", written)
	}
	t.Logf("%d of %d targets written before the kill, %d of them unanswered (pending)", written, plans, unanswered)

	// v1 again: each target the killed run wrote goes back to v1's value
	// (changed in the file since the killed run's write), none is held.
	r := s.eepipe("apply", v1, "--no-recalc", "--concurrency", "8")
	if r.code != 0 || strings.Contains(r.err, "NOT overwritten") {
		t.Fatalf("apply v1 after the kill: exit %d (want 0, nothing held)\n%s", r.code, r.err)
	}
	noted := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(target (\d+)\): run \d+ sent 1 counter and recorded no answer \(it was stopped first, or got no clear one\); [^"\n]*\(adopted\)`).FindAllStringSubmatch(r.out+r.err, -1) {
		noted[m[1]] = true
	}
	if len(noted) != unanswered {
		t.Errorf("%d targets noted as adopted, want %d\n%s%s", len(noted), unanswered, r.out, r.err)
	}
	for i := range plans {
		s.want(fmt.Sprintf("Window %02d", i), cAMT, 100+i)
	}
	st, err = statestore.OpenWith(context.Background(), s.state, testStoreOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, err := st.History(context.Background(), pipeline.HistoryQuery{Counter: cAMT})
	if err != nil {
		t.Fatal(err)
	}
	adopted, pending := 0, 0
	for _, h := range hist {
		switch {
		case h.Outcome == pipeline.OutcomePending:
			pending++
		case strings.HasPrefix(h.Outcome, pipeline.OutcomeAdopted) && h.Run.Status == "ok":
			adopted++ // the next run's record of the adoption
		}
	}
	// Every pending write is settled by the next run, the never sent
	// ones (unsent) too.
	if pending > 0 || adopted != unanswered {
		t.Errorf("after the next run: %d writes still pending (want none; %d were never sent), %d adoptions recorded (want %d)", pending, unsent, adopted, unanswered)
	}
}

// killEepipe kills the eepipe process cmd runs with SIGKILL, as kill -9
// of eepipe does, and returns once nothing of it runs any more. On Linux
// cmd is the supervisor: its worker, the process that writes to the store
// and the service, dies of the supervisor's death (Pdeathsig), but after
// the supervisor was reaped: a signal is delivered when the worker's
// threads next run, and a thread in a system call (a write to the journal,
// an fsync) finishes it first. Reading the store before the worker is gone
// can miss a record it commits after (see docs/limits.md).
func killEepipe(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	worker := workerOf(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("eepipe was not killed (%v): it finished first", err)
	}
	if worker == 0 {
		return // no supervisor: cmd was the process that works
	}
	start := time.Now()
	for !processGone(worker) {
		if time.Since(start) > time.Minute {
			syscall.Kill(worker, syscall.SIGKILL)
			t.Fatalf("the worker %d outlived its supervisor by a minute", worker)
		}
		time.Sleep(time.Millisecond)
	}
	if d := time.Since(start); d > time.Millisecond {
		t.Logf("the worker ended %v after its supervisor", d.Round(time.Millisecond))
	}
}

// workerOf returns the pid of the one child of pid, the supervisor's
// worker, or 0 if it has none (no supervisor: not Linux, or turned off).
func workerOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	c, _ := strconv.Atoi(f[0])
	return c
}

// processGone reports whether pid runs no more: reaped, or a zombie (all
// its threads ended; the container's first process may never reap it).
func processGone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command's closing parenthesis: "pid (comm) S ...".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
