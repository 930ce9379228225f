package sector

import "github.com/eepipe/eepipe/pipeline"

// A file plan beside the plans on the service, for check --server: the
// stored plan it describes and the plan as it would stand once applied.

// fillFromServer returns the plan as it would stand once the file is
// applied to the stored plan: the stored plan's metadata and counters, with
// what the file sets on top. Blank file values take the stored value.
func FillFromServer(file *pipeline.InputPlan, stored *pipeline.Plan) *pipeline.InputPlan {
	out := pipeline.FromServer(stored, file.Company)
	out.Origin = file.Origin
	for _, f := range pipeline.PatchedPlanFields() {
		if v := f.Input(file); v != "" {
			f.SetInput(out, v)
		}
	}
	type key struct {
		year int
		tt   string
	}
	idx := map[key]*pipeline.InputTarget{}
	for _, t := range out.Targets {
		idx[key{t.YearNumber, t.TargetType}] = t
	}
	for _, ft := range file.Targets {
		n, ok := ft.Year(out.StartDate)
		if !ok {
			continue
		}
		st := idx[key{n, ft.TargetType}]
		if st == nil {
			continue // the service has no such milestone: the file's year is outside the plan
		}
		for k, v := range ft.Counters.All() {
			st.Counters.Put(k, v)
		}
	}
	return out
}
