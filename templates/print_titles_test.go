package templates

import (
	"errors"
	"fmt"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestPrintTitlesManySheets: each sheet's print titles are named once,
// scoped to that sheet, however many sheets (the fast path appends them
// without excelize's walk over every name and sheet); a second one on the
// same sheet is refused as SetDefinedName refuses it.
func TestPrintTitlesManySheets(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	const n = 50
	for i := range n {
		name := fmt.Sprintf("Plan %d", i)
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		if err := SetPrintLayout(f, name, PrintSetup{TitleFirst: 2, TitleLast: 3}); err != nil {
			t.Fatal(err)
		}
	}
	got := f.GetDefinedName()
	if len(got) != n {
		t.Fatalf("%d defined names, want %d", len(got), n)
	}
	for i, dn := range got {
		name := fmt.Sprintf("Plan %d", i)
		if dn.Name != "_xlnm.Print_Titles" || dn.Scope != name || dn.RefersTo != "'"+name+"'!$2:$3" {
			t.Errorf("name %d: %+v", i, dn)
		}
	}
	if err := SetPrintLayout(f, "Plan 7", PrintSetup{TitleFirst: 1}); !errors.Is(err, excelize.ErrDefinedNameDuplicate) {
		t.Errorf("a second print titles name on a sheet: %v, want ErrDefinedNameDuplicate", err)
	}
}
