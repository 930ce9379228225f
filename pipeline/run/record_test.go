package run

import (
	"context"
	"sync"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// observerFuncs is an Observer of the functions set.
type observerFuncs struct {
	compared func(*diff.PlanDiff)
	done     func(*PlanResult)
	recalc   func(RecalcEvent)
}

func (o observerFuncs) PlanCompared(d *diff.PlanDiff) {
	if o.compared != nil {
		o.compared(d)
	}
}

func (o observerFuncs) PlanDone(res *PlanResult) {
	if o.done != nil {
		o.done(res)
	}
}

func (o observerFuncs) Recalc(ev RecalcEvent) {
	if o.recalc != nil {
		o.recalc(ev)
	}
}

// runsStore is a StateStore that keeps the runs begun and finished and
// takes every write without keeping it (the methods a recorded run does
// not call are left unimplemented). begin, when set, runs first in
// BeginRun and its error is BeginRun's.
type runsStore struct {
	pipeline.StateStore
	begin func(pipeline.RunRecord) error

	mu       sync.Mutex
	begun    []pipeline.RunRecord
	finished []string // the statuses
}

func (s *runsStore) BeginRun(_ context.Context, r pipeline.RunRecord) (int64, error) {
	if s.begin != nil {
		if err := s.begin(r); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begun = append(s.begun, r)
	return int64(len(s.begun)), nil
}

func (s *runsStore) FinishRun(_ context.Context, _ int64, status string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = append(s.finished, status)
	return nil
}

func (s *runsStore) RecordPending(_ context.Context, _ int64, ws []pipeline.TargetWrite) ([]int64, error) {
	return make([]int64, len(ws)), nil
}

func (s *runsStore) RecordWrites(context.Context, int64, []pipeline.TargetWrite) error { return nil }

func (s *runsStore) ResolvePending(context.Context, int64, []pipeline.TargetWrite) error { return nil }

func (s *runsStore) RecordPlanWrite(context.Context, int64, pipeline.PlanWrite) error { return nil }

func (s *runsStore) RecordFields(context.Context, int64, []pipeline.FieldWrite) error { return nil }
