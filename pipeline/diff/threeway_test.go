package diff

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

func TestClassify(t *testing.T) {
	lw := func(v int64) *pipeline.LastWrite { return &pipeline.LastWrite{Value: v, RunID: 3} }
	for _, tc := range []struct {
		name     string
		old, new int64
		last     *pipeline.LastWrite
		want     ChangeClass
		held     bool
	}{
		{"never written", 5, 7, nil, ClassNoHistory, false},
		{"file changed, service as written", 5, 7, lw(5), ClassFile, false},
		{"service changed, file as written", 9, 5, lw(5), ClassService, true},
		{"both changed", 9, 7, lw(5), ClassBoth, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.old, tc.new, tc.last)
			if got != tc.want || got.held() != tc.held {
				t.Errorf("Classify(%d, %d, %v) = %s (held %v), want %s (held %v)", tc.old, tc.new, tc.last, got, got.held(), tc.want, tc.held)
			}
		})
	}
}

func TestClassifyChangesAndHold(t *testing.T) {
	in := pipelinetest.InPlan("", "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1, pipelinetest.Wfs: 5, pipelinetest.Ifu: 33})
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	src := pipelinetest.LastWriteMap{"acme": {
		{TargetID: 1700, Counter: pipelinetest.Amt}: {Value: 1, RunID: 4, At: at, File: "v1.csv"}, // service changed 1 -> 9
		{TargetID: 1700, Counter: pipelinetest.Wfs}: {Value: 2, RunID: 4, At: at},                 // file changed 2 -> 5
		{TargetID: 1700, Counter: pipelinetest.Ifu}: {Value: 3, RunID: 4, At: at},                 // both: 3 -> 30 and 33
	}}
	for _, overwrite := range []bool{false, true} {
		d := Diff(in, pipelinetest.SamplePlan(), DiffOptions{})
		d.Account = "acme"
		cs := &ChangeSet{Plans: []*PlanDiff{d}}
		if err := ClassifyChanges(context.Background(), cs, src, "svc"); err != nil {
			t.Fatal(err)
		}
		classes := map[string]ChangeClass{}
		for _, c := range d.Targets[0].Changes {
			classes[c.Name] = c.Class
		}
		if classes[pipelinetest.Amt] != ClassService || classes[pipelinetest.Wfs] != ClassFile || classes[pipelinetest.Ifu] != ClassBoth {
			t.Fatalf("classes = %v", classes)
		}
		held := holdServiceChanges(cs, overwrite)
		if len(held) != 2 {
			t.Fatalf("overwrite %v: %d held, want 2", overwrite, len(held))
		}
		tgt := d.Targets[0]
		switch {
		case !overwrite && (len(tgt.Changes) != 1 || tgt.Changes[0].Name != pipelinetest.Wfs || len(tgt.Held) != 2 || d.Action != ActionUpdate):
			t.Errorf("held back: changes %v, held %v, action %s", tgt.Changes, tgt.Held, d.Action)
		case overwrite && (len(tgt.Changes) != 3 || len(tgt.Held) != 0):
			t.Errorf("overwrite: changes %v, held %v", tgt.Changes, tgt.Held)
		}
		msg := held[0].String()
		for _, w := range []string{"plans.csv line 2, column 9", pipelinetest.Amt, "file 1, service 9, last applied 1 by run 4 on 2026-11-01 09:00 UTC from v1.csv", "changed on the service since run 4"} {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
	}
}

func TestHoldTurnsAllHeldUpdateIntoUnchanged(t *testing.T) {
	in := pipelinetest.InPlan("", "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})
	d := Diff(in, pipelinetest.SamplePlan(), DiffOptions{})
	d.Account = "acme"
	cs := &ChangeSet{Plans: []*PlanDiff{d}}
	src := pipelinetest.LastWriteMap{"acme": {{TargetID: 1700, Counter: pipelinetest.Amt}: {Value: 1, RunID: 1}}}
	if err := ClassifyChanges(context.Background(), cs, src, "svc"); err != nil {
		t.Fatal(err)
	}
	if held := holdServiceChanges(cs, false); len(held) != 1 || d.Action != ActionUnchanged || cs.HasChanges() {
		t.Fatalf("held %d, action %s", len(held), d.Action)
	}
}

func TestClassifyWithoutStoreIsNoHistory(t *testing.T) {
	in := pipelinetest.InPlan("", "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})
	d := Diff(in, pipelinetest.SamplePlan(), DiffOptions{})
	cs := &ChangeSet{Plans: []*PlanDiff{d}}
	if err := ClassifyChanges(context.Background(), cs, nil, "svc"); err != nil {
		t.Fatal(err)
	}
	if c := d.Targets[0].Changes[0]; c.Class != ClassNoHistory || c.Last != nil {
		t.Fatalf("change %+v", c)
	}
	if held := holdServiceChanges(cs, false); len(held) != 0 || d.Action != ActionUpdate {
		t.Fatalf("held %v", held)
	}
}
