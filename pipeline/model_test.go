package pipeline

import "testing"

func TestOriginString(t *testing.T) {
	cases := []struct {
		o        Origin
		str, ref string
	}{
		{Origin{File: "in/plans.xlsx", Sheet: "Targets", Cell: "F12", Row: 12, Column: 6}, "plans.xlsx Targets!F12", "Targets!F12"},
		{Origin{File: "plans.xlsx", Sheet: "Targets", Row: 12}, "plans.xlsx Targets row 12", "Targets row 12"},
		{Origin{File: "plans.xlsx", Sheet: "Acme"}, "plans.xlsx sheet Acme", "sheet Acme"},
		{Origin{File: "a/plans.csv", Row: 3, Column: 5, Header: "sector"}, "plans.csv line 3, column 5 (sector)", "line 3, column 5"},
		{Origin{File: "plans.csv", Row: 3}, "plans.csv line 3", "line 3"},
		{Origin{Row: 2}, "line 2", "line 2"},
	}
	for _, c := range cases {
		if got := c.o.String(); got != c.str {
			t.Errorf("String(%+v) = %q, want %q", c.o, got, c.str)
		}
		if got := c.o.Ref(); got != c.ref {
			t.Errorf("Ref(%+v) = %q, want %q", c.o, got, c.ref)
		}
	}
}

func TestProblemString(t *testing.T) {
	p := Problem{Severity: Error, Origin: Origin{File: "p.csv", Row: 4, Column: 2}, Value: "number_of_afrcan_male_top_managers",
		Message: "unknown counter", Suggestions: []string{"number_of_african_male_top_managers"}}
	want := `p.csv line 4, column 2: error: unknown counter (found "number_of_afrcan_male_top_managers"); did you mean "number_of_african_male_top_managers"?`
	if got := p.String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
