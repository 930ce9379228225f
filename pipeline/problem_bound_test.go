package pipeline

import (
	"fmt"
	"testing"
)

func TestProblemBound(t *testing.T) {
	var over Problems
	b := &ProblemBound{Keep: 2, Overflow: func(p Problem) { over = append(over, p) }}
	var ps Problems
	for i := range 10 {
		o := Origin{File: "a.csv", Row: i + 2, Column: 9}
		ps.Warnf(o, "7", "counter %d is above all employees (%d)", i, i+1)
		ps[len(ps)-1].Kind = "disabled above all employees"
		if i == 3 {
			ps = append(ps, ps[len(ps)-1]) // a repeat counts once
		}
		ps.Errorf(o, fmt.Sprint(-i), "%q is negative; write a count of 0 or more", fmt.Sprint(-i))
	}
	ps.Warnf(Origin{File: "b.csv", Row: 2}, "", "the column %q is not one eepipe knows", "x")
	kept := b.Admit(ps)
	if len(kept) != 5 {
		t.Fatalf("kept %d problems, want 2 + 2 + 1: %v", len(kept), kept)
	}
	if len(over) != 16 {
		t.Fatalf("overflow got %d problems, want 16", len(over))
	}
	got := b.Omitted()
	want := []Omitted{
		{Severity: Error, File: "a.csv", Kind: `"0" is negative`, Count: 8},
		{Severity: Warning, File: "a.csv", Kind: "disabled above all employees", Count: 8},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("omitted %v, want %v", got, want)
	}
	batch := &Batch{Problems: kept, Omitted: got}
	if batch.Count(Error) != 10 || batch.Count(Warning) != 11 {
		t.Fatalf("counts %d errors, %d warnings; want 10, 11", batch.Count(Error), batch.Count(Warning))
	}
}

func TestProblemBoundZeroKeepsAll(t *testing.T) {
	var ps Problems
	for i := range 100 {
		ps.Warnf(Origin{File: "a.csv", Row: i}, "", "w %d", i)
	}
	var b *ProblemBound
	if got := b.Admit(ps); len(got) != 100 || b.Omitted() != nil {
		t.Fatalf("nil bound kept %d", len(got))
	}
	if got := (&ProblemBound{}).Admit(ps); len(got) != 100 {
		t.Fatalf("zero bound kept %d", len(got))
	}
}
