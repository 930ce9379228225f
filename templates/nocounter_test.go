package templates_test

import (
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// TestTemplateShadesCellsWithoutCounter checks that a custom catalog with
// holes (no number_of_other_female_top_managers) gets a shaded, patterned
// cell where its grid has no counter, and ordinary input cells elsewhere.
func TestTemplateShadesCellsWithoutCounter(t *testing.T) {
	cat, err := pipeline.NewCatalog([]string{
		"number_of_african_male_top_managers", "number_of_african_female_top_managers",
		"number_of_other_male_top_managers", "number_of_other_female_interns",
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := templates.New(templates.Options{Catalog: cat, Years: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, row := cellOf(t, f, "Plan", "Top management")
	col, _ := cellOf(t, f, "Plan", "Other")
	fillOf := func(c, r int) excelize.Fill {
		ref, _ := excelize.CoordinatesToCellName(c, r)
		id, err := f.GetCellStyle("Plan", ref)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Fill
	}
	// Other/Male/Top management exists; Other/Female/Top management does not.
	if got := fillOf(col, row); got.Pattern != 1 {
		t.Errorf("counter cell fill %+v, want a solid input fill", got)
	}
	if got := fillOf(col+1, row); got.Pattern == 1 || len(got.Color) == 0 {
		t.Errorf("cell without a counter: fill %+v, want a patterned shade", got)
	}
}
