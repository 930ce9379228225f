package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// seeded returns a world whose acme account holds n plans "Seed i" made
// from the file (amt i+1 in year 1), and the input plans, to change.
func seeded(t *testing.T, n int) (*pipelinetest.World, []*pipeline.InputPlan) {
	t.Helper()
	plans := func() []*pipeline.InputPlan {
		var ps []*pipeline.InputPlan
		for i := range n {
			p := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprintf("Seed %d", i), "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: int64(i + 1)})
			p.Origin.Row = 2 + i
			ps = append(ps, p)
		}
		return ps
	}
	w := pipelinetest.NewWorld()
	if _, rep := run(t, w, plans(), RunOptions{NoRecalc: true}); !rep.OK() {
		t.Fatalf("seed: %+v", rep.Summary())
	}
	return w, plans()
}

// fixedLastWrites is a LastWriteSource holding one value per counter of any
// target, or failing.
type fixedLastWrites struct {
	value int64
	fail  error
}

func (l fixedLastWrites) LastWrites(_ context.Context, _, _ string, ids []int64) (map[pipeline.CounterKey]pipeline.LastWrite, error) {
	if l.fail != nil {
		return nil, l.fail
	}
	out := map[pipeline.CounterKey]pipeline.LastWrite{}
	for _, id := range ids {
		out[pipeline.CounterKey{TargetID: id, Counter: pipelinetest.Amt}] = pipeline.LastWrite{Value: l.value, RunID: 1}
	}
	return out, nil
}

// classifyWith is the Classify hook over src, apply's (HoldBack.Plan).
func classifyWith(src diff.LastWriteSource, overwrite bool) func(context.Context, *diff.PlanDiff) ([]diff.HeldChange, error) {
	return diff.HoldBack{Source: src, Service: "svc", Overwrite: overwrite}.Plan
}

func TestPlanApplyGivesWhatPlanThenApplyGives(t *testing.T) {
	build := func() (*pipelinetest.World, []*pipeline.InputPlan) {
		w, plans := seeded(t, 6)
		for i := 0; i < 6; i += 2 {
			plans[i].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 40 + int64(i)})
		}
		plans = append(plans, pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "New crane", "2025-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Ifu: 2}))
		return w, plans
	}
	w1, p1 := build()
	cs1, rep1 := run(t, w1, p1, RunOptions{NoRecalc: true})
	w2, p2 := build()
	r := NewRunner(w2.Accounts, w2.Finder, RunOptions{NoRecalc: true, Concurrency: 2})
	cs2, rep2, held, err := r.PlanApply(context.Background(), p2, time.Now(), ApplyHooks{})
	if err != nil || len(held) != 0 {
		t.Fatalf("PlanApply: %v, held %v", err, held)
	}
	if cs1.Summary() != cs2.Summary() {
		t.Errorf("change sets differ: Plan %+v, PlanApply %+v", cs1.Summary(), cs2.Summary())
	}
	s1, s2 := rep1.Summary(), rep2.Summary()
	s1.Requests, s2.Requests, s1.Elapsed, s2.Elapsed = 0, 0, 0, 0
	if s1 != s2 {
		t.Errorf("reports differ:\nPlan+Apply %+v\nPlanApply  %+v", s1, s2)
	}
	for i := range cs1.Plans {
		if cs1.Plans[i].Action != cs2.Plans[i].Action || cs2.Plans[i].Input != p2[i] || rep2.Plans[i].Diff != cs2.Plans[i] {
			t.Errorf("plan %d: %s / %s, not in input order", i, cs1.Plans[i].Action, cs2.Plans[i].Action)
		}
	}
	if g1, g2 := w1.Acme.Count("get"), w2.Acme.Count("get"); g1 != g2 {
		t.Errorf("gets: Plan+Apply %d, PlanApply %d", g1, g2)
	}
}

func TestPlanApplyDoesNotWriteHeldChanges(t *testing.T) {
	w, plans := seeded(t, 3)
	// Plan 0: the service still holds what eepipe wrote (1): changed in
	// the file, written. Plan 1: the service holds 2 but eepipe last wrote
	// 50, the file's new value: changed on the service, held.
	plans[0].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 60})
	plans[1].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 50})
	src := map[int]diff.LastWriteSource{0: fixedLastWrites{value: 1}, 1: fixedLastWrites{value: 50}, 2: fixedLastWrites{value: 3}}
	before := w.Acme.Count("target")
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: 4})
	cs, rep, held, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		Classify: func(ctx context.Context, d *diff.PlanDiff) ([]diff.HeldChange, error) {
			return classifyWith(src[slices.Index(plans, d.Input)], false)(ctx, d)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || held[0].Plan != cs.Plans[1] || held[0].Change.New != 50 || held[0].Change.Class != diff.ClassService {
		t.Fatalf("held %+v", held)
	}
	if cs.Plans[1].Action != diff.ActionUnchanged || rep.Plans[1].Outcome != outcomeUnchanged || rep.Plans[1].Wrote {
		t.Errorf("held plan: %s, %s", cs.Plans[1].Action, rep.Plans[1].Outcome)
	}
	if rep.Plans[0].Outcome != OutcomeUpdated || cs.Plans[0].Targets[0].Changes[0].Class != diff.ClassFile {
		t.Errorf("plan 0: %s", rep.Plans[0].Outcome)
	}
	if got := w.Acme.Count("target") - before; got != 1 {
		t.Errorf("%d target writes, want 1 (plan 0's only)", got)
	}
	for _, p := range w.Acme.Plans {
		if p.Name == "Seed 1" && p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Amt] != 2 {
			t.Errorf("the held counter was written: %d", p.Milestones[0].Targets[0].Counters.Map()[pipelinetest.Amt])
		}
	}
}

func TestPlanApplyStoreFailureWritesNothingMore(t *testing.T) {
	w, plans := seeded(t, 3)
	for i, p := range plans {
		p.Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 70 + int64(i)})
	}
	before := w.Acme.Writes()
	down := errors.New("reading the state store: database is locked")
	// One worker: plan 0 is written, plan 1's classification fails (it is
	// not written, and the run stops), plan 2 is not started.
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: 1})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		Classify: func(ctx context.Context, d *diff.PlanDiff) ([]diff.HeldChange, error) {
			if d.Input == plans[1] {
				return nil, down
			}
			return classifyWith(nil, false)(ctx, d)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Acme.Writes() - before; got != 1 {
		t.Errorf("%d writes, want 1 (plan 0's)", got)
	}
	if !errors.Is(rep.Fatal, down) {
		t.Errorf("fatal %v, want the store's failure", rep.Fatal)
	}
	if o := rep.Plans[1].Outcome; o != OutcomeNotApplied || !errors.Is(rep.Plans[1].Err, down) {
		t.Errorf("plan 1: %s %v", o, rep.Plans[1].Err)
	}
	if o := rep.Plans[2].Outcome; o != OutcomeNotApplied || rep.Plans[2].Wrote {
		t.Errorf("plan 2: %s", o)
	}

	// Every plan's classification failing: nothing is written at all.
	w, plans = seeded(t, 3)
	for i, p := range plans {
		p.Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 70 + int64(i)})
	}
	before = w.Acme.Writes()
	r = NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: 8})
	_, rep, _, _ = r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{Classify: classifyWith(fixedLastWrites{fail: down}, false)})
	if got := w.Acme.Writes() - before; got != 0 || rep.Fatal == nil || rep.OK() {
		t.Errorf("store down: %d writes, fatal %v", got, rep.Fatal)
	}
}

func TestPlanApplyDuplicateClaimBlocksBothBeforeAnyWrite(t *testing.T) {
	w, plans := seeded(t, 3)
	var ids []int64
	for id := range w.Acme.Plans {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// Rows 0 and 1 both name stored plan ids[0] by plan_id; rows 3 and 4
	// would both create "Twin"; row 2 changes Seed 2.
	plans[0].PlanID = ids[0]
	plans[0].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 90})
	plans[1].PlanID = ids[0]
	plans[1].Name = ""
	plans[2].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 91})
	twin := func(row int) *pipeline.InputPlan {
		p := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Twin", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 5})
		p.Origin.Row = row
		return p
	}
	plans = append(plans, twin(10), twin(11))
	gets, writes := w.Acme.Count("get"), w.Acme.Writes()
	var atBegin [2]int
	st := &runsStore{begin: func(pipeline.RunRecord) error {
		atBegin = [2]int{w.Acme.Count("get") - gets, w.Acme.Writes() - writes}
		return nil
	}}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: 4, History: &RunHistory{Store: st}})
	cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if atBegin[1] != 0 || atBegin[0] > 1 {
		t.Errorf("at Begin: %d gets, %d writes; want at most the one read, no write", atBegin[0], atBegin[1])
	}
	for _, i := range []int{0, 1, 3, 4} {
		if cs.Plans[i].Action != diff.ActionFailed || rep.Plans[i].Outcome != OutcomeFailed || rep.Plans[i].Wrote {
			t.Errorf("row %d: %s %s: %s", i, cs.Plans[i].Action, rep.Plans[i].Outcome, cs.Plans[i].Reason)
		}
		if cs.Plans[i].Account != "acme" {
			t.Errorf("row %d: account %q", i, cs.Plans[i].Account)
		}
	}
	if rep.Plans[2].Outcome != OutcomeUpdated {
		t.Errorf("row 2: %s", rep.Plans[2].Outcome)
	}
	if got := w.Acme.Count("get") - gets; got != 1 {
		t.Errorf("%d gets, want 1: the claimed plan is not even read", got)
	}
	if got := w.Acme.Writes() - writes; got != 1 || w.Acme.Count("create") != 3 {
		t.Errorf("%d writes (want 1), %d creates (want the 3 of the seed)", got, w.Acme.Count("create"))
	}
}

func TestPlanApplyHooksBeforeAnyWrite(t *testing.T) {
	w, plans := seeded(t, 4)
	for i, p := range plans {
		p.Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 80 + int64(i)})
	}
	plans = append(plans, pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Fresh", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 5}))
	gets, writes := w.Acme.Count("get"), w.Acme.Writes()
	lists := w.Acme.Count("list")
	var lockAt, beginAt [2]int
	var locked []string
	st := &runsStore{begin: func(pipeline.RunRecord) error {
		beginAt = [2]int{w.Acme.Count("get") - gets, w.Acme.Writes() - writes}
		return nil
	}}
	var compared, done int // the Observer's calls, one at a time
	obs := observerFuncs{
		compared: func(*diff.PlanDiff) { compared++ },
		done:     func(*PlanResult) { done++ },
	}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: 3, CheckServed: true, Observer: obs,
		History: &RunHistory{Store: st, Run: pipeline.RunRecord{User: "u"}}})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		Lock: func(_ context.Context, names []string) error {
			locked = names
			lockAt = [2]int{w.Acme.Count("list") - lists, w.Acme.Count("get") - gets}
			return nil
		},
	})
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep.Summary())
	}
	if len(st.begun) != 1 || !slices.Equal(locked, []string{"acme"}) || !slices.Equal(st.begun[0].Accounts, []string{"acme"}) || st.begun[0].User != "u" {
		t.Fatalf("locked %v, recorded %+v", locked, st.begun)
	}
	if lockAt != [2]int{0, 0} {
		t.Errorf("at Lock: %d lists, %d gets; want none", lockAt[0], lockAt[1])
	}
	if beginAt[0] < 1 || beginAt[1] != 0 {
		t.Errorf("at the catalog check and the run's record: %d gets, %d writes; want a read and no write", beginAt[0], beginAt[1])
	}
	if !slices.Equal(st.finished, []string{"ok"}) {
		t.Errorf("the run's end recorded as %v", st.finished)
	}
	if compared != len(plans) || done != len(plans) {
		t.Errorf("the observer saw %d plans compared and %d done, want %d each", compared, done, len(plans))
	}
	if got := w.Acme.Writes() - writes; got != 6 {
		t.Errorf("%d writes, want 4 patches, a create and its patch", got)
	}

	// A hook's error, a counter the service lacks, or a failure to
	// record the run stops the run before any write.
	for _, stop := range []string{"lock", "catalog", "record"} {
		w, plans := seeded(t, 4)
		for i, p := range plans {
			p.Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 80 + int64(i)})
		}
		writes := w.Acme.Writes()
		no := errors.New("no")
		hooks := ApplyHooks{}
		opts := RunOptions{NoRecalc: true, Concurrency: 3, CheckServed: true}
		var want func(error) bool
		switch stop {
		case "lock":
			hooks.Lock = func(context.Context, []string) error { return no }
			want = func(err error) bool { return errors.Is(err, no) }
		case "catalog":
			plans[1].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 1, "not_served_here": 2})
			want = func(err error) bool { return errors.As(err, new(*ServedCatalogError)) }
		case "record":
			opts.History = &RunHistory{Store: &runsStore{begin: func(pipeline.RunRecord) error { return no }}}
			want = func(err error) bool { return errors.Is(err, no) && errors.As(err, new(*RecordError)) }
		}
		r := NewRunner(w.Accounts, w.Finder, opts)
		cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), hooks)
		if !want(err) || cs != nil || rep != nil || w.Acme.Writes() != writes {
			t.Errorf("%s fails: err %v, %d writes", stop, err, w.Acme.Writes()-writes)
		}
	}
}

func TestPlanApplyStopBeforeComparingAppliesNothing(t *testing.T) {
	w, plans := seeded(t, 2)
	writes := w.Acme.Writes()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := &runsStore{begin: func(pipeline.RunRecord) error { t.Error("a stopped run recorded"); return nil }}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, CheckServed: true, History: &RunHistory{Store: st}})
	cs, rep, _, err := r.PlanApply(ctx, plans, time.Now(), ApplyHooks{})
	if err != nil || !rep.Interrupted {
		t.Fatalf("err %v, interrupted %v", err, rep.Interrupted)
	}
	for i, res := range rep.Plans {
		if res.Wrote || res.Outcome != OutcomeNotApplied || cs.Plans[i] == nil {
			t.Errorf("plan %d: %s", i, res.Outcome)
		}
	}
	if w.Acme.Writes() != writes {
		t.Error("a stopped run wrote")
	}
}

// TestPlanApplyListsAgainAfterLock: plans routed by their plan_id need
// every account's list before the accounts to lock are known; the lists
// matching reads are taken again under the lock.
func TestPlanApplyListsAgainAfterLock(t *testing.T) {
	w, plans := seeded(t, 1)
	var id int64
	for k := range w.Acme.Plans {
		id = k
	}
	p := plans[0]
	p.Company, p.PlanID = pipeline.CompanyIDs{}, id
	p.Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 33})
	acmeLists, craneLists := w.Acme.Count("list"), w.Crane.Count("list")
	var atLock int
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		Lock: func(_ context.Context, names []string) error {
			atLock = w.Acme.Count("list") - acmeLists
			if !slices.Equal(names, []string{"acme"}) {
				t.Errorf("locked %v", names)
			}
			return nil
		},
	})
	if err != nil || rep.Plans[0].Outcome != OutcomeUpdated {
		t.Fatalf("%v %s %v", err, rep.Plans[0].Outcome, rep.Plans[0].Err)
	}
	if atLock != 1 || w.Acme.Count("list")-acmeLists != 2 || w.Crane.Count("list")-craneLists != 1 {
		t.Errorf("acme listed %d times before the lock, %d in all; bluecrane %d", atLock, w.Acme.Count("list")-acmeLists, w.Crane.Count("list")-craneLists)
	}
}

// TestPlanApplyCreatesFirstInInputDoNotWaitForever: a plan to create waits
// for the first read before the first write (the catalog check); with
// plans to create first in the input and one worker, the reads still go
// out (the plans to read are started first).
func TestPlanApplyCreatesFirstInInputDoNotWaitForever(t *testing.T) {
	for _, workers := range []int{1, 2} {
		w, stored := seeded(t, 2)
		stored[0].Targets[0].Counters = pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 55})
		plans := []*pipeline.InputPlan{
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "New A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 5}),
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "New B", "2026-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 6}),
			stored[0], stored[1],
		}
		seedWrites := w.Acme.Writes()
		readyAt := -1
		st := &runsStore{begin: func(pipeline.RunRecord) error { readyAt = w.Acme.Writes(); return nil }}
		r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Concurrency: workers, CheckServed: true, History: &RunHistory{Store: st}})
		cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{})
		if err != nil || !rep.OK() {
			t.Fatalf("%d workers: %v %+v", workers, err, rep.Summary())
		}
		if s := rep.Summary(); s.PlansCreated != 2 || s.PlansUpdated != 1 || s.PlansUnchanged != 1 {
			t.Errorf("%d workers: %+v", workers, s)
		}
		if cs.Plans[0].Input != plans[0] || rep.Plans[3].Diff.Input != plans[3] {
			t.Errorf("%d workers: not in input order", workers)
		}
		if readyAt != seedWrites {
			t.Errorf("%d workers: the catalog check and record after %d writes of the run, want before the first", workers, readyAt-seedWrites)
		}
	}
}

// TestPlanApplyLocksLocalFirst: the local locks of the accounts the plans
// name are taken before anything is read from the service, and a refused
// lock stops the run with nothing read or written.
func TestPlanApplyLocksLocalFirst(t *testing.T) {
	w, plans := seeded(t, 3)
	lists, gets, writes := w.Acme.Count("list"), w.Acme.Count("get"), w.Acme.Writes()
	var order []string
	r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true})
	_, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		LockLocal: func(_ context.Context, names []string) error {
			order = append(order, fmt.Sprintf("local %v after %d lists", names, w.Acme.Count("list")-lists))
			return nil
		},
		Lock: func(_ context.Context, names []string) error {
			order = append(order, fmt.Sprintf("store %v", names))
			return nil
		},
	})
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep.Summary())
	}
	if want := "local [] after 0 lists, store [acme]"; strings.Join(order, ", ") != want {
		t.Errorf("locks taken %q, want %q", strings.Join(order, ", "), want)
	}

	w, plans = seeded(t, 3)
	lists, gets, writes = w.Acme.Count("list"), w.Acme.Count("get"), w.Acme.Writes()
	held := errors.New("held by another run")
	r = NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true})
	cs, rep, _, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{
		LockLocal: func(context.Context, []string) error { return held },
	})
	if !errors.Is(err, held) || cs != nil || rep != nil {
		t.Fatalf("PlanApply = %v, %v, %v; want the lock's error alone", cs, rep, err)
	}
	if n := w.Acme.Count("list") - lists + w.Acme.Count("get") - gets + w.Acme.Writes() - writes; n != 0 {
		t.Errorf("%d requests after a refused lock", n)
	}
}
