package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/xuri/excelize/v2"
)

// TestHeldFieldNamesItsCell: a plan field apply leaves alone is reported
// at the cell it was read from (the flat row's sector column), as a held
// counter is, in the log and in the JSON run report ("cell", the same
// shape as a counter's).
func TestHeldFieldNamesItsCell(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB := pipeline.Sectors[0], pipeline.Sectors[4]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Celled", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Celled")
	v1 := s.fieldsCSV("v1.csv", id, "Celled", secA, cAMT, 1)
	s.serviceRename(id, "", secB)

	report := filepath.Join(s.dir, "run.json")
	r := s.eepipe("apply", v1, "--no-recalc", "--report", report)
	if r.code != 1 {
		t.Fatalf("apply v1 again: exit %d\n%s", r.code, r.err)
	}
	// writeCSV's columns: vat, registration, plan_id, plan_name,
	// start_date, end_date, scorecard_id, sector (8), ...
	if !strings.Contains(r.err, `v1.csv line 2, column 8: plan `+fmt.Sprint(id)+` "Celled" field sector: file "`+secA+`"`) {
		t.Errorf("the held sector is not named at its cell (line 2, column 8):\n%s", r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Rows []struct {
			HeldFields []map[string]any `json:"held_fields"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var held []map[string]any
	for _, row := range rep.Rows {
		held = append(held, row.HeldFields...)
	}
	if len(held) != 1 || held[0]["field"] != "sector" || held[0]["cell"] != "line 2, column 8" ||
		held[0]["old"] != secB || held[0]["new"] != secA || held[0]["class"] != string(diff.ClassService) {
		t.Errorf("held_fields = %v, want sector at line 2, column 8", held)
	}
	if len(held) == 1 {
		if _, ok := held[0]["origin"]; ok {
			t.Errorf("held_fields carries the Go struct origin: %v", held[0])
		}
	}
}

// TestApplyLocksOnlyTheAccountsItWrites: with a configuration of two
// accounts, an apply whose plans all name their account (the account
// column) locks only those accounts, so an apply to another client of the
// same configuration is not blocked; a plan routed by its company still
// locks every account (its account is known only after the lookup).
func TestApplyLocksOnlyTheAccountsItWrites(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	held, err := filelock.Dir{Path: e.vars[envLockDir]}.Lock(context.Background(), pipeline.AccountLockKey("mpk_sandbox_acme"),
		pipeline.LockInfo{Command: "eepipe apply acme.xlsx", User: "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	head := "account,company_vat_number,plan_name,start_date,end_date,year_number,target_type," + cAMT + "\n"
	crane := filepath.Join(e.dir, "crane.csv")
	writeFile(t, crane, head+"bluecrane,,Crane Locks,2026-09-01,2027-08-31,1,all_employees,3\n", 0o644)
	acme := filepath.Join(e.dir, "acme.csv")
	writeFile(t, acme, head+"acme,,Acme Locks,2026-09-01,2027-08-31,1,all_employees,3\n", 0o644)
	byCompany := filepath.Join(e.dir, "company.csv")
	writeFile(t, byCompany, head+",4012345678,Acme Locks,2026-09-01,2027-08-31,1,all_employees,3\n", 0o644)

	if r := e.run("--config", e.config, "apply", crane, "--no-recalc", "--no-state"); r.code != 0 {
		t.Fatalf("apply to bluecrane while acme is locked: exit %d\n%s", r.code, r.err)
	}
	if n := len(e.srv.Sandbox.Plans("bluecrane")); n == 0 {
		t.Fatal("the bluecrane plan was not created")
	}
	// A saved change set locks the accounts it holds.
	crane2 := filepath.Join(e.dir, "crane2.csv")
	writeFile(t, crane2, head+"bluecrane,,Crane Locks 2,2026-09-01,2027-08-31,1,all_employees,4\n", 0o644)
	set := filepath.Join(e.dir, "changes.json")
	if r := e.run("--config", e.config, "diff", crane2, "-o", set, "--state", filepath.Join(e.dir, "state.db")); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	if r := e.run("--config", e.config, "apply", set, "--no-recalc", "--state", filepath.Join(e.dir, "state.db")); r.code != 0 {
		t.Fatalf("apply of a bluecrane change set while acme is locked: exit %d\n%s", r.code, r.err)
	}
	for _, f := range []string{acme, byCompany} {
		r := e.run("--config", e.config, "apply", f, "--no-recalc", "--no-state")
		if r.code != ExitFatal || !strings.Contains(r.err, "another eepipe run holds the lock of account acme") {
			t.Errorf("apply %s while acme is locked: exit %d, want 3 naming the lock\n%s", filepath.Base(f), r.code, r.err)
		}
	}
	if n := len(e.srv.Sandbox.Plans("acme")); n != 0 {
		t.Errorf("%d acme plans created while acme was locked", n)
	}
}

// TestSavedFieldNamesItsCell: a saved change set records where each plan
// field it writes was read, as it does for counters, and the sign-off
// workbook shows that cell on the field's row.
func TestSavedFieldNamesItsCell(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB := pipeline.Sectors[0], pipeline.Sectors[4]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Signed", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Signed")
	v2 := s.fieldsCSV("v2.csv", id, "Signed", secB, cAMT, 1)
	set := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", v2, "-o", set); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	saved, err := readSavedSet(set)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Plans) != 1 || len(saved.Plans[0].Fields) != 1 {
		t.Fatalf("saved plans %+v, want one plan with the sector", saved.Plans)
	}
	if f := saved.Plans[0].Fields[0]; f.Field != "sector" || f.Cell != "line 2, column 8" || filepath.Base(f.File) != "v2.csv" {
		t.Errorf("saved field %+v, want sector from v2.csv line 2, column 8", f)
	}
	book := filepath.Join(s.dir, "changes.xlsx")
	if r := s.eepipe("diff", v2, "-o", book); r.code != 1 {
		t.Fatalf("diff -o xlsx: exit %d\n%s", r.code, r.err)
	}
	x, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows(reports.ChangeSetSheet)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if len(r) >= 9 && r[5] == "sector" {
			found = r[8] == "line 2, column 8"
		}
	}
	if !found {
		t.Errorf("the sign-off sheet's sector row lacks its cell:\n%v", rows)
	}
	// The sign-off workbook still applies (its readable sheet matches).
	if r := s.eepipe("apply", book, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply of the sign-off workbook: exit %d\n%s", r.code, r.err)
	}
	if _, sec := s.servicePlan(id); sec != secB {
		t.Errorf("sector %q after the change set, want %q", sec, secB)
	}
}

// TestHistoryShowsFieldValues: the run history says what a metadata
// update wrote over what, as it does for counters, so an auditor sees
// which run changed a plan's sector and what it held before.
func TestHistoryShowsFieldValues(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB := pipeline.Sectors[0], pipeline.Sectors[4]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Audited", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Audited")
	if r := s.eepipe("apply", s.fieldsCSV("v2.csv", id, "Audited", secB, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v2: exit %d\n%s", r.code, r.err)
	}
	want := fmt.Sprintf(`update sector %q -> %q`, secA, secB)
	if r := s.eepipe("history"); r.code != 0 || !strings.Contains(r.out, want) {
		t.Errorf("history: exit %d, lacks %s\n%s\n%s", r.code, want, r.out, r.err)
	}
	report := filepath.Join(s.dir, "history.json")
	if r := s.eepipe("history", "--report", report); r.code != 0 {
		t.Fatalf("history --report: exit %d\n%s", r.code, r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		PlanWrites []struct {
			RunID  int64  `json:"run_id"`
			Action string `json:"action"`
		} `json:"plan_writes"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range h.PlanWrites {
		found = found || w.RunID == 2 && w.Action == want
	}
	if !found {
		t.Errorf("the history report's plan writes lack %s: %+v", want, h.PlanWrites)
	}
}

// TestSavedSetAppliedWhileWaitingForTheLock: a second apply of a change
// set that waits for the account's lock while the first applies it is
// refused as already applied (naming the run) once it has the lock, not
// reported as drift.
func TestSavedSetAppliedWhileWaitingForTheLock(t *testing.T) {
	s := newStateEnv(t, "")
	secA := pipeline.Sectors[0]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Waited", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Waited")
	set := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", s.fieldsCSV("v2.csv", id, "Waited", secA, cAMT, 5), "-o", set); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	held, err := filelock.Dir{Path: s.vars[envLockDir]}.Lock(context.Background(), pipeline.AccountLockKey("mpk_sandbox_acme"),
		pipeline.LockInfo{Command: "eepipe apply other.xlsx", User: "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The second run: past the "applied before?" check, waiting for the lock.
	f, _, errb := s.factory()
	errw := f.IO.ErrOut.(*syncWriter)
	done := make(chan int, 1)
	go func() {
		done <- Execute(context.Background(), f, []string{"apply", set, "--no-recalc", "--lock-wait", "10m", "--state", s.state})
	}()
	stderr := func() string {
		errw.mu.Lock()
		defer errw.mu.Unlock()
		return errb.String()
	}
	for !strings.Contains(stderr(), "waiting up to 10m0s (--lock-wait)") {
		select {
		case code := <-done:
			held.Unlock()
			t.Fatalf("the second run ended (exit %d) before waiting for the lock:\n%s", code, stderr())
		case <-time.After(5 * time.Millisecond):
		}
	}
	// Meanwhile the first run applies the set (another host's lock folder,
	// the same store).
	if r := s.eepipe("apply", set, "--no-recalc", "--lock-dir", filepath.Join(s.dir, "elsewhere")); r.code != 0 {
		held.Unlock()
		t.Fatalf("first apply of the set: exit %d\n%s", r.code, r.err)
	}
	writes := s.srv.Sandbox.Stats().Writes
	held.Unlock()
	code := <-done
	if code != ExitDiff || !strings.Contains(stderr(), "this change set was already applied by run 2") || strings.Contains(stderr(), "drifted") {
		t.Errorf("second apply after waiting: exit %d, want 1 naming run 2 (not drift)\n%s", code, stderr())
	}
	if got := s.srv.Sandbox.Stats().Writes; got != writes {
		t.Errorf("the second apply wrote %d times", got-writes)
	}
}

// TestHistoryReportFolderMissing: a --report whose folder does not exist
// is a usage error found before anything is listed (exit 2, naming the
// folder), as for apply, not a failed write of a temporary file.
func TestHistoryReportFolderMissing(t *testing.T) {
	s := newStateEnv(t, "")
	if r := s.eepipe("apply", s.csv("v1.csv", cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	missing := filepath.Join(s.dir, "no-such-folder")
	r := s.eepipe("history", "--report", filepath.Join(missing, "h.csv"))
	if r.code != ExitInvalid || !strings.Contains(r.err, "the folder "+missing+" does not exist") || strings.Contains(r.err, ".tmp-") || r.out != "" {
		t.Errorf("history --report into a missing folder: exit %d, want 2 naming the folder\n%s\n%s", r.code, r.out, r.err)
	}
}

// TestRecreateKeepsServiceChanges: a recreate (--recreate-on-date-change)
// would replace the old plan's counters with the file's. A counter the
// client changed on the service since eepipe wrote it fails the recreate
// (exit 1, nothing sent, the counter listed with its cell, values and
// run) instead of being lost with the old plan; --overwrite-service-changes
// recreates it with the file's values; without history it recreates as
// before.
func TestRecreateKeepsServiceChanges(t *testing.T) {
	s := newStateEnv(t, "")
	mk := func(file, end string) string {
		return writeCSV(t, filepath.Join(s.dir, file), []row{{name: "Moved", start: "2025-09-01", end: end,
			year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 5, cWFS, 6)}})
	}
	if r := s.eepipe("apply", mk("v1.csv", "2027-08-31"), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Moved")
	s.serviceEdit("Moved", cAMT, 9)
	v2 := mk("v2.csv", "2028-08-31") // new end date, the old counters
	s.srv.Sandbox.ResetStats()
	r := s.eepipe("apply", v2, "--recreate-on-date-change", "--no-recalc")
	if r.code != ExitDiff || s.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("recreate over a service change: exit %d, %d writes; want 1 and 0\n%s", r.code, s.srv.Sandbox.Stats().Writes, r.err)
	}
	for _, w := range []string{"not recreated", "--overwrite-service-changes",
		"v2.csv line 2, column 11: plan " + fmt.Sprint(id) + ` "Moved" year 1 (2025/26) all_employees ` + cAMT + ": file 5, service 9, last applied 5 by run 1"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("the message lacks %q:\n%s", w, r.err)
		}
	}
	if p, _, _, got := s.target("Moved"); p != id || got[cAMT] != 9 {
		t.Fatalf("plan %d holds %d after the refused recreate; want plan %d with 9", p, got[cAMT], id)
	}
	// --no-state: no history, recreated as before.
	if r := s.run("diff", v2, "--recreate-on-date-change", "--no-state"); r.code != ExitDiff || !strings.Contains(r.out, "recreate plan") {
		t.Errorf("diff --no-state: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// On request the file's values win.
	if r := s.eepipe("apply", v2, "--recreate-on-date-change", "--overwrite-service-changes", "--no-recalc"); r.code != 0 ||
		!strings.Contains(r.err, "overwritten (--overwrite-service-changes)") {
		t.Fatalf("recreate with --overwrite-service-changes: exit %d\n%s", r.code, r.err)
	}
	if p, _, _, got := s.target("Moved"); p == id || got[cAMT] != 5 || got[cWFS] != 6 {
		t.Errorf("after the recreate: plan %d, %s %d, %s %d; want a new plan with 5 and 6", p, cAMT, got[cAMT], cWFS, got[cWFS])
	}
}
