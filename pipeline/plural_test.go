package pipeline

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		one  string
		many []string
		want string
	}{
		{0, "target", nil, "0 targets"},
		{1, "target", nil, "1 target"},
		{2, "counter", nil, "2 counters"},
		{1, "person", []string{"people"}, "1 person"},
		{3, "person", []string{"people"}, "3 people"},
		{1, "more failure", nil, "1 more failure"},
	} {
		if got := Plural(tc.n, tc.one, tc.many...); got != tc.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tc.n, tc.one, got, tc.want)
		}
	}
}
