package pipeline

import (
	"slices"
	"strings"

	"testing"

	"pgregory.net/rapid"
)

// TestMatchPlans is the plan-matching rule, with the cases where the two
// old rules (matchPlan in the Runner for diff, apply and reconcile;
// matchStoredPlan in the sector check for check --server) disagreed, and the case
// where matchPlan created a third plan.
func TestMatchPlans(t *testing.T) {
	s1, s2 := mustDate("2025-09-01"), mustDate("2026-09-01")
	list := []Plan{
		{ID: 1, Name: "Alpha", StartDate: s1},
		{ID: 2, Name: "  Beta ", StartDate: s1},
		{ID: 3, Name: "Case Plan", StartDate: s1},
		{ID: 4, Name: "CASE PLAN", StartDate: s1},
		{ID: 5, Name: "Dup", StartDate: s1},
		{ID: 6, Name: "Dup", StartDate: s1},
		{ID: 7, Name: "Exact", StartDate: s1},
		{ID: 8, Name: "EXACT", StartDate: s1},
		{ID: 9, Name: "Alpha", StartDate: s2},
		{ID: 10, Name: "Straße", StartDate: s1},
	}
	tests := []struct {
		name   string
		id     int64
		plan   string
		start  Date
		skip   []int64
		want   []int64
		oldRes []int64 // what matchPlan answered (nil: create, or an error when ambiguous)
		oldChk []int64 // what matchStoredPlan answered
	}{
		{name: "exact", plan: "Alpha", start: s1, want: []int64{1}, oldRes: []int64{1}, oldChk: []int64{1}},
		{name: "other start is another plan", plan: "Alpha", start: s2, want: []int64{9}, oldRes: []int64{9}, oldChk: []int64{9}},
		{name: "spaces trimmed", plan: "Beta", start: s1, want: []int64{2}, oldRes: []int64{2}, oldChk: []int64{2}},
		{name: "letter case alone (old rules disagreed)", plan: "alpha", start: s1, want: []int64{1}, oldRes: []int64{1}, oldChk: nil},
		{name: "two case variants, none exact: ambiguous (matchPlan created a third plan)", plan: "case plan", start: s1,
			want: []int64{3, 4}, oldRes: nil, oldChk: nil},
		{name: "exact beats a case variant", plan: "Exact", start: s1, want: []int64{7}, oldRes: []int64{7}, oldChk: []int64{7}},
		{name: "two exact: ambiguous", plan: "Dup", start: s1, want: []int64{5, 6}, oldRes: []int64{5, 6}, oldChk: []int64{5, 6}},
		{name: "plan id wins over the name", id: 9, plan: "Beta", start: s1, want: []int64{9}, oldRes: []int64{9}, oldChk: []int64{9}},
		{name: "unknown plan id", id: 99, plan: "Nobody", start: s1, want: nil},
		{name: "no start date", plan: "Alpha", want: nil},
		{name: "no name", start: s1, want: nil},
		{name: "skip the old plan of a recreate", plan: "Alpha", start: s1, skip: []int64{1}, want: nil},
		{name: "skip one of two case variants", plan: "case plan", start: s1, skip: []int64{3}, want: []int64{4}},
		{name: "Unicode letter case", plan: "STRASSE", start: s1, want: nil}, // folding, not a language's upper case
		{name: "Unicode letter case, simple", plan: "straße", start: s1, want: []int64{10}},
	}
	ids := func(ps []*Plan) []int64 {
		var out []int64
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			skip := map[int64]bool{}
			for _, id := range tc.skip {
				skip[id] = true
			}
			got := ids(MatchPlans(list, tc.id, tc.plan, tc.start, skip))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("matchPlans = %v, want %v", got, tc.want)
			}
			if len(tc.skip) > 0 {
				return
			}
			in := &InputPlan{PlanID: tc.id, Name: tc.plan, StartDate: tc.start}
			// Every user of the rule agrees with it.
			var chk []int64
			for _, i := range MatchStoredPlan(in, list) {
				chk = append(chk, list[i].ID)
			}
			if !slices.Equal(chk, tc.want) {
				t.Errorf("matchStoredPlan = %v, want %v", chk, tc.want)
			}
			m, _, err := MatchPlan(in, list, "acme")
			switch {
			case len(tc.want) == 1:
				if err != nil || m == nil || m.ID != tc.want[0] {
					t.Errorf("matchPlan = %v, %v; want plan %d", m, err, tc.want[0])
				}
			case len(tc.want) > 1:
				if err == nil || !strings.Contains(err.Error(), "ambiguous plan") {
					t.Errorf("matchPlan = %v, %v; want an ambiguous plan", m, err)
				}
			case tc.id != 0:
				if err == nil {
					t.Errorf("matchPlan of an unknown plan id: no error")
				}
			default:
				if err != nil || m != nil {
					t.Errorf("matchPlan = %v, %v; want no match", m, err)
				}
			}
		})
	}
}

// TestMatchPlanRecreatedPlanID: the file's plan_id was deleted by a
// recreate and one plan has the file's name and start date: that plan is
// the match, with a note that names it and says how to refresh the
// workbook, instead of a failure on every run. Several such plans are
// still an error.
func TestMatchPlanRecreatedPlanID(t *testing.T) {
	s1 := mustDate("2025-09-01")
	list := []Plan{{ID: 34, Name: "Acme", StartDate: s1}, {ID: 40, Name: "Twin", StartDate: s1}, {ID: 41, Name: "Twin", StartDate: s1}}
	m, note, err := MatchPlan(&InputPlan{PlanID: 12, Name: "Acme", StartDate: s1}, list, "acme")
	if err != nil || m == nil || m.ID != 34 {
		t.Fatalf("matchPlan = %v, %v", m, err)
	}
	for _, want := range []string{"plan_id 12 is no longer on account acme", "recreated as plan 34", "Put plan_id 34", "eepipe export --plan 34"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if _, _, err := MatchPlan(&InputPlan{PlanID: 12, Name: "Twin", StartDate: s1}, list, "acme"); err == nil || !strings.Contains(err.Error(), "plan 12 is not on account acme") {
		t.Errorf("plan_id gone, two plans of the name: %v", err)
	}
	// A plan_id the account never held, greater than the plan of the
	// name (a typo, an id of nothing, "plan id held by none"):
	// an error, never the plan of the same name.
	if m, _, err := MatchPlan(&InputPlan{PlanID: 999, Name: "Acme", StartDate: s1}, list, "acme"); err == nil || m != nil ||
		!strings.Contains(err.Error(), "plan 999 is not on account acme") {
		t.Errorf("plan_id 999 held by none: %v, %v; want an error", m, err)
	}
}

// TestMatchPlansProperty: whatever the stored plans, matchPlans returns
// only plans with the start date and a name equal ignoring case and outer
// spaces, none it was told to skip; exact names when any stored plan has
// the exact name; and every plan that qualifies by the rule.
func TestMatchPlansProperty(t *testing.T) {
	names := []string{"Alpha", "alpha", "ALPHA", " Alpha ", "Beta", "beta", "Straße", "STRASSE", ""}
	starts := []Date{mustDate("2025-09-01"), mustDate("2026-09-01")}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(t, "n")
		list := make([]Plan, n)
		for i := range list {
			list[i] = Plan{ID: int64(i + 1), Name: rapid.SampledFrom(names).Draw(t, "name"), StartDate: rapid.SampledFrom(starts).Draw(t, "start")}
		}
		name := rapid.SampledFrom(names).Draw(t, "want")
		start := rapid.SampledFrom(starts).Draw(t, "wantStart")
		skip := map[int64]bool{}
		if n > 0 && rapid.Bool().Draw(t, "skip") {
			skip[int64(rapid.IntRange(1, n).Draw(t, "skipID"))] = true
		}
		got := MatchPlans(list, 0, name, start, skip)
		want := strings.TrimSpace(name)
		var exact, folded []int64
		for _, p := range list {
			if p.StartDate != start || skip[p.ID] || want == "" {
				continue
			}
			switch s := strings.TrimSpace(p.Name); {
			case s == want:
				exact = append(exact, p.ID)
			case strings.EqualFold(s, want):
				folded = append(folded, p.ID)
			}
		}
		expect := exact
		if len(expect) == 0 {
			expect = folded
		}
		var ids []int64
		for _, p := range got {
			ids = append(ids, p.ID)
			if !SameName(p.Name, name) || p.StartDate != start || skip[p.ID] {
				t.Fatalf("matchPlans returned plan %+v for %q %s", *p, name, start)
			}
		}
		if !slices.Equal(ids, expect) {
			t.Fatalf("matchPlans(%q, %s) = %v, want %v (list %+v, skip %v)", name, start, ids, expect, list, skip)
		}
	})
}
