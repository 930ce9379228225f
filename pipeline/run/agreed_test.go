package run

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// recJournal records what a run journals, as "plan/year counter=after
// (before, sent)" lines.
type recJournal struct {
	mu     sync.Mutex
	lines  []string
	fields []pipeline.FieldWrite
}

func (j *recJournal) Add(kind string, w pipeline.TargetWrite) {
	for _, c := range w.Counters {
		before := "none"
		if c.Before != nil {
			before = fmt.Sprint(*c.Before)
		}
		j.lines = append(j.lines, fmt.Sprintf("%s %s/%d %s=%d before %s sent %t", kind, w.PlanName, w.YearNumber, c.Counter, c.After, before, c.Sent))
	}
}

func (j *recJournal) TargetsSending(_ context.Context, ws []pipeline.TargetWrite) ([]int64, error) {
	return make([]int64, len(ws)), nil
}

func (j *recJournal) TargetsWritten(_ context.Context, ws []pipeline.TargetWrite) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range ws {
		j.Add("write", w)
	}
	return nil
}

func (j *recJournal) TargetsInSync(_ context.Context, ws []pipeline.TargetWrite) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range ws {
		j.Add("insync", w)
	}
	return nil
}

func (j *recJournal) PendingResolved(_ context.Context, ws []pipeline.TargetWrite) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range ws {
		j.lines = append(j.lines, fmt.Sprintf("resolved %s/%d: %s", w.PlanName, w.YearNumber, strings.SplitN(w.Outcome, ":", 2)[0]))
	}
	return nil
}

func (j *recJournal) PlanWritten(context.Context, pipeline.PlanWrite) error { return nil }

func (j *recJournal) FieldsApplied(_ context.Context, ws []pipeline.FieldWrite) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.fields = append(j.fields, ws...)
	return nil
}

func (j *recJournal) take() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	sort.Strings(j.lines)
	s := strings.Join(j.lines, "\n")
	j.lines = nil
	return s
}

// TestApplyJournalsAgreedValues: every counter the file sets that the
// service holds after the run is journalled: the sent ones as writes, the
// ones already holding the file's value as agreed (in sync) — in patched
// targets, in targets not patched, in created plans (no value before) and
// in plans already in sync (a run that writes nothing).
func TestApplyJournalsAgreedValues(t *testing.T) {
	w := pipelinetest.NewWorld()
	plans := func() []*pipeline.InputPlan {
		return []*pipeline.InputPlan{
			// Created with zeros: year 1 patches amt, year 2 is all zeros.
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "A", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}, map[string]int64{pipelinetest.Wfs: 0}),
			// Created with the prefill (7 everywhere): amt is already 7.
			pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "B", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 7, pipelinetest.Wfs: 2}),
		}
	}
	j := &recJournal{}
	if _, rep := run(t, w, plans(), RunOptions{Journal: j, NoRecalc: true}); !rep.OK() {
		t.Fatal("first run not ok")
	}
	want := strings.Join([]string{
		"insync A/2 " + pipelinetest.Wfs + "=0 before none sent false",
		"write A/1 " + pipelinetest.Amt + "=3 before 0 sent true",
		"write A/1 " + pipelinetest.Wfs + "=0 before none sent false",
		"write B/1 " + pipelinetest.Amt + "=7 before none sent false",
		"write B/1 " + pipelinetest.Wfs + "=2 before 7 sent true",
	}, "\n")
	if got := j.take(); got != want {
		t.Errorf("first run journalled:\n%s\nwant:\n%s", got, want)
	}
	// Everything in sync: nothing is sent, every counter is agreed again.
	cs, rep := run(t, w, plans(), RunOptions{Journal: j, NoRecalc: true})
	if cs.HasChanges() || !rep.OK() {
		t.Fatal("second run has changes or failed")
	}
	want = strings.Join([]string{
		"insync A/1 " + pipelinetest.Amt + "=3 before 3 sent false",
		"insync A/1 " + pipelinetest.Wfs + "=0 before 0 sent false",
		"insync A/2 " + pipelinetest.Wfs + "=0 before 0 sent false",
		"insync B/1 " + pipelinetest.Amt + "=7 before 7 sent false",
		"insync B/1 " + pipelinetest.Wfs + "=2 before 2 sent false",
	}, "\n")
	if got := j.take(); got != want {
		t.Errorf("in-sync run journalled:\n%s\nwant:\n%s", got, want)
	}
}
