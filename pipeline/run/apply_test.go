package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

func run(t *testing.T, w *pipelinetest.World, plans []*pipeline.InputPlan, opts RunOptions) (*diff.ChangeSet, *RunReport) {
	t.Helper()
	r := NewRunner(w.Accounts, w.Finder, opts)
	cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return cs, rep
}

func TestApplyCreatesThenNothing(t *testing.T) {
	w := pipelinetest.NewWorld()
	plans := func() []*pipeline.InputPlan {
		return []*pipeline.InputPlan{
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}, map[string]int64{pipelinetest.Wfs: 4}),
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme B", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 7, pipelinetest.Wfs: 2}),
			pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "Crane", "2025-09-01", "2027-08-31", "scorecard_bluecrane_2025", map[string]int64{pipelinetest.Ifu: 1}),
		}
	}
	_, rep := run(t, w, plans(), RunOptions{})
	if !rep.OK() {
		var b bytes.Buffer
		rep.WriteSummary(&b)
		t.Fatalf("run not ok:\n%s", b.String())
	}
	s := rep.Summary()
	if s.PlansCreated != 3 {
		t.Errorf("created %d, want 3", s.PlansCreated)
	}
	// Acme A: 2 targets (amt 3; wfs 4); Acme B: prefill 7 everywhere, so only wfs 2; Crane: ifu 1.
	if s.TargetsPatched != 4 || s.CountersChanged != 4 {
		t.Errorf("patched %d targets / %d counters, want 4 / 4", s.TargetsPatched, s.CountersChanged)
	}
	if len(w.Acme.Plans) != 2 || len(w.Crane.Plans) != 1 {
		t.Fatalf("acme has %d plans, bluecrane %d", len(w.Acme.Plans), len(w.Crane.Plans))
	}
	for _, p := range w.Crane.Plans {
		if p.Name != "Crane" || p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Ifu] != 1 || p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Amt] != 7 {
			t.Errorf("crane plan not as the file says: %+v", p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Ifu])
		}
	}
	if got := w.Finder.Calls.Load(); got != 2 {
		t.Errorf("lookups = %d, want 2 (one per distinct identifier set)", got)
	}
	recalcs := map[string]bool{}
	for _, rc := range rep.Recalcs {
		if !rc.Accepted {
			t.Errorf("recalc %s failed: %v", rc.ScorecardID, rc.Err)
		}
		recalcs[rc.Account+"/"+rc.ScorecardID] = true
	}
	if len(recalcs) != 2 || !recalcs["acme/scorecard_acme_2025"] || !recalcs["bluecrane/scorecard_bluecrane_2025"] {
		t.Errorf("recalcs = %v", recalcs)
	}
	rows := rep.Rows()
	if len(rows) != 4 {
		t.Fatalf("rows = %d, want one per input target (4)", len(rows))
	}
	for _, row := range rows {
		if row.Outcome != OutcomeCreated || row.PlanID == 0 || row.TargetID == 0 || row.MilestoneID == 0 {
			t.Errorf("row %+v", row)
		}
	}

	// Second run: nothing to send.
	before := w.Acme.Writes() + w.Crane.Writes()
	cs, rep := run(t, w, plans(), RunOptions{})
	if cs.HasChanges() {
		var b bytes.Buffer
		cs.Render(&b, diff.RenderOptions{})
		t.Errorf("second run has changes:\n%s", b.String())
	}
	if after := w.Acme.Writes() + w.Crane.Writes(); after != before {
		t.Errorf("second run sent %d writes", after-before)
	}
	if s := rep.Summary(); s.PlansUnchanged != 3 || len(rep.Recalcs) != 0 {
		t.Errorf("second run summary %+v, recalcs %d", s, len(rep.Recalcs))
	}
	if c := w.Acme.Count("list"); c != 2 {
		t.Errorf("acme listed %d times over two runs, want 2", c)
	}
}

func TestApplyUpdateOnlyDiffering(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	_, rep := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1, pipelinetest.Wfs: 1})},
		RunOptions{NoRecalc: true})
	if !rep.OK() {
		t.Fatal("first run failed")
	}
	in := pipelinetest.InPlan("", "P", "2025-09-01", "", "", map[string]int64{pipelinetest.Amt: 1, pipelinetest.Wfs: 2, pipelinetest.Ifu: 0})
	in.Sector = "Construction"
	w.Acme.Calls = map[string]int{}
	cs, rep := run(t, w, []*pipeline.InputPlan{in}, RunOptions{})
	if cs.Plans[0].Action != diff.ActionUpdate {
		t.Fatalf("action %s", cs.Plans[0].Action)
	}
	if w.Acme.Count("target") != 1 || w.Acme.Count("update") != 1 || w.Acme.Count("create") != 0 {
		t.Errorf("calls %v", w.Acme.Calls)
	}
	if rep.Rows()[0].Changed != 1 || rep.Rows()[0].Outcome != OutcomeUpdated {
		t.Errorf("row %+v", rep.Rows()[0])
	}
}

func TestRoutingFailuresFailOnlyTheirPlans(t *testing.T) {
	w := pipelinetest.NewWorld()
	ambiguous := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Amb", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})
	ambiguous.Company.Registration = pipelinetest.CraneCo.RegistrationNumber
	plans := []*pipeline.InputPlan{
		pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Good", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		ambiguous,
		pipelinetest.InPlan("1111111111", "Unknown", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		pipelinetest.InPlan(pipelinetest.KarooCo.VATNumber, "No account", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
	}
	cs, rep := run(t, w, plans, RunOptions{})
	want := []struct {
		action diff.Action
		has    string
	}{
		{diff.ActionCreate, ""},
		{diff.ActionFailed, "ambiguous company"},
		{diff.ActionFailed, "company not found"},
		{diff.ActionFailed, "no configured account belongs to Karoo Sole Trader"},
	}
	for i, wt := range want {
		d := cs.Plans[i]
		if d.Action != wt.action || !strings.Contains(d.Reason, wt.has) {
			t.Errorf("plan %d: %s %q, want %s containing %q", i, d.Action, d.Reason, wt.action, wt.has)
		}
	}
	if s := rep.Summary(); s.PlansCreated != 1 || s.PlansFailed != 3 || rep.OK() {
		t.Errorf("summary %+v", s)
	}
	if !strings.Contains(cs.Plans[1].Reason, "Acme Foods") || !strings.Contains(cs.Plans[1].Reason, "Blue Crane") {
		t.Errorf("ambiguous message does not list the candidates: %s", cs.Plans[1].Reason)
	}
	if len(w.Crane.Plans) != 0 || len(w.Acme.Plans) != 1 {
		t.Error("a failed plan was written")
	}
}

func TestSingleAccountChecksCompany(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	plans := []*pipeline.InputPlan{
		pipelinetest.InPlan("", "No company", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "Other company", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
	}
	cs, _ := run(t, w, plans, RunOptions{})
	if cs.Plans[0].Action != diff.ActionCreate {
		t.Errorf("plan without company: %s %s", cs.Plans[0].Action, cs.Plans[0].Reason)
	}
	if cs.Plans[1].Action != diff.ActionFailed || !strings.Contains(cs.Plans[1].Reason, "belongs to company 8ovHrj") {
		t.Errorf("plan of another company: %s %s", cs.Plans[1].Action, cs.Plans[1].Reason)
	}
	if ps := assemble.CheckRouting(plans, pipelinetest.NewWorld().Accounts); len(ps) != 1 || ps[0].Severity != pipeline.Error {
		t.Errorf("CheckRouting with two accounts = %v", ps)
	}
}

func TestAmbiguousPlan(t *testing.T) {
	w := pipelinetest.NewWorld()
	for range 2 {
		w.Acme.CreatePlan(context.Background(), pipeline.NewPlan{Name: "Twice", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31")})
	}
	cs, _ := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Twice", "2025-09-01", "", "", map[string]int64{pipelinetest.Amt: 1})}, RunOptions{})
	if d := cs.Plans[0]; d.Action != diff.ActionFailed || !strings.Contains(d.Reason, "ambiguous plan") {
		t.Errorf("%s %s", d.Action, d.Reason)
	}
}

func TestLostCreateIsAdopted(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.LostCreates = 1
	_, rep := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Lost", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 2})}, RunOptions{})
	if !rep.OK() || len(w.Acme.Plans) != 1 || w.Acme.Count("create") != 1 {
		t.Fatalf("ok=%v plans=%d creates=%d", rep.OK(), len(w.Acme.Plans), w.Acme.Count("create"))
	}
	if n := rep.Plans[0].Notes; len(n) != 1 || !strings.Contains(n[0], "adopted") {
		t.Errorf("notes %v", n)
	}
	for _, p := range w.Acme.Plans {
		if p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Amt] != 2 {
			t.Error("adopted plan not patched")
		}
	}

	// A 429 on create is waited out by the client's retry policy
	// (planapi.TestRateLimitedCreateWaitedOut); here the create is unclear.
	w.Crane.FailCreates = 1
	_, rep = run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "Retry", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 2})}, RunOptions{})
	if !rep.OK() || len(w.Crane.Plans) != 1 || w.Crane.Count("create") != 2 {
		t.Fatalf("unclear create not applied must be sent again: ok=%v plans=%d creates=%d", rep.OK(), len(w.Crane.Plans), w.Crane.Count("create"))
	}
}

// TestRateLimitedCreateLeftToClient: the pipeline does not re-send a create
// refused with 429: the client's one retry policy did that already (see
// planapi.TestRateLimitedCreateWaitedOut), so a 429 that reaches the
// pipeline fails the plan, without a wait of the pipeline's own.
func TestRateLimitedCreateLeftToClient(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Crane.RateLimited = 1
	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	_, rep := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "Later", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 2})}, RunOptions{Sleep: sleep})
	if len(slept) != 0 || w.Crane.Count("create") != 1 {
		t.Fatalf("slept %v, %d creates: the pipeline must leave 429s to the client", slept, w.Crane.Count("create"))
	}
	if rep.OK() || len(w.Crane.Plans) != 0 || !errors.Is(rep.Plans[0].Err, pipeline.ErrRateLimited) {
		t.Fatalf("ok=%v plans=%d err=%v", rep.OK(), len(w.Crane.Plans), rep.Plans[0].Err)
	}
}

func TestRecalcWaitsThrough409(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.Conflicts = 6
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var slept []time.Duration
	var events []RecalcEvent
	opts := RunOptions{
		RecalcBackoff: 2 * time.Second, // doubling up to 30 times itself: 60s
		Now:           func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(d)
			slept = append(slept, d)
			return nil
		},
		Observer: observerFuncs{recalc: func(e RecalcEvent) { events = append(events, e) }},
	}
	r := NewRunner(w.Accounts, w.Finder, opts)
	res := r.Recalc(context.Background(), []RecalcRequest{{Account: "acme", ScorecardID: "scorecard_acme_2025"}})
	if !res[0].Accepted || res[0].Attempts != 7 {
		t.Fatalf("result %+v", res[0])
	}
	if fmt.Sprint(slept) != "[2s 4s 8s 16s 32s 1m0s]" {
		t.Errorf("backoff %v, want doubling capped at 30 times the first wait [2s 4s 8s 16s 32s 1m0s]", slept)
	}
	if len(events) != 7 || events[0].Waiting != 2*time.Second || !events[6].Done {
		t.Errorf("events %+v", events)
	}

	w.Acme.Conflicts = 1000
	opts.RecalcWait = 200 * time.Second
	slept = nil
	r = NewRunner(w.Accounts, w.Finder, opts)
	res = r.Recalc(context.Background(), []RecalcRequest{{Account: "acme", ScorecardID: "scorecard_acme_2025"}})
	if res[0].Accepted || !strings.Contains(res[0].Err.Error(), "still running after waiting 3m20s") {
		t.Fatalf("result %+v %v", res[0], res[0].Err)
	}
	if fmt.Sprint(slept) != "[2s 4s 8s 16s 32s 1m0s 1m0s 18s]" {
		t.Errorf("slept %v, want the wait to end exactly at --recalc-wait", slept)
	}
	res = r.Recalc(context.Background(), []RecalcRequest{{Account: "acme", ScorecardID: "scorecard_nope"}})
	if res[0].Accepted || !errors.Is(res[0].Err, pipeline.ErrNotFound) {
		t.Errorf("unknown scorecard: %v", res[0].Err)
	}
}

func TestConcurrencyBoundAcrossAccounts(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.Delay, w.Crane.Delay = 2*time.Millisecond, 2*time.Millisecond
	var plans []*pipeline.InputPlan
	for i := range 12 {
		vat := pipelinetest.AcmeCo.VATNumber
		if i%2 == 1 {
			vat = pipelinetest.CraneCo.VATNumber
		}
		plans = append(plans, pipelinetest.InPlan(vat, fmt.Sprint("P", i), "2025-09-01", "2030-08-31", "",
			map[string]int64{pipelinetest.Amt: 1}, map[string]int64{pipelinetest.Amt: 2}, map[string]int64{pipelinetest.Amt: 3}))
	}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 3, NoRecalc: true})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatal("run failed")
	}
	inflight := w.Acme.MaxSeen.Load() + w.Crane.MaxSeen.Load()
	if rep.Requests.MaxInFlight > 3 || w.Acme.MaxSeen.Load() > 3 || w.Crane.MaxSeen.Load() > 3 {
		t.Errorf("max in flight %d (acme %d, crane %d), want <= 3", rep.Requests.MaxInFlight, w.Acme.MaxSeen.Load(), w.Crane.MaxSeen.Load())
	}
	if inflight < 2 {
		t.Errorf("requests never overlapped (max %d); the bound is not exercised", inflight)
	}
	if got, want := rep.Requests.ByKind["update_target"], int64(36); got != want {
		t.Errorf("target patches %d, want %d", got, want)
	}
}

// TestRefusedAccountStopsOnlyItself: a key pair refused for one account stops that account only: its plans
// fail with a message naming the account and the key (never the secret),
// and the other accounts' plans go on.
func TestRefusedAccountStopsOnlyItself(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Crane.Unauthorized = true
	w.Accounts[1].KeyHint = pipeline.KeyHint("mpk_bluecrane_0123456789")
	var plans []*pipeline.InputPlan
	for i := range 4 {
		plans = append(plans, pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprint("A", i), "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}))
	}
	plans = append(plans, pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "C", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}))
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 1})
	cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
	if err != nil || r.Fatal() != nil {
		t.Fatalf("apply error %v, fatal %v", err, r.Fatal())
	}
	crane := cs.Plans[4]
	if crane.Action != diff.ActionFailed || !strings.Contains(crane.Reason, "account bluecrane: key mpk_blue… refused: check its secret") {
		t.Errorf("bluecrane plan: %v %q", crane.Action, crane.Reason)
	}
	if rep.Fatal != nil || rep.Summary().PlansCreated != 4 || rep.Summary().PlansFailed != 1 {
		t.Errorf("report fatal %v, %+v", rep.Fatal, rep.Summary())
	}
	if w.Crane.Writes() != 0 {
		t.Errorf("%d writes with a refused key", w.Crane.Writes())
	}
}

// TestFatalStopsDispatch: when every account of the run is refused, the run stops: nothing is left to do.
func TestFatalStopsDispatch(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.Unauthorized = true
	w.Crane.Unauthorized = true
	var plans []*pipeline.InputPlan
	for i := range 4 {
		plans = append(plans, pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprint("A", i), "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}))
	}
	plans = append(plans, pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "C", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}))
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Concurrency: 1})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
	if err != nil || !errors.Is(r.Fatal(), pipeline.ErrUnauthorized) {
		t.Fatalf("apply error %v, fatal %v", err, r.Fatal())
	}
	if w.Acme.Writes() != 0 {
		t.Errorf("%d writes after a fatal error", w.Acme.Writes())
	}
	if rep.Fatal == nil || rep.Summary().PlansCreated != 0 {
		t.Errorf("report %+v", rep.Summary())
	}
	var b bytes.Buffer
	rep.WriteSummary(&b)
	if !strings.Contains(b.String(), "fatal error") {
		t.Errorf("summary:\n%s", b.String())
	}
}

func TestInterruptFinishesInFlightAndReports(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	w.Acme.Delay = 5 * time.Millisecond
	var plans []*pipeline.InputPlan
	for i := range 20 {
		plans = append(plans, pipelinetest.InPlan("", fmt.Sprint("P", i), "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	r := NewRunner(w.Accounts, nil, RunOptions{Concurrency: 2, Observer: observerFuncs{done: func(*PlanResult) { once.Do(cancel) }}})
	_, rep, _, err := r.PlanApply(ctx, plans, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary()
	if !rep.Interrupted || s.PlansNotApplied == 0 || s.PlansCreated == 0 {
		t.Fatalf("interrupted=%v summary %+v", rep.Interrupted, s)
	}
	if int(s.PlansCreated)+s.PlansFailed+s.PlansNotApplied != 20 {
		t.Errorf("plans unaccounted for: %+v", s)
	}
	// Every plan the service holds is accounted for as created or failed (partly applied).
	if len(w.Acme.Plans) != s.PlansCreated+s.PlansFailed {
		t.Errorf("service holds %d plans, report says %d created + %d failed", len(w.Acme.Plans), s.PlansCreated, s.PlansFailed)
	}
	for _, row := range rep.Rows() {
		if row.Outcome == OutcomeNotApplied && row.Error == "" {
			t.Errorf("not applied row without reason: %+v", row)
		}
	}
}

func TestRecreateOnDateChange(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})}, RunOptions{})
	in := func() []*pipeline.InputPlan {
		return []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 1})}
	}
	cs, rep := run(t, w, in(), RunOptions{})
	if cs.Plans[0].Action != diff.ActionFailed || rep.OK() {
		t.Fatal("date change must fail without the flag")
	}
	cs, rep = run(t, w, in(), RunOptions{Diff: diff.DiffOptions{RecreateOnDateChange: true}})
	if cs.Plans[0].Action != diff.ActionRecreate || !rep.OK() || rep.Plans[0].Outcome != OutcomeRecreated {
		t.Fatalf("recreate: %s %v", cs.Plans[0].Action, rep.Plans[0].Err)
	}
	if len(w.Acme.Plans) != 1 {
		t.Fatalf("%d plans after recreate", len(w.Acme.Plans))
	}
	for id, p := range w.Acme.Plans {
		if id != rep.Plans[0].PlanID || p.EndDate != pipelinetest.Day("2027-08-31") || len(p.Milestones) != 2 || p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Amt] != 1 {
			t.Errorf("recreated plan %+v", p)
		}
	}
}

func TestTargetFailureIsReportedPerRow(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}, map[string]int64{pipelinetest.Amt: 1})}, RunOptions{})
	var bad int64
	for _, p := range w.Acme.Plans {
		bad = p.Milestones[1].Targets[0].ID
	}
	w.Acme.FailTarget = bad
	_, rep := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "", "", map[string]int64{pipelinetest.Amt: 2}, map[string]int64{pipelinetest.Amt: 2})}, RunOptions{})
	rows := rep.Rows()
	if rows[0].Outcome != OutcomeUpdated || rows[1].Outcome != OutcomeFailed || !strings.Contains(rows[1].Error, "not patched") {
		t.Errorf("rows %+v", rows)
	}
	if rep.Plans[0].Outcome != OutcomeFailed || rep.OK() {
		t.Error("plan with a failed target must fail")
	}
	var b bytes.Buffer
	rep.WriteSummary(&b)
	if !strings.Contains(b.String(), "partly applied") || !strings.Contains(b.String(), "1 of 2 target patches applied") {
		t.Errorf("summary:\n%s", b.String())
	}
}

func TestRecreateCarriesOverBlankCounters(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	full := func(v int64) map[string]int64 { return map[string]int64{pipelinetest.Amt: v, pipelinetest.Wfs: 3} }
	first := pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", full(5), full(6), full(7))
	first.Targets = append(first.Targets, &pipeline.InputTarget{Origin: first.Origin, YearNumber: 2, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Ifu: 2})})
	if _, rep := run(t, w, []*pipeline.InputPlan{first}, RunOptions{}); !rep.OK() {
		t.Fatal("first run failed")
	}
	// The new dates keep years 2025/26 and 2026/27; the file sets one counter.
	in := pipelinetest.InPlan("", "P", "2025-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 9})
	_, rep := run(t, w, []*pipeline.InputPlan{in}, RunOptions{Diff: diff.DiffOptions{RecreateOnDateChange: true}})
	if !rep.OK() || rep.Plans[0].Outcome != OutcomeRecreated {
		t.Fatalf("recreate failed: %v", rep.Plans[0].Err)
	}
	p := w.Acme.Plans[rep.Plans[0].PlanID]
	if len(p.Milestones) != 2 {
		t.Fatalf("%d milestones", len(p.Milestones))
	}
	want := []map[string]int64{{pipelinetest.Amt: 9, pipelinetest.Wfs: 3}, {}, {pipelinetest.Amt: 6, pipelinetest.Wfs: 3}, {pipelinetest.Ifu: 2}}
	for i, m := range p.Milestones {
		for j, tg := range m.Targets {
			for n, v := range want[2*i+j] {
				if tg.Counters.Map()[n] != v {
					t.Errorf("year %d %s %s = %d, want %d (carried over)", m.YearNumber, tg.TargetType, n, tg.Counters.Map()[n], v)
				}
			}
		}
	}
	if rows := rep.Rows(); len(rows) != 1 || rows[0].Outcome != OutcomeRecreated || rows[0].Changed != 2 {
		t.Errorf("rows %+v", rows)
	}
	// Applying the same file again changes nothing.
	cs, _ := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 9})}, RunOptions{})
	if cs.HasChanges() {
		t.Errorf("after the recreate the file still differs: %+v", cs.Plans[0])
	}
}

func TestDryRunSummaryCountsWhatWouldBePatched(t *testing.T) {
	w := pipelinetest.NewWorld()
	plans := []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 1}, map[string]int64{pipelinetest.Wfs: 4})}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{})
	cs, err := r.Plan(context.Background(), plans)
	if err != nil {
		t.Fatal(err)
	}
	want := cs.Summary()
	s := r.DryRun(cs, time.Now()).Summary()
	if s.PlansCreated != 1 || s.TargetsPatched != want.TargetsToPatch || s.CountersChanged != want.CountersToChange || s.TargetsPatched == 0 {
		t.Fatalf("dry-run summary %+v, change set %+v", s, want)
	}
	if w.Acme.Count("create") != 0 {
		t.Fatal("a dry run created a plan")
	}
}

// patchingService is a fake service that can patch without answering the
// target back (a TargetPatcher), as planapi's is.
type patchingService struct {
	*pipelinetest.FakeService
	patches atomic.Int64
}

func (s *patchingService) PatchTarget(ctx context.Context, planID, milestoneID, targetID int64, counters map[string]int64) error {
	s.patches.Add(1)
	_, err := s.FakeService.UpdateTarget(ctx, planID, milestoneID, targetID, counters)
	return err
}

// TestApplyPatchesWithoutReadingBack: when the service is a TargetPatcher,
// apply patches through it (the answer is not decoded), through the gate:
// the request counts are the same.
func TestApplyPatchesWithoutReadingBack(t *testing.T) {
	w := pipelinetest.NewWorld()
	ps := &patchingService{FakeService: w.Acme}
	w.Accounts[0].Service = ps
	_, rep := run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}, map[string]int64{pipelinetest.Wfs: 4})}, RunOptions{NoRecalc: true})
	if !rep.OK() {
		t.Fatalf("run not ok: %+v", rep.Summary())
	}
	if n := ps.patches.Load(); n == 0 || n != int64(w.Acme.Count("target")) || rep.Requests.ByKind["update_target"] != n {
		t.Errorf("%d patches through PatchTarget, %d target calls, %d counted", n, w.Acme.Count("target"), rep.Requests.ByKind["update_target"])
	}
}

// TestCreatedPlanKeepsCountsOnly: once a created plan is written, its own
// diff keeps its changes as counts (DropChanges), and so do its results
// when no report lists them (RunOptions.CountsOnly); the report counts
// what was sent and what the service already held as before.
func TestCreatedPlanKeepsCountsOnly(t *testing.T) {
	plans := []*pipeline.InputPlan{
		pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3}),
		pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme B", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 7, pipelinetest.Wfs: 2}),
	}
	for _, countsOnly := range []bool{false, true} {
		w := pipelinetest.NewWorld()
		_, rep := run(t, w, plans, RunOptions{CountsOnly: countsOnly})
		if !rep.OK() {
			t.Fatal("run not ok")
		}
		for _, p := range rep.Plans {
			if p.Outcome != OutcomeCreated {
				t.Fatalf("%s: %s", p.Diff.Title(), p.Outcome)
			}
			for _, td := range p.Diff.Targets {
				if td.Changes != nil {
					t.Errorf("%s: its diff kept %d changes", p.Diff.Title(), len(td.Changes))
				}
			}
			for _, tr := range p.Targets {
				if kept := tr.Diff.Changes != nil; kept == countsOnly {
					t.Errorf("counts only %v: %s target %d kept its changes: %v", countsOnly, p.Diff.Title(), tr.Diff.TargetID, kept)
				}
			}
		}
		// Acme A: amt 3 sent; Acme B's prefill already held amt 7, so
		// only wfs 2 was sent.
		if s := rep.Summary(); s.TargetsPatched != 2 || s.CountersChanged != 2 {
			t.Errorf("counts only %v: patched %d targets / %d counters, want 2 / 2", countsOnly, s.TargetsPatched, s.CountersChanged)
		}
		if c, n := rep.AlreadyHeld(); c != 1 || n != 0 {
			t.Errorf("counts only %v: already held %d counters, %d targets; want 1, 0", countsOnly, c, n)
		}
	}
}
