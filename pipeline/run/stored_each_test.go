package run

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// TestReadStoredEach: with Each, every plan is handed on in the order
// ReadStored returns them without Each, none is kept, the gate's bound
// holds, and an error from Each stops the read.
func TestReadStoredEach(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Acme.Delay, w.Crane.Delay = 2*time.Millisecond, time.Millisecond
	for i := range 6 {
		seed(t, w.Acme, fmt.Sprint("A", i))
		seed(t, w.Crane, fmt.Sprint("C", i))
	}
	all, err := NewRunner(w.Accounts, nil, RunOptions{Concurrency: 3}).ReadStored(context.Background(), StoredQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, sp := range all.Plans {
		want = append(want, fmt.Sprint(sp.Account.Name, sp.Plan.ID))
	}

	r := NewRunner(w.Accounts, nil, RunOptions{Concurrency: 3})
	var got []string
	out, err := r.ReadStored(context.Background(), StoredQuery{each: func(sp StoredPlan) error {
		if len(sp.Plan.Milestones) == 0 {
			t.Errorf("plan %d handed on without its milestones", sp.Plan.ID)
		}
		got = append(got, fmt.Sprint(sp.Account.Name, sp.Plan.ID))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) != 12 {
		t.Errorf("handed on %v, want %v", got, want)
	}
	if len(out.Plans) != 0 {
		t.Errorf("kept %d plans", len(out.Plans))
	}
	if rc := r.requests(); rc.MaxInFlight > 3 {
		t.Errorf("%d requests in flight, bound 3", rc.MaxInFlight)
	}

	stop := errors.New("disk full")
	n := 0
	_, err = NewRunner(w.Accounts, nil, RunOptions{Concurrency: 3}).ReadStored(context.Background(), StoredQuery{each: func(StoredPlan) error {
		n++
		if n == 4 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || n != 4 {
		t.Errorf("after Each failed on the 4th plan: %v, %d plans handed on", err, n)
	}
}
