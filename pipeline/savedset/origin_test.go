package savedset

import (
	"github.com/eepipe/eepipe/pipeline"
	"testing"
)

// TestSavedOriginReadsBackRef: the location a change set stores as text
// (Origin.Ref) reads back to the same cell, sheet, row and column.
func TestSavedOriginReadsBackRef(t *testing.T) {
	for _, o := range []pipeline.Origin{
		{File: "v.xlsx", Sheet: "Targets", Cell: "F12", Row: 12, Column: 6},
		{File: "v.xlsx", Sheet: "Acme 2026!x", Cell: "AB3", Row: 3, Column: 28},
		{File: "v.xlsx", Sheet: "Plan row 2", Row: 7},
		{File: "v.xlsx", Sheet: "Targets"},
		{File: "v.csv", Row: 2, Column: 7},
		{File: "v.csv", Row: 5},
		{File: "v.csv"},
	} {
		got := SavedOrigin(o.File, o.Ref())
		if got != o {
			t.Errorf("savedOrigin(%q, %q) = %+v, want %+v", o.File, o.Ref(), got, o)
		}
	}
}

// FuzzSavedOrigin: any stored text reads back without a crash, to an
// origin that formats back to the same text when it was a recognised form.
func FuzzSavedOrigin(f *testing.F) {
	for _, s := range []string{"Targets!F12", "Targets row 12", "sheet Targets", "line 12, column 6", "line 12", "", "!A0", "x!ZZZZ1", "line -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		o := SavedOrigin("f.csv", ref)
		if o.Row < 0 || o.Column < 0 {
			t.Fatalf("savedOrigin(%q) = %+v", ref, o)
		}
		if o.Cell != "" && pipeline.CellRef(o.Column, o.Row) != o.Cell {
			t.Fatalf("savedOrigin(%q) = %+v: the cell disagrees with its row and column", ref, o)
		}
	})
}
