package xlsx

import (
	"fmt"
	"strings"
	"testing"
)

// TestFlatReadRowsMerges: a scan that asks for the merged ranges gets the
// ref of every <mergeCell> after the rows, in order, with the rows as a
// scan without them gives; past MaxMergeRefs it says the list is cut
// (the grid reader then reads them in a second pass, mergedAway).
func TestFlatReadRowsMerges(t *testing.T) {
	rows := `<row r="1"><c r="A1" t="inlineStr"><is><t>Year 1: All employees</t></is></c></row><row r="2"><c r="B2"><v>5</v></c></row>`
	for _, tc := range []struct {
		name   string
		merges int
		cut    bool
	}{
		{"few", 3, false},
		{"at the bound", maxMergeRefs, false},
		{"past the bound", maxMergeRefs + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`<worksheet><sheetData>` + rows + `</sheetData><mergeCells>`)
			for i := range tc.merges {
				fmt.Fprintf(&b, `<mergeCell ref="A%d:B%d"/>`, i+3, i+3)
			}
			b.WriteString(`<mergeCell ref="` + strings.Repeat("A", 40) + `1:B1"/></mergeCells></worksheet>`)
			var seen []int
			var got []string
			var cut, called bool
			err := readRows(strings.NewReader(b.String()), func(row int, _ []RawCell) bool {
				seen = append(seen, row)
				return true
			}, func(refs [][]byte, c bool) {
				called, cut = true, c
				for _, r := range refs {
					got = append(got, string(r))
				}
			})
			if err != nil || !called || fmt.Sprint(seen) != "[1 2]" {
				t.Fatalf("err %v, called %v, rows %v", err, called, seen)
			}
			if cut != tc.cut {
				t.Fatalf("cut %v, want %v", cut, tc.cut)
			}
			want := min(tc.merges, maxMergeRefs)
			if len(got) != want || got[0] != "A3:B3" || got[want-1] != fmt.Sprintf("A%d:B%d", want+2, want+2) {
				t.Fatalf("%d refs (%v ... %v), want %d from A3:B3 (the overlong one left out)", len(got), got[0], got[len(got)-1], want)
			}
		})
	}
}
