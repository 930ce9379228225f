package export

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// chParts returns the parts of a written workbook by name.
func chParts(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(data)
	}
	return out
}

// chStoredPlan is a plan as the server holds it: years financial years
// from start, both target types, every counter of the default catalog set.
func chStoredPlan(id int64, name, start string, years int) *pipeline.Plan {
	d, err := pipeline.ParseDate(start)
	if err != nil {
		panic(err)
	}
	p := &pipeline.Plan{ID: id, Name: name, StartDate: d, EndDate: pipeline.LatestEnd,
		Era: pipeline.EraPost2025, Sector: "Manufacturing", UpdatedAt: "2026-11-01T10:00:00Z"}
	fy0 := pipeline.FinancialYearOf(p.StartDate)
	for y := 1; y <= years; y++ {
		fy := fy0 + pipeline.FinancialYear(y-1)
		m := pipeline.Milestone{ID: id*100 + int64(y), YearNumber: y, StartDate: fy.Start(), EndDate: fy.End()}
		for k, tt := range pipeline.TargetTypes {
			c := map[string]int64{}
			for i, n := range pipeline.DefaultCatalog().Names() {
				c[n] = int64((i*7 + y*3 + k + int(id)) % 13)
			}
			m.Targets = append(m.Targets, pipeline.Target{ID: m.ID*10 + int64(k), TargetType: tt, Counters: pipeline.CountersOf(c)})
		}
		p.Milestones = append(p.Milestones, m)
	}
	return p
}

// chSmallCatalog is a custom catalog with its own races, genders and
// levels.
func chSmallCatalog(t *testing.T) *pipeline.Catalog {
	t.Helper()
	var names []string
	for _, l := range []string{"top_managers", "apprentices"} {
		for _, r := range []string{"african", "other"} {
			for _, g := range []string{"female", "male", "diverse"} {
				names = append(names, pipeline.CounterName(r, g, l))
			}
		}
	}
	c, err := pipeline.NewCatalog(names)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chTinyCatalog has one race and two genders: the charts of its plan
// sheets are anchored in the metadata's wide columns.
func chTinyCatalog(t *testing.T) *pipeline.Catalog {
	t.Helper()
	var names []string
	for _, l := range []string{"top_managers", "senior_managers"} {
		for _, g := range []string{"female", "male"} {
			names = append(names, pipeline.CounterName("african", g, l))
		}
	}
	c, err := pipeline.NewCatalog(names)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGridChartPartsAsExcelize: the chart and drawing parts the export
// writes itself are the bytes excelize's AddChart writes for the same
// charts on the same plan sheet (anchors over the sheet's column widths
// included), for the default catalog and for catalogs whose charts sit
// over narrower or wider columns.
func TestGridChartPartsAsExcelize(t *testing.T) {
	ids := pipeline.CompanyIDs{VAT: "0412345678"}
	for _, tc := range []struct {
		name string
		cat  *pipeline.Catalog
	}{{"default", pipeline.DefaultCatalog()}, {"small", chSmallCatalog(t)}, {"tiny", chTinyCatalog(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			sp := chStoredPlan(7, `Acme <&> "plan" 'x'`, "2026-09-01", 3)
			in := pipeline.FromServer(sp, ids)
			// Only the catalog's counters.
			for _, tg := range in.Targets {
				c := map[string]int64{}
				for _, n := range tc.cat.Names() {
					c[n] = 3
				}
				tg.Counters = pipeline.CountersOf(c)
			}
			plans := []Plan{{Plan: in}}
			charts := planCharts(plans, tc.cat)
			cs := charts.Charts(0, len(grid.PlanSheetOf(in).Grids))
			if len(cs) != 2 || charts.Count(0) != 2 {
				t.Fatalf("%d charts (count %d), want 2", len(cs), charts.Count(0))
			}

			f := excelize.NewFile()
			defer f.Close()
			st, err := templates.NewStyles(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := templates.AddPlanSheet(f, "P", grid.PlanSheetOf(in), tc.cat, st); err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if err := f.AddChart("P", c.Cell, c.Chart); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if _, err := f.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			parts := chParts(t, buf.Bytes())
			for k, c := range cs {
				want := parts[fmt.Sprintf("xl/charts/chart%d.xml", k+1)]
				var b bytes.Buffer
				chartXML(&b, c.Chart)
				if got := b.String(); got != want {
					t.Errorf("chart %d:\n got %s\nwant %s", k+1, got, want)
				}
			}
			var b bytes.Buffer
			if err := drawingXML(&b, cs, templates.PlanColumnWidths(tc.cat)); err != nil {
				t.Fatal(err)
			}
			if got, want := b.String(), parts["xl/drawings/drawing1.xml"]; got != want {
				t.Errorf("drawing:\n got %s\nwant %s", got, want)
			}
		})
	}
}
