package diff

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

func TestClassifyField(t *testing.T) {
	lw := func(v string) *pipeline.LastFieldWrite { return &pipeline.LastFieldWrite{Value: v, RunID: 3} }
	for _, tc := range []struct {
		name     string
		old, new string
		last     *pipeline.LastFieldWrite
		want     ChangeClass
	}{
		{"never applied", "Acme", "Acme 2026", nil, ClassNoHistory},
		{"file changed, service as applied", "Acme", "Acme 2026", lw("Acme"), ClassFile},
		{"service changed, file as applied", "Renamed", "Acme", lw("Acme"), ClassService},
		{"both changed", "Renamed", "Acme 2026", lw("Acme"), ClassBoth},
		{"service cleared it, file as applied", "", "Mining and Quarrying", lw("Mining and Quarrying"), ClassService},
		{"applied empty, file sets it, service as applied", "", "Construction", lw(""), ClassFile},
		{"case counts: the service holds another spelling", "acme", "Acme", lw("Acme"), ClassService},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyField(tc.old, tc.new, tc.last); got != tc.want {
				t.Errorf("classifyField(%q, %q, %v) = %s, want %s", tc.old, tc.new, tc.last, got, tc.want)
			}
		})
	}
}

// TestClassifyAndHoldPlanFields: each field the file changes is
// classified against the value last applied to it, and the held ones
// (service, both) leave Fields and Meta for HeldFields, unless overwrite.
func TestClassifyAndHoldPlanFields(t *testing.T) {
	const secA, secB, secC = "Construction", "Education", "Manufacturing"
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	type want struct {
		classes    map[string]ChangeClass
		held       []string // fields held (or, with overwrite, that would be)
		meta       []string // fields the metadata update sends
		action     Action
		heldFields []string // d.HeldFields
	}
	for _, tc := range []struct {
		name      string
		name2     string // the file's plan name
		sector    string // the file's sector
		counter   int64  // the file's amt (the service holds 9, last applied 9)
		last      map[string]string
		overwrite bool
		want      want
	}{
		{
			name: "service renamed the plan: held, nothing else to send", name2: "Acme", counter: 9,
			last: map[string]string{"name": "Acme"},
			want: want{classes: map[string]ChangeClass{"name": ClassService}, held: []string{"name"}, action: ActionUnchanged, heldFields: []string{"name"}},
		},
		{
			name: "file renamed the plan: sent", name2: "Acme 2026", counter: 9,
			last: map[string]string{"name": "Stored"},
			want: want{classes: map[string]ChangeClass{"name": ClassFile}, meta: []string{"name"}, action: ActionUpdate},
		},
		{
			name: "sector changed in both, counter changed in the file: sector held, counter sent", name2: "Stored", sector: secA, counter: 5,
			last: map[string]string{"sector": secC},
			want: want{classes: map[string]ChangeClass{"sector": ClassBoth}, held: []string{"sector"}, action: ActionUpdate, heldFields: []string{"sector"}},
		},
		{
			name: "no history: sent", name2: "Acme", sector: secA, counter: 9,
			want: want{classes: map[string]ChangeClass{"name": ClassNoHistory, "sector": ClassNoHistory}, meta: []string{"name", "sector"}, action: ActionUpdate},
		},
		{
			name: "overwrite: held fields are sent and reported", name2: "Acme", sector: secA, counter: 9,
			last:      map[string]string{"name": "Acme", "sector": secC},
			overwrite: true,
			want: want{classes: map[string]ChangeClass{"name": ClassService, "sector": ClassBoth}, held: []string{"name", "sector"},
				meta: []string{"name", "sector"}, action: ActionUpdate},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := pipelinetest.SamplePlan()
			stored.Name, stored.Sector = "Stored", secB
			in := pipelinetest.InPlan("", tc.name2, "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: tc.counter})
			in.Sector = tc.sector
			d := Diff(in, stored, DiffOptions{})
			d.Account = "acme"
			src := pipelinetest.LastValuesSrc{LastWriteMap: pipelinetest.LastWriteMap{"acme": {{TargetID: 1700, Counter: pipelinetest.Amt}: {Value: 9, RunID: 2, At: at}}},
				Fields: map[pipeline.FieldKey]pipeline.LastFieldWrite{}}
			for f, v := range tc.last {
				src.Fields[pipeline.FieldKey{PlanID: 17, Field: f}] = pipeline.LastFieldWrite{Value: v, RunID: 2, At: at, File: "v1.csv"}
			}
			// The one-plan entry point apply uses, and the batch one.
			cs := &ChangeSet{Plans: []*PlanDiff{d}}
			if err := classifyPlan(context.Background(), d, src, "svc"); err != nil {
				t.Fatal(err)
			}
			one := fmt.Sprint(d.Fields)
			if err := ClassifyChanges(context.Background(), cs, src, "svc"); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(d.Fields) != one {
				t.Errorf("classifyPlan %s, ClassifyChanges %v", one, d.Fields)
			}
			classes := map[string]ChangeClass{}
			for _, f := range d.Fields {
				classes[f.Field] = f.Class
				if f.Class != ClassNoHistory && (f.Last == nil || f.Last.Value != tc.last[f.Field]) {
					t.Errorf("%s: last %+v", f.Field, f.Last)
				}
			}
			if fmt.Sprint(classes) != fmt.Sprint(tc.want.classes) {
				t.Errorf("classes %v, want %v", classes, tc.want.classes)
			}
			held := holdServiceChanges(cs, tc.overwrite)
			var heldNames, heldFields []string
			for _, h := range held {
				if h.Field == nil {
					t.Errorf("a counter is held: %s", h)
					continue
				}
				heldNames = append(heldNames, h.Field.Field)
				if s := h.String(); !strings.Contains(s, "plans.csv line 2: ") || !strings.Contains(s, "by run 2 on 2026-11-01 09:00 UTC from v1.csv") {
					t.Errorf("held message %q", s)
				}
			}
			for _, f := range d.HeldFields {
				heldFields = append(heldFields, f.Field)
			}
			var meta []string
			for _, f := range []struct {
				n string
				v *string
			}{{"name", d.Meta.Name}, {"sector", d.Meta.Sector}, {"scorecard_id", d.Meta.ScorecardID}} {
				if f.v != nil {
					meta = append(meta, f.n)
				}
			}
			if !slices.Equal(heldNames, tc.want.held) || !slices.Equal(meta, tc.want.meta) || !slices.Equal(heldFields, tc.want.heldFields) || d.Action != tc.want.action {
				t.Errorf("held %v, meta %v, held fields %v, action %s; want %v, %v, %v, %s",
					heldNames, meta, heldFields, d.Action, tc.want.held, tc.want.meta, tc.want.heldFields, tc.want.action)
			}
			// The fields reported as changing are those sent.
			if len(d.Fields) != len(meta) {
				t.Errorf("fields %v, meta %v", d.Fields, meta)
			}
		})
	}
}

// TestClassifyPlanLeavesCreatesAlone: a plan to create has no history.
func TestClassifyPlanLeavesCreatesAlone(t *testing.T) {
	d := Diff(pipelinetest.InPlan("", "New", "2026-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Wfs: 4}), nil, DiffOptions{})
	classifyPlanWith(d, lastValues{fields: map[pipeline.FieldKey]pipeline.LastFieldWrite{{PlanID: 0, Field: "name"}: {Value: "Old"}}})
	for _, f := range d.Fields {
		if f.Class != "" || f.Last != nil {
			t.Errorf("create field %+v classified", f)
		}
	}
	if held := holdPlanChanges(d, false); len(held) != 0 || d.Action != ActionCreate {
		t.Errorf("create held %v, action %s", held, d.Action)
	}
}
