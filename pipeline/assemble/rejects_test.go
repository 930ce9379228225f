package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"slices"
	"testing"
)

// TestSplitInvalid: an error on a plan's row or grid sheet rejects that
// plan (every plan holding the row); an error no plan holds rejects its
// file whole, as does an error left out by the bound; warnings reject
// nothing; the rejected rows are listed by file order, sheet and row.
func TestSplitInvalid(t *testing.T) {
	plan := func(name string, rows ...pipeline.RowRef) *pipeline.InputPlan {
		p := &pipeline.InputPlan{Name: name}
		for _, r := range rows {
			p.AddRow(pipeline.Origin{File: r.File, Sheet: r.Sheet, Row: r.Row})
		}
		return p
	}
	good := plan("good", pipeline.RowRef{File: "a.csv", Sheet: "", Row: 2}, pipeline.RowRef{File: "a.csv", Sheet: "", Row: 3})
	bad := plan("bad", pipeline.RowRef{File: "a.csv", Sheet: "", Row: 5}, pipeline.RowRef{File: "a.csv", Sheet: "", Row: 4})
	grid := &pipeline.InputPlan{Name: "grid"}
	grid.AddRow(pipeline.Origin{File: "g.xlsx", Sheet: "P1", Cell: "A6", Row: 6})
	grid.AddRow(pipeline.Origin{File: "g.xlsx", Sheet: "P1", Cell: "A20", Row: 20})
	gridOK := &pipeline.InputPlan{Name: "gridOK"}
	gridOK.AddRow(pipeline.Origin{File: "g.xlsx", Sheet: "P2", Cell: "A6", Row: 6})
	inHeaderFile := plan("h", pipeline.RowRef{File: "h.csv", Sheet: "", Row: 2})
	spans := plan("spans", pipeline.RowRef{File: "b.csv", Sheet: "", Row: 2}, pipeline.RowRef{File: "h.csv", Sheet: "", Row: 3})
	omitted := plan("o", pipeline.RowRef{File: "o.csv", Sheet: "", Row: 2})
	b := &pipeline.Batch{Files: []string{"a.csv", "g.xlsx", "h.csv", "b.csv", "o.csv"},
		Plans: []*pipeline.InputPlan{good, bad, grid, gridOK, inHeaderFile, spans, omitted},
		Problems: pipeline.Problems{
			{Severity: pipeline.Warning, Origin: pipeline.Origin{File: "a.csv", Row: 2, Column: 3}, Message: "a warning"},
			{Severity: pipeline.Error, Origin: pipeline.Origin{File: "a.csv", Row: 4, Column: 7}, Message: "bad counter"},
			{Severity: pipeline.Error, Origin: pipeline.Origin{File: "a.csv", Row: 9}, Message: "plan key in error"},
			{Severity: pipeline.Error, Origin: pipeline.Origin{File: "g.xlsx", Sheet: "P1", Cell: "C12", Row: 12, Column: 3}, Message: "bad grid cell"},
			{Severity: pipeline.Error, Origin: pipeline.Origin{File: "h.csv", Row: 1, Column: 11}, Message: "bad header"},
		},
		Omitted: []pipeline.Omitted{{Severity: pipeline.Error, File: "o.csv", Kind: "bad counter", Count: 3}, {Severity: pipeline.Warning, File: "b.csv", Count: 9}},
	}
	send, rej := SplitInvalid(b)
	var sent, rejected []string
	for _, p := range send {
		sent = append(sent, p.Name)
	}
	for _, p := range rej.Plans {
		rejected = append(rejected, p.Name)
	}
	// "plan key in error" is on a row of a.csv no plan holds: a.csv is
	// rejected whole, good included.
	if !slices.Equal(sent, []string{"gridOK"}) || !slices.Equal(rejected, []string{"good", "bad", "grid", "h", "spans", "o"}) {
		t.Errorf("sent %v, rejected %v", sent, rejected)
	}
	if !slices.Equal(rej.WholeFiles, []string{"a.csv", "h.csv", "o.csv"}) {
		t.Errorf("whole files %v", rej.WholeFiles)
	}
	want := []pipeline.RowRef{{File: "a.csv", Sheet: "", Row: 2}, {File: "a.csv", Sheet: "", Row: 3}, {File: "a.csv", Sheet: "", Row: 4}, {File: "a.csv", Sheet: "", Row: 5}, {File: "a.csv", Sheet: "", Row: 9},
		{File: "g.xlsx", Sheet: "P1", Row: 0}, {File: "h.csv", Sheet: "", Row: 1}, {File: "h.csv", Sheet: "", Row: 2}, {File: "h.csv", Sheet: "", Row: 3}, {File: "b.csv", Sheet: "", Row: 2}, {File: "o.csv", Sheet: "", Row: 2}}
	if !slices.Equal(rej.Rows, want) {
		t.Errorf("rows %v\nwant %v", rej.Rows, want)
	}
	if len(rej.Problems) != 5 { // the warning of a.csv row 2 and the errors (the header row is handed back: the writer marks it)
		t.Errorf("problems %v", rej.Problems)
	}

	// Without the key error, a.csv's good plan is sent.
	b.Problems = slices.Delete(b.Problems, 2, 3)
	send, rej = SplitInvalid(b)
	if len(send) != 2 || send[0] != good || len(rej.Plans) != 5 {
		t.Errorf("sent %d (%v), rejected %d", len(send), send, len(rej.Plans))
	}
}
