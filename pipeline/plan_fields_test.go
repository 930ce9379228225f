package pipeline

import "testing"

// TestPlanFieldsTable: each row of PlanFields reads and writes its own
// struct field on every side (a file's plan, a stored plan, a plan to
// create, a metadata update), and no other.
func TestPlanFieldsTable(t *testing.T) {
	start, end := Date{2025, 9, 1}, Date{2030, 8, 31}
	stored := &Plan{Name: "N", Sector: "S", ScorecardID: "scorecard_1", StartDate: start, EndDate: end}
	in := &InputPlan{Name: "N", Sector: "S", ScorecardID: "scorecard_1", StartDate: start, EndDate: end}
	np := &NewPlan{Name: "N", Sector: "S", ScorecardID: "scorecard_1", StartDate: start, EndDate: end}
	want := map[string]string{"name": "N", "sector": "S", "scorecard_id": "scorecard_1", "start_date": "2025-09-01", "end_date": "2030-08-31"}
	cols := map[string]string{"name": ColPlanName, "sector": ColSector, "scorecard_id": ColScorecardID, "start_date": ColStartDate, "end_date": ColEndDate}
	if len(PlanFields) != len(want) {
		t.Fatalf("%d plan fields, want %d", len(PlanFields), len(want))
	}
	for _, f := range PlanFields {
		if got := f.Stored(stored); got != want[f.Name] {
			t.Errorf("%s: Stored = %q, want %q", f.Name, got, want[f.Name])
		}
		if got := f.Input(in); got != want[f.Name] {
			t.Errorf("%s: Input = %q", f.Name, got)
		}
		if got := f.New(np); got != want[f.Name] {
			t.Errorf("%s: New = %q", f.Name, got)
		}
		if f.Column != cols[f.Name] {
			t.Errorf("%s: column %q, want %q", f.Name, f.Column, cols[f.Name])
		}
		if g, ok := PlanFieldNamed(f.Name); !ok || g.Name != f.Name {
			t.Errorf("PlanFieldNamed(%q) = %v, %v", f.Name, g.Name, ok)
		}
		var c PlanChange
		slot, patched := f.Change(&c)
		if patched == f.Date {
			t.Errorf("%s: patched %v for a date %v", f.Name, patched, f.Date)
		}
		if !patched {
			if f.SetInput(in, "x") || f.SetNew(np, "x") {
				t.Errorf("%s: a date set as text", f.Name)
			}
			continue
		}
		v := "new " + f.Name
		*slot = &v
		if c.IsZero() {
			t.Errorf("%s: a change sending it is zero", f.Name)
		}
		c.Clear(f.Name)
		if !c.IsZero() {
			t.Errorf("%s: Clear left the change %+v", f.Name, c)
		}
		in2, np2 := *in, *np
		f.SetInput(&in2, v)
		f.SetNew(&np2, v)
		for _, g := range PlanFields {
			w := want[g.Name]
			if g.Name == f.Name {
				w = v
			}
			if g.Input(&in2) != w || g.New(&np2) != w {
				t.Errorf("setting %s: %s reads %q and %q, want %q", f.Name, g.Name, g.Input(&in2), g.New(&np2), w)
			}
		}
	}
	name, _ := PlanFieldNamed("name")
	sector, _ := PlanFieldNamed("sector")
	for _, tc := range []struct {
		f            PlanField
		file, stored string
		want         bool
	}{
		{name, "Acme", " Acme ", false}, // the readers trim a name's cell
		{name, "Acme", "Acme 2", true},
		{name, "", "Acme", false}, // blank: leave as is
		{sector, "Mining", " Mining", true},
		{sector, "Mining", "Mining", false},
	} {
		if got := tc.f.Differs(tc.file, tc.stored); got != tc.want {
			t.Errorf("%s.Differs(%q, %q) = %v", tc.f.Name, tc.file, tc.stored, got)
		}
	}
	if _, ok := PlanFieldNamed("era"); ok {
		t.Error("era is a plan field")
	}
}
