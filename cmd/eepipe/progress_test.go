package main

import (
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestPlanDoneDebugLine: a finished plan is logged at debug level with its
// title; with debug off the line, and the title, are not built at all.
func TestPlanDoneDebugLine(t *testing.T) {
	res := &pipeline.PlanResult{
		Diff:    &pipeline.PlanDiff{Input: &pipeline.InputPlan{PlanID: 12, Name: "Acme 2025"}},
		Outcome: pipeline.OutcomeUpdated,
		PlanID:  12,
	}
	core, logs := observer.New(zapcore.DebugLevel)
	newProgress(&Factory{}, zap.New(core)).planDone(res)
	got := logs.FilterMessage("plan done").All()
	if len(got) != 1 || got[0].ContextMap()["plan"] != `plan 12 "Acme 2025"` || got[0].ContextMap()["outcome"] != "updated" {
		t.Fatalf("debug: %+v", logs.All())
	}

	core, logs = observer.New(zapcore.InfoLevel)
	p := newProgress(&Factory{}, zap.New(core))
	if n := testing.AllocsPerRun(100, func() { p.planDone(res) }); n != 0 {
		t.Errorf("debug off: planDone allocates %v times per plan, want 0 (the debug line is built anyway)", n)
	}
	if logs.Len() != 0 {
		t.Errorf("debug off: %+v", logs.All())
	}
}
