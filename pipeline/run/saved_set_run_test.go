package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// stepStore is a SavedSetStore that records its calls and answers the
// applied-before check from a list, one answer a call.
type stepStore struct {
	steps   *[]string
	applied []*pipeline.RunRecord
	err     error
}

func (s *stepStore) ChangeSetRun(_ context.Context, sig string) (*pipeline.RunRecord, error) {
	*s.steps = append(*s.steps, "applied?")
	if s.err != nil {
		return nil, s.err
	}
	var r *pipeline.RunRecord
	if len(s.applied) > 0 {
		r, s.applied = s.applied[0], s.applied[1:]
	}
	return r, nil
}

func (s *stepStore) ChangeSetProgress(context.Context, string) (pipeline.SavedProgress, error) {
	*s.steps = append(*s.steps, "progress")
	return pipeline.SavedProgress{Runs: []int64{4}}, nil
}

func savedSetRun(steps *[]string, st SavedSetStore, dry bool) *SavedSetRun {
	set := &savedset.StreamedSet{Header: &savedset.SavedChangeSet{Signature: "sig", Accounts: []string{"acme", "crane"}}}
	return &SavedSetRun{
		Set: set, Store: st, DryRun: dry,
		CheckHistory: func(_ context.Context, again bool) error {
			*steps = append(*steps, map[bool]string{false: "history", true: "history again"}[again])
			return nil
		},
		Connect:      func() (*Runner, error) { *steps = append(*steps, "connect"); return &Runner{}, nil },
		CheckCatalog: func(context.Context, *Runner) error { *steps = append(*steps, "catalog"); return nil },
		Lock: func(_ context.Context, accounts []string) (func(), error) {
			*steps = append(*steps, "lock "+strings.Join(accounts, ","))
			return func() { *steps = append(*steps, "unlock") }, nil
		},
	}
}

// TestSavedSetRunOrder: a saved set's steps run in the protocol's order,
// the checks that a waiting run may have outdated are made again under
// the locks, and a dry run takes no lock.
func TestSavedSetRunOrder(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		store bool
		dry   bool
		want  string
	}{
		{"apply with a store", true, false, "history, applied?, connect, catalog, lock acme,crane, history again, applied?, progress"},
		{"dry run with a store", true, true, "history, applied?, connect, catalog, progress"},
		{"apply without a store", false, false, "history, connect, catalog, lock acme,crane"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []string
			var st SavedSetStore
			if tc.store {
				st = &stepStore{steps: &steps}
			}
			p, err := savedSetRun(&steps, st, tc.dry).Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(steps, ", "); got != tc.want {
				t.Errorf("steps\n got %s\nwant %s", got, tc.want)
			}
			if tc.store && !p.Earlier.Resumed() {
				t.Error("the earlier runs were not read")
			}
		})
	}
}

// TestSavedSetAppliedWhileWaiting: a run of the same set that held the
// locks while this one waited has applied it: the check under the locks
// refuses it, and the locks are released.
func TestSavedSetAppliedWhileWaiting(t *testing.T) {
	var steps []string
	st := &stepStore{steps: &steps, applied: []*pipeline.RunRecord{nil, {ID: 7, User: "ops", Host: "cron"}}}
	_, err := savedSetRun(&steps, st, false).Prepare(context.Background())
	var ab *AppliedBeforeError
	if !errors.As(err, &ab) || ab.Run.ID != 7 || !strings.Contains(err.Error(), "already applied by run 7") {
		t.Fatalf("err = %v", err)
	}
	if steps[len(steps)-1] != "unlock" {
		t.Errorf("the locks were not released: %v", steps)
	}
	steps = nil
	st = &stepStore{steps: &steps, err: errors.New("disk I/O error")}
	if _, err := savedSetRun(&steps, st, false).Prepare(context.Background()); !errors.As(err, new(*StoreError)) {
		t.Errorf("store failure: %v", err)
	}
	if strings.Join(steps, ", ") != "history, applied?" {
		t.Errorf("a store failure went on: %v", steps)
	}
}
