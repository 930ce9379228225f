package xlsxtest

import (
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/templates"
)

// PrintWant is what a sheet's page setup must be.
type PrintWant struct {
	Portrait bool
	Titles   string // the sheet's _xlnm.Print_Titles ("" = none required)
	// Wide: the sheet prints at templates.WideScale (or Scale) across
	// pages, not fitted to one page wide.
	Wide  bool
	Scale int
}

// CheckPrint reads back every visible sheet's page setup: A4, landscape
// (or portrait when wanted), fitted to one page wide or, for a wide
// sheet, at templates.WideScale, and the print titles of the sheets that
// name them.
func CheckPrint(t testing.TB, path string, want map[string]PrintWant) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	titles := map[string]string{}
	for _, d := range f.GetDefinedName() {
		if d.Name == "_xlnm.Print_Titles" {
			titles[d.Scope] = d.RefersTo
		}
	}
	for _, s := range f.GetSheetList() {
		if v, _ := f.GetSheetVisible(s); !v {
			continue
		}
		w, listed := want[s]
		if !listed {
			t.Errorf("%s: sheet %q is not expected", filepath.Base(path), s)
			continue
		}
		pl, err := f.GetPageLayout(s)
		if err != nil {
			t.Fatal(err)
		}
		orient := "landscape"
		if w.Portrait {
			orient = "portrait"
		}
		if pl.Orientation == nil || *pl.Orientation != orient || pl.FitToWidth == nil || *pl.FitToWidth != 1 ||
			pl.FitToHeight == nil || *pl.FitToHeight != 0 || pl.Size == nil || *pl.Size != 9 {
			t.Errorf("%s sheet %q: page layout %s, fit %v x %v, size %v; want A4 %s, 1 page wide",
				filepath.Base(path), s, deref(pl.Orientation), derefInt(pl.FitToWidth), derefInt(pl.FitToHeight), derefInt(pl.Size), orient)
		}
		props, err := f.GetSheetProps(s)
		fitted := err == nil && props.FitToPage != nil && *props.FitToPage
		scale := uint(templates.WideScale)
		if w.Scale != 0 {
			scale = uint(w.Scale)
		}
		switch {
		case w.Wide && (fitted || pl.AdjustTo == nil || *pl.AdjustTo != scale):
			t.Errorf("%s sheet %q: fitted %v, scale %v; want %d%% across pages", filepath.Base(path), s, fitted, derefUint(pl.AdjustTo), scale)
		case !w.Wide && !fitted:
			t.Errorf("%s sheet %q: fit to page not set", filepath.Base(path), s)
		}
		if w.Titles != "" && titles[s] != w.Titles {
			t.Errorf("%s sheet %q: print titles %q, want %q", filepath.Base(path), s, titles[s], w.Titles)
		}
	}
	for s := range want {
		if idx, _ := f.GetSheetIndex(s); idx < 0 {
			t.Errorf("%s: no sheet %q", filepath.Base(path), s)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func derefUint(n *uint) any {
	if n == nil {
		return "<nil>"
	}
	return *n
}

func derefInt(n *int) any {
	if n == nil {
		return "<nil>"
	}
	return *n
}
