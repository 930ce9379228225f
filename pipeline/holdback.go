package pipeline

import "context"

// HoldBack is a run's three-way rule: each change of the files is
// classified against the last values eepipe applied (Source, for Service)
// and the changes the service made meanwhile (ClassService, ClassBoth)
// are held back, unless Overwrite.
type HoldBack struct {
	// Source holds the last values applied; nil: no history (every
	// change is ClassNoHistory, nothing is held).
	Source    LastWriteSource
	Service   string // the service, as ServiceKey names it
	Overwrite bool   // make the service-side changes too
}

// ChangeSet classifies every plan of cs (ClassifyChanges) and holds back
// the service-side changes (holdServiceChanges); it returns what it held
// back (with Overwrite: what it would have held).
func (h HoldBack) ChangeSet(ctx context.Context, cs *ChangeSet) ([]HeldChange, error) {
	if err := ClassifyChanges(ctx, cs, h.Source, h.Service); err != nil {
		return nil, err
	}
	return holdServiceChanges(cs, h.Overwrite), nil
}

// Plan is ChangeSet for one plan's diff (classifyPlan, holdPlanChanges),
// as apply compares it: the ApplyHooks.Classify of a run.
func (h HoldBack) Plan(ctx context.Context, d *PlanDiff) ([]HeldChange, error) {
	if err := classifyPlan(ctx, d, h.Source, h.Service); err != nil {
		return nil, err
	}
	return holdPlanChanges(d, h.Overwrite), nil
}
