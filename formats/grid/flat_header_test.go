package grid

import "testing"

// TestSheetWithFlatHeaderIsNoGrid: the grid reader leaves a sheet to the
// flat reader by the flat reader's own rule (templates.IsFlatHeaderCell):
// a target_type header with spaces around it, in the first rows; not one
// further down.
func TestSheetWithFlatHeaderIsNoGrid(t *testing.T) {
	spaced := sheetText{{"Plans"}, {"plan_id", " Target_Type "}}
	if !spaced.hasFlatHeader() {
		t.Error(`a sheet with " Target_Type " in row 2 is not taken for a flat table`)
	}
	low := make(sheetText, 21)
	low[20] = []string{"target_type"}
	if low.hasFlatHeader() {
		t.Error("a target_type cell in row 21, past the rows the flat reader looks at, is taken for a flat header")
	}
	if (sheetText{{"target type"}}).hasFlatHeader() {
		t.Error(`"target type" is taken for a flat header`)
	}
}
