package run

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// batchJournal is a recJournal that also counts, per TargetsInSync call,
// the counters it gets and how many plans were done by then.
type batchJournal struct {
	recJournal
	done  *atomic.Int64
	calls []batchCall
}

type batchCall struct {
	counters int
	done     int64
}

func (j *batchJournal) TargetsInSync(ctx context.Context, ws []pipeline.TargetWrite) error {
	n := 0
	for _, w := range ws {
		n += len(w.Counters)
	}
	j.mu.Lock()
	j.calls = append(j.calls, batchCall{counters: n, done: j.done.Load()})
	j.mu.Unlock()
	return j.recJournal.TargetsInSync(ctx, ws)
}

// threeYears returns n input plans "P i" of three years each, setting amt
// and wfs.
func threeYears(n int) []*pipeline.InputPlan {
	var ps []*pipeline.InputPlan
	for i := range n {
		c := map[string]int64{pipelinetest.Amt: int64(i + 1), pipelinetest.Wfs: 0}
		p := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, fmt.Sprintf("P %d", i), "2025-09-01", "2030-08-31", "", c, c, c)
		p.Origin.Row = 2 + i
		ps = append(ps, p)
	}
	return ps
}

// TestInSyncRecordedInBatches: the counters found in sync are recorded
// while the run goes on, in batches of RunOptions.inSyncBatchSize (the buffer
// never holds more than a batch and one plan's counters), not held until
// the run ends; all of them are recorded.
func TestInSyncRecordedInBatches(t *testing.T) {
	const plans, perPlan, batch = 30, 6, 10
	w := pipelinetest.NewWorld()
	if _, rep := run(t, w, threeYears(plans), RunOptions{NoRecalc: true}); !rep.OK() {
		t.Fatal("seed run not ok")
	}
	done := &atomic.Int64{}
	j := &batchJournal{done: done}
	opts := RunOptions{Journal: j, NoRecalc: true, Concurrency: 1, inSyncBatchSize: batch, Observer: observerFuncs{done: func(*PlanResult) { done.Add(1) }}}
	cs, rep := run(t, w, threeYears(plans), opts)
	if cs.HasChanges() || !rep.OK() {
		t.Fatal("in-sync run has changes or failed")
	}
	total, peak := 0, 0
	for _, c := range j.calls {
		total += c.counters
		peak = max(peak, c.counters)
	}
	if total != plans*perPlan {
		t.Errorf("%d counters recorded, want %d", total, plans*perPlan)
	}
	if peak > batch+perPlan || peak < batch {
		t.Errorf("high-water mark of the buffer %d counters, want %d to %d", peak, batch, batch+perPlan)
	}
	if want := plans * perPlan / (batch + perPlan); len(j.calls) < want {
		t.Errorf("%d batches, want at least %d", len(j.calls), want)
	}
	if len(j.calls) == 0 || j.calls[0].done >= plans {
		t.Errorf("the first batch was recorded after every plan was done: %+v", j.calls)
	}
	if got := len(strings.Split(j.take(), "\n")); got != plans*perPlan {
		t.Errorf("%d counter records, want %d", got, plans*perPlan)
	}
}

// memoryHistory is a LastWriteSource and pendingWriteSource over fixed
// values: every target's amt and wfs were last applied as last[counter],
// and the targets in pending have a write an earlier run left pending.
type memoryHistory struct {
	last    map[string]int64
	pending map[int64]bool
	// sent is the amt the pending writes sent (99 when 0), written after
	// the last values when sentLater.
	sent      int64
	sentLater bool
	mu        sync.Mutex
	read      map[int64]bool // the targets whose last values were read
}

func (m *memoryHistory) LastWrites(_ context.Context, _, _ string, ids []int64) (map[pipeline.CounterKey]pipeline.LastWrite, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[pipeline.CounterKey]pipeline.LastWrite{}
	for _, id := range ids {
		m.read[id] = true
		for c, v := range m.last {
			out[pipeline.CounterKey{TargetID: id, Counter: c}] = pipeline.LastWrite{Value: v, RunID: 1, At: time.Unix(1, 0)}
		}
	}
	return out, nil
}

func (m *memoryHistory) PendingWrites(_ context.Context, _ string, ids []int64) ([]pipeline.PendingWrite, error) {
	var out []pipeline.PendingWrite
	sent, at := cmp.Or(m.sent, 99), time.Unix(0, 0)
	if m.sentLater {
		at = time.Unix(2, 0)
	}
	for _, id := range ids {
		if m.pending[id] {
			out = append(out, pipeline.PendingWrite{RunID: 1, Write: pipeline.TargetWrite{PlanName: "Pending", TargetID: id, YearNumber: 1, TargetType: pipeline.TargetAll, At: at,
				Counters: []pipeline.CounterWrite{{Counter: pipelinetest.Amt, After: sent, Sent: true}}}})
		}
	}
	return out, nil
}

// TestPendingWriteInSyncIsAdopted: a write an earlier run left pending to
// a target that is now in sync (the service holds what it sent, which is
// also the file's value) is adopted by the next run, in a plan with
// nothing to send, with the note; its counter counts as applied (its
// last value was 4) and is not recorded again as agreed.
func TestPendingWriteInSyncIsAdopted(t *testing.T) {
	w := pipelinetest.NewWorld()
	c := map[string]int64{pipelinetest.Amt: 5, pipelinetest.Wfs: 0}
	plans := []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Pending", "2025-09-01", "2030-08-31", "", c)}
	if _, rep := run(t, w, plans, RunOptions{NoRecalc: true}); !rep.OK() {
		t.Fatal("seed run not ok")
	}
	src := &memoryHistory{last: map[string]int64{pipelinetest.Amt: 4, pipelinetest.Wfs: 0}, pending: map[int64]bool{}, read: map[int64]bool{}, sent: 5, sentLater: true}
	w.Acme.Mu.Lock()
	for _, p := range w.Acme.Plans {
		if p.Name == "Pending" {
			src.pending[p.Milestones[0].Targets[0].ID] = true
		}
	}
	w.Acme.Mu.Unlock()
	j := &recJournal{}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Journal: j, NoRecalc: true})
	cs, rep, held, err := r.PlanApply(context.Background(), plans, time.Now(), ApplyHooks{Classify: classifyWith(src, false)})
	if err != nil || !rep.OK() || len(held) != 0 {
		t.Fatalf("apply: %v, ok %t, %d held", err, rep.OK(), len(held))
	}
	if a := cs.Plans[0].Action; a != diff.ActionUnchanged {
		t.Fatalf("plan: %s, want unchanged", a)
	}
	if got, want := j.take(), "resolved Pending/1: adopted from run 1"; got != want {
		t.Errorf("journalled:\n%s\nwant:\n%s", got, want)
	}
	if notes := strings.Join(rep.Plans[0].Notes, "\n"); !strings.Contains(notes, "run 1 sent 1 counter and recorded no answer") || !strings.Contains(notes, "(adopted)") {
		t.Errorf("notes: %q", notes)
	}
}

// TestInSyncSkipsValuesOnRecord: a counter in sync whose last applied
// value is the file's is not recorded again, in a plan in sync and in the
// targets of an update not patched; one whose last applied value differs
// is. A write an earlier run left pending to a target in sync is
// resolved all the same (here moot: a later write is on record), and the
// target's counters are recorded as any other's.
func TestInSyncSkipsValuesOnRecord(t *testing.T) {
	w := pipelinetest.NewWorld()
	c := func(a int64) map[string]int64 { return map[string]int64{pipelinetest.Amt: a, pipelinetest.Wfs: 0} }
	plans := func(changed int64) []*pipeline.InputPlan {
		return []*pipeline.InputPlan{
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Same", "2025-09-01", "2030-08-31", "", c(5), c(5)),
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Other", "2025-09-01", "2030-08-31", "", c(changed), c(5), c(7)),
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Pending", "2025-09-01", "2030-08-31", "", c(5)),
		}
	}
	if _, rep := run(t, w, plans(5), RunOptions{NoRecalc: true}); !rep.OK() {
		t.Fatal("seed run not ok")
	}
	src := &memoryHistory{last: map[string]int64{pipelinetest.Amt: 5, pipelinetest.Wfs: 0}, pending: map[int64]bool{}, read: map[int64]bool{}}
	w.Acme.Mu.Lock()
	for _, p := range w.Acme.Plans {
		if p.Name == "Pending" {
			src.pending[p.Milestones[0].Targets[0].ID] = true
		}
	}
	w.Acme.Mu.Unlock()
	j := &recJournal{}
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Journal: j, NoRecalc: true})
	// "Other" year 1 changes (patched); its year 3 holds amt 7, last
	// applied 5: recorded.
	cs, rep, held, err := r.PlanApply(context.Background(), plans(6), time.Now(), ApplyHooks{Classify: classifyWith(src, false)})
	if err != nil || !rep.OK() || len(held) != 0 {
		t.Fatalf("apply: %v, ok %t, %d held", err, rep.OK(), len(held))
	}
	if a := cs.Plans[0].Action; a != diff.ActionUnchanged {
		t.Fatalf("plan Same: %s", a)
	}
	want := strings.Join([]string{
		"insync Other/3 " + pipelinetest.Amt + "=7 before 7 sent false",
		"resolved Pending/1: unknown",
		"write Other/1 " + pipelinetest.Amt + "=6 before 5 sent true",
		"write Other/1 " + pipelinetest.Wfs + "=0 before 0 sent false",
	}, "\n")
	if got := j.take(); got != want {
		t.Errorf("journalled:\n%s\nwant:\n%s", got, want)
	}
	if len(src.read) != 2+3+1 {
		t.Errorf("last values read for %d targets, want 6", len(src.read))
	}
	for _, d := range cs.Plans {
		if d.Agreed != nil {
			t.Errorf("plan %s still holds the last values read", d.Title())
		}
	}
	// Without a store nothing is known: every counter in sync is recorded.
	j = &recJournal{}
	if _, rep := run(t, w, plans(6), RunOptions{Journal: j, NoRecalc: true}); !rep.OK() {
		t.Fatal("run without a store not ok")
	}
	if got := strings.Count(j.take(), "insync "); got != 2*2+3*2+2 {
		t.Errorf("%d counters recorded in sync without a store, want 12", got)
	}
}

// TestAgreedValuesKnown: a counter is known to hold the file's value when
// its last applied value is the value, read alone (not when runs under
// several names applied different values) or with its run, and never
// without history.
func TestAgreedValuesKnown(t *testing.T) {
	a := &diff.AgreedValues{
		Values:   map[pipeline.CounterKey]diff.LastValue{{TargetID: 1, Counter: pipelinetest.Amt}: {Value: 5}, {TargetID: 1, Counter: pipelinetest.Wfs}: {Value: 5, Mixed: true}, {TargetID: 3, Counter: pipelinetest.Amt}: {Value: 5}},
		Counters: map[pipeline.CounterKey]pipeline.LastWrite{{TargetID: 2, Counter: pipelinetest.Amt}: {Value: 5}},
	}
	for _, c := range []struct {
		id   int64
		name string
		v    int64
		want bool
	}{
		{1, pipelinetest.Amt, 5, true}, {1, pipelinetest.Amt, 6, false}, {1, pipelinetest.Wfs, 5, false}, {2, pipelinetest.Amt, 5, true}, {2, pipelinetest.Amt, 4, false},
		{2, pipelinetest.Wfs, 0, false}, {3, pipelinetest.Amt, 5, true}, {4, pipelinetest.Amt, 5, false},
	} {
		if got := a.Known(c.id, c.name, c.v); got != c.want {
			t.Errorf("known(%d, %s, %d) = %t", c.id, c.name, c.v, got)
		}
	}
	if (*diff.AgreedValues)(nil).Known(1, pipelinetest.Amt, 5) {
		t.Error("known without history")
	}
}
