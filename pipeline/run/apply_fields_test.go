package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// TestApplyRecordsFieldsApplied: the fields a create, a metadata update or
// a plan in sync leaves holding the file's values are journalled as
// applied; a held field is not.
func TestApplyRecordsFieldsApplied(t *testing.T) {
	w := pipelinetest.NewWorld()
	const secA, secB = "Construction", "Education"
	plan := func(name, sector string) []*pipeline.InputPlan {
		p := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, name, "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3})
		p.Sector = sector
		return []*pipeline.InputPlan{p}
	}
	fields := func(j *recJournal) string {
		j.mu.Lock()
		defer j.mu.Unlock()
		var s []string
		for _, f := range j.fields {
			s = append(s, f.Field+"="+f.Value)
		}
		slices.Sort(s)
		j.fields = nil
		return strings.Join(s, " ")
	}
	j := &recJournal{}
	_, rep := run(t, w, plan("A", secA), RunOptions{Journal: j, NoRecalc: true})
	if !rep.OK() {
		t.Fatal("create not ok")
	}
	id := rep.Plans[0].PlanID
	if got, want := fields(j), "end_date=2030-08-31 name=A sector=Construction start_date=2025-09-01"; got != want {
		t.Errorf("create journalled %q, want %q", got, want)
	}
	// A metadata update journals what it sent, the rest as in sync.
	if _, rep := run(t, w, plan("A", secB), RunOptions{Journal: j, NoRecalc: true}); !rep.OK() || !rep.Plans[0].metaUpdated {
		t.Fatal("update not ok")
	}
	if got, want := fields(j), "end_date=2030-08-31 name=A sector=Education start_date=2025-09-01"; got != want {
		t.Errorf("update journalled %q, want %q", got, want)
	}
	// A held field is not journalled: the service keeps its value, and
	// the value last applied stays.
	r := NewRunner(w.Accounts, w.Finder, RunOptions{Journal: j, NoRecalc: true})
	src := pipelinetest.LastValuesSrc{LastWriteMap: pipelinetest.LastWriteMap{}, Fields: map[pipeline.FieldKey]pipeline.LastFieldWrite{{PlanID: id, Field: "sector"}: {Value: secA, RunID: 1}}}
	hb := diff.HoldBack{Source: src, Service: "svc"}
	cs, rep, held, err := r.PlanApply(context.Background(), plan("A", secA), time.Now(), ApplyHooks{Classify: hb.Plan})
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || cs.Plans[0].Action != diff.ActionUnchanged {
		t.Fatalf("held %v, action %s", held, cs.Plans[0].Action)
	}
	if !rep.OK() {
		t.Fatal("held apply not ok")
	}
	if got, want := fields(j), "end_date=2030-08-31 name=A start_date=2025-09-01"; got != want {
		t.Errorf("held apply journalled %q, want %q", got, want)
	}
}

// TestRecreateKeepsServiceField: a recreate (new dates) of a plan whose
// name the client changed on the service since eepipe applied it creates
// the new plan with the service's name (held, reported), not the stale
// workbook's; with overwrite it takes the file's.
func TestRecreateKeepsServiceField(t *testing.T) {
	for _, overwrite := range []bool{false, true} {
		t.Run(fmt.Sprint("overwrite=", overwrite), func(t *testing.T) {
			w := pipelinetest.NewWorld()
			in := func(start string) *pipeline.InputPlan {
				return pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme", start, "2030-08-31", "", map[string]int64{pipelinetest.Amt: 3})
			}
			_, rep := run(t, w, []*pipeline.InputPlan{in("2025-09-01")}, RunOptions{NoRecalc: true})
			if !rep.OK() {
				t.Fatal("create not ok")
			}
			id := rep.Plans[0].PlanID
			if _, err := w.Acme.UpdatePlan(context.Background(), id, pipeline.PlanChange{Name: diff.Ptr("Renamed by client")}); err != nil {
				t.Fatal(err)
			}
			p := in("2026-09-01")
			p.PlanID = id
			r := NewRunner(w.Accounts, w.Finder, RunOptions{NoRecalc: true, Diff: diff.DiffOptions{RecreateOnDateChange: true}})
			src := pipelinetest.LastValuesSrc{LastWriteMap: pipelinetest.LastWriteMap{}, Fields: map[pipeline.FieldKey]pipeline.LastFieldWrite{
				{PlanID: id, Field: "name"}: {Value: "Acme", RunID: 1}, {PlanID: id, Field: "start_date"}: {Value: "2025-09-01", RunID: 1}}}
			hb := diff.HoldBack{Source: src, Service: "svc", Overwrite: overwrite}
			classes := map[string]diff.ChangeClass{}
			classifyHook := func(ctx context.Context, d *diff.PlanDiff) ([]diff.HeldChange, error) {
				if d.Action != diff.ActionRecreate {
					t.Errorf("action %s: %s", d.Action, d.Reason)
				}
				held, err := hb.Plan(ctx, d)
				for _, f := range append(slices.Clone(d.Fields), d.HeldFields...) {
					classes[f.Field] = f.Class
				}
				return held, err
			}
			cs, rep, held, err := r.PlanApply(context.Background(), []*pipeline.InputPlan{p}, time.Now(), ApplyHooks{Classify: classifyHook})
			if err != nil {
				t.Fatal(err)
			}
			d := cs.Plans[0]
			if classes["name"] != diff.ClassService || classes["start_date"] != diff.ClassFile {
				t.Fatalf("classes %v", classes)
			}
			if len(held) != 1 || held[0].Field == nil || held[0].Field.Field != "name" || d.Action != diff.ActionRecreate {
				t.Fatalf("held %v, action %s", held, d.Action)
			}
			if !rep.OK() || rep.Plans[0].Outcome != OutcomeRecreated {
				t.Fatalf("recreate: %s %v", rep.Plans[0].Outcome, rep.Plans[0].Err)
			}
			list, _ := w.Acme.ListPlans(context.Background())
			want := "Renamed by client"
			if overwrite {
				want = "Acme"
			}
			if len(list) != 1 || list[0].Name != want || list[0].StartDate != pipelinetest.Day("2026-09-01") || list[0].ID == id {
				t.Fatalf("plans after the recreate %+v, want one named %q from 2026-09-01", list, want)
			}
			if p.Name != "Acme" {
				t.Errorf("the input plan was changed: %q", p.Name)
			}
		})
	}
}
