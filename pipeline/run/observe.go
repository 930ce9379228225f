package run

import "github.com/eepipe/eepipe/pipeline/diff"

// Observer watches a run for a progress display: the Runner tells it what
// happened and asks it nothing, so the display decides no step of the run.
// The Runner calls it one call at a time, from any goroutine. A nil
// Observer in RunOptions watches nothing.
type Observer interface {
	// PlanCompared receives each plan's diff once compared and
	// classified, before its writes (PlanApply, ApplySaved).
	PlanCompared(d *diff.PlanDiff)
	// PlanDone receives each plan's result when its apply finished.
	PlanDone(res *PlanResult)
	// Recalc receives each recalculation's progress: accepted, failed,
	// or waiting for a running one (RecalcEvent.Waiting > 0).
	Recalc(ev RecalcEvent)
}
