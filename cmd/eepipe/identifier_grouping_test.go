package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
)

var (
	validatePlans = regexp.MustCompile(`(\d+) plans?[ ,]`)
	diffPlans     = regexp.MustCompile(`Plan: (\d+) to create, (\d+) to update, (\d+) to recreate, (\d+) unchanged, (\d+) failed`)
	applyPlans    = regexp.MustCompile(`plans (\d+) created, (\d+) updated, (\d+) recreated, (\d+) unchanged, (\d+) failed, (\d+) not applied`)
)

// planCount sums the numbers re finds in s (the plans a summary counts),
// or -1 when s has no such summary.
func planCount(re *regexp.Regexp, s string) int {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	n := 0
	for _, d := range m[1:] {
		v, _ := strconv.Atoi(d)
		n += v
	}
	return n
}

// TestGroupingAgreesAcrossCommands: rows that spell one company's
// identifiers differently (registration with / and -, VAT with spaces,
// spaces around) are one plan for validate, diff and apply alike, and
// apply creates it once, with every row's target; the company is looked up
// once for all its spellings.
func TestGroupingAgreesAcrossCommands(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	sb := e.srv.Sandbox
	rows := []row{
		{vat: vatCrane, reg: regCrane, name: "Crane Plan", start: "2025-09-01", end: "2028-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cCMJ, 4)},
		{vat: "409 876 5432", reg: "2015-123456-07", name: "Crane Plan", start: "2025-09-01", end: "2028-08-31", year: 2, typ: pipeline.TargetAll, counters: counters(cCMJ, 5)},
		{vat: " 4098765432 ", reg: " 2015 123456 07", name: "Crane Plan", start: "2025-09-01", end: "2028-08-31", year: 3, typ: pipeline.TargetAll, counters: counters(cCMJ, 6)},
		{vat: vatCrane, reg: "2015.123456.07", name: "Crane Plan", start: "2025-09-01", end: "2028-08-31", year: 3, typ: pipeline.TargetDisabled, counters: counters(cCMJ, 1)},
		// Another plan of the company, spelt another way: one lookup serves both.
		{vat: "4098 765 432", reg: "2015-123456-07", name: "Crane Second", start: "2026-09-01", end: "2027-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cCMJ, 7)},
	}
	file := writeCSV(t, filepath.Join(e.dir, "spellings.csv"), rows)

	v := e.run("--config", e.config, "validate", file)
	if v.code != 0 || planCount(validatePlans, v.out) != 2 {
		t.Fatalf("validate: exit %d, %d plans, want 0 and 2\n%s%s", v.code, planCount(validatePlans, v.out), v.out, v.err)
	}
	d := e.run("--config", e.config, "diff", file)
	if d.code != 1 || planCount(diffPlans, d.out) != 2 || !strings.Contains(d.out, "Plan: 2 to create") {
		t.Fatalf("diff: exit %d, %d plans, want 1 and two plans to create\n%s%s", d.code, planCount(diffPlans, d.out), d.out, d.err)
	}
	if sb.Stats().Writes != 0 {
		t.Fatalf("diff wrote %d times", sb.Stats().Writes)
	}
	sb.ResetStats()
	a := e.run("--config", e.config, "apply", file, "--no-recalc")
	if a.code != 0 || planCount(applyPlans, a.err) != 2 || !strings.Contains(a.err, "plans 2 created") {
		t.Fatalf("apply: exit %d, %d plans, want 0 and two plans created\n%s%s", a.code, planCount(applyPlans, a.err), a.out, a.err)
	}
	if n := sb.Stats().ByRoute[routeLookup]; n != 1 {
		t.Errorf("%d company lookups, want 1 for every spelling of the company's identifiers", n)
	}
	crane := sb.Plans("bluecrane")
	if len(crane) != 2 || len(sb.Plans("acme")) != 0 {
		t.Fatalf("bluecrane holds %d plans, acme %d; want exactly two plans, on bluecrane", len(crane), len(sb.Plans("acme")))
	}
	if got := storedTarget(t, planNamed(t, crane, "Crane Second"), 1, pipeline.TargetAll)[cCMJ]; got != 7 {
		t.Errorf("Crane Second: %s = %d, want 7", cCMJ, got)
	}
	p := planNamed(t, crane, "Crane Plan")
	for _, w := range []struct {
		year int
		typ  string
		v    int64
	}{{1, pipeline.TargetAll, 4}, {2, pipeline.TargetAll, 5}, {3, pipeline.TargetAll, 6}, {3, pipeline.TargetDisabled, 1}} {
		if got := storedTarget(t, p, w.year, w.typ)[cCMJ]; got != w.v {
			t.Errorf("year %d %s: %s = %d, want %d", w.year, w.typ, cCMJ, got, w.v)
		}
	}
	// Applied, the file describes the one stored plan: nothing changes.
	if d := e.run("--config", e.config, "diff", file); d.code != 0 || planCount(diffPlans, d.out) != 2 {
		t.Errorf("diff after apply: exit %d, %d plans\n%s%s", d.code, planCount(diffPlans, d.out), d.out, d.err)
	}
}

// TestGroupingConflictSameEverywhere: rows of one plan (one company, one
// start) whose plan names differ only in letter case are one plan whose
// name the rows disagree on: validate, diff and apply all refuse the file
// with the same error, and nothing is written.
func TestGroupingConflictSameEverywhere(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	sb := e.srv.Sandbox
	rows := []row{
		{vat: vatCrane, reg: regCrane, name: "Crane Plan", start: "2025-09-01", end: "2027-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cCMJ, 4)},
		{vat: vatCrane, reg: "2015-123456-07", name: "CRANE PLAN", start: "2025-09-01", end: "2027-08-31", year: 2, typ: pipeline.TargetAll, counters: counters(cCMJ, 5)},
	}
	file := writeCSV(t, filepath.Join(e.dir, "names.csv"), rows)
	const want = "plan_name disagrees with an earlier row of the same plan"
	for _, cmd := range []string{"validate", "diff", "apply"} {
		r := e.run("--config", e.config, cmd, file)
		if r.code != ExitInvalid || !strings.Contains(r.out+r.err, want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s%s", cmd, r.code, ExitInvalid, want, r.out, r.err)
		}
		if cmd == "validate" && planCount(validatePlans, r.out) != 1 {
			t.Errorf("validate counts %d plans, want 1\n%s", planCount(validatePlans, r.out), r.out)
		}
	}
	if sb.Stats().Writes != 0 || len(sb.Plans("bluecrane")) != 0 {
		t.Errorf("%d writes, %d plans on bluecrane; want none", sb.Stats().Writes, len(sb.Plans("bluecrane")))
	}
}

// TestSkippedYearWarnedEverywhere: a new plan whose file gives years 1, 2,
// 4 and 5 of five is warned of by validate (it may be new), and diff and
// apply, which know it is new, say so once, naming the plan once and year
// 3 (not also as validate's warning; apply on a terminal too); the plan
// is still created. A file that gives plan_id for an existing plan is not
// warned of.
func TestSkippedYearWarnedEverywhere(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	var rows []row
	for _, y := range []int{1, 2, 4, 5} {
		rows = append(rows, row{vat: vatAcme, name: "Gap Plan", start: "2025-09-01", end: "2030-08-31", year: y, typ: pipeline.TargetAll, counters: counters(cAMT, y)})
	}
	file := writeCSV(t, filepath.Join(e.dir, "gap.csv"), rows)
	const plan = `plan "Gap Plan" starting 2025-09-01`
	const skipped = "year 3 (2027/28)"

	v := e.run("validate", file)
	if v.code != 0 || !strings.Contains(v.out, plan+" of company VAT "+vatAcme+" skips "+skipped) || !strings.Contains(v.out, "1 warning") {
		t.Fatalf("validate: exit %d, want 0 and the warning\n%s%s", v.code, v.out, v.err)
	}
	d := e.run("diff", file)
	// (The log is JSON lines here: the plan's quotes are escaped.)
	if d.code != 1 || strings.Count(d.out+d.err, skipped) != 1 || !strings.Contains(d.err, `plan \"Gap Plan\" starting 2025-09-01 is new and the file skips its `+skipped) {
		t.Fatalf("diff: exit %d, want 1 and the note, once\n%s%s", d.code, d.out, d.err)
	}
	f, _, errb := e.factory()
	f.IO.ErrTTY = true // a terminal: the plans shown, the summary for people
	code := Execute(context.Background(), f, []string{"apply", file, "--no-recalc"})
	a := errb.String()
	if code != 0 || strings.Count(a, skipped) != 1 || strings.Count(a, plan) != 2 || // the plan's line, and the note
		!strings.Contains(a, "  note: "+plan+" is new and the file skips its "+skipped+": the service fills that year with zeros") {
		t.Fatalf("apply: exit %d, want 0 and the note once, naming the plan once\n%s", code, a)
	}
	p := planNamed(t, e.srv.Sandbox.Plans("acme"), "Gap Plan")
	if c := storedTarget(t, p, 3, pipeline.TargetAll); c[cAMT] != 0 {
		t.Errorf("year 3 %s = %d; the service fills it with zeros", cAMT, c[cAMT])
	}

	// The plan is on the service now: with its plan_id the file is no
	// new plan, and nothing is warned of.
	for i := range rows {
		rows[i].planID = strconv.FormatInt(p.ID, 10)
	}
	writeCSV(t, file, rows)
	for _, cmd := range []string{"validate", "diff"} {
		r := e.run(cmd, file)
		if r.code != 0 || strings.Contains(r.out+r.err, "skips") {
			t.Errorf("%s with plan_id: exit %d, want 0 and no skipped-year warning\n%s%s", cmd, r.code, r.out, r.err)
		}
	}
}

// TestAccountLockFollowsAccountColumn: an account column naming an account
// in another letter case (which routing accepts) locks that account.
func TestAccountLockFollowsAccountColumn(t *testing.T) {
	cfg := &Config{BaseURL: "http://127.0.0.1:1", Accounts: []AccountConfig{{Name: "acme", APIKey: "mpk_a"}, {Name: "bluecrane", APIKey: "mpk_b"}}}
	plans := []*pipeline.InputPlan{{Account: "ACME"}, {Account: " acme "}}
	only := run.NamedAccounts(plans)
	if len(only) != 1 {
		t.Fatalf("named accounts %q, want one", only)
	}
	locks := accountLocks(cfg).Local(only)
	if len(locks) != 1 || locks[0].Name != "acme" || locks[0].Key != pipeline.AccountLockKey("mpk_a") {
		t.Errorf("locks %v, want account acme's", locks)
	}
}

// TestLookupStandardSpelling: a plan whose first row spells the
// registration number otherwise than the company's record (the lookup
// matches spellings exactly) is looked up again in the standard spelling,
// and created once on the company's account.
func TestLookupStandardSpelling(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	sb := e.srv.Sandbox
	rows := []row{
		{reg: "2015-123456-07", name: "Crane Plan", start: "2025-09-01", end: "2027-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cCMJ, 4)},
		{reg: regCrane, name: "Crane Plan", start: "2025-09-01", end: "2027-08-31", year: 2, typ: pipeline.TargetAll, counters: counters(cCMJ, 5)},
	}
	file := writeCSV(t, filepath.Join(e.dir, "dashes.csv"), rows)
	for _, cmd := range []string{"validate", "diff"} {
		r := e.run("--config", e.config, cmd, file)
		re := validatePlans
		if cmd == "diff" {
			re = diffPlans
		}
		if r.code == ExitInvalid || r.code == ExitFatal || planCount(re, r.out) != 1 {
			t.Fatalf("%s: exit %d, %d plans, want 1\n%s%s", cmd, r.code, planCount(re, r.out), r.out, r.err)
		}
	}
	sb.ResetStats()
	a := e.run("--config", e.config, "apply", file, "--no-recalc")
	if a.code != 0 || !strings.Contains(a.err, "plans 1 created") {
		t.Fatalf("apply: exit %d\n%s%s", a.code, a.out, a.err)
	}
	if n := sb.Stats().ByRoute[routeLookup]; n != 2 {
		t.Errorf("%d lookups, want 2 (the file's spelling, then the standard one)", n)
	}
	if got := storedTarget(t, planNamed(t, sb.Plans("bluecrane"), "Crane Plan"), 2, pipeline.TargetAll)[cCMJ]; got != 5 {
		t.Errorf("year 2: %d, want 5", got)
	}
}
