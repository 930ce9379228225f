package table_test

import (
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
)

// readBack reads files with formats.ReadFiles and fails on any error.
func readBack(t readback.TB, cat *pipeline.Catalog, paths ...string) []*pipeline.InputPlan {
	t.Helper()
	b, err := formats.ReadFiles(paths, formats.ReadOptions{Catalog: cat})
	if err != nil {
		t.Fatalf("formats.ReadFiles: %v", err)
	}
	if b.Problems.HasErrors() {
		t.Fatalf("errors reading back %v:\n%s", paths, readback.ProblemsText(b.Problems))
	}
	return b.Plans
}

// roundTripCase is one writer of the round-trip tests.
type roundTripCase struct {
	name  string
	write func(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error
}

// checkRoundTrips: any valid model written by each writer reads back
// (through formats.ReadFiles, layout detection included) as the same model.
func checkRoundTrips(t *testing.T, cases []roundTripCase, long bool) {
	dir := t.TempDir()
	cats := []*pipeline.Catalog{pipeline.DefaultCatalog(), smallCatalog(t)}
	rapid.Check(t, func(rt *rapid.T) {
		cat := rapid.SampledFrom(cats).Draw(rt, "catalog")
		plans := readback.GenPlans(rt, cat)
		want := readback.Model(plans)
		for _, w := range cases {
			path := filepath.Join(dir, w.name)
			if err := w.write(path, plans, cat); err != nil {
				rt.Fatalf("%s: write: %v", w.name, err)
			}
			if got := readback.Model(readBack(rt, cat, path)); !reflect.DeepEqual(got, want) {
				rt.Fatalf("%s: read back differs:\n got %+v\nwant %+v", w.name, got, want)
			}
		}
		if !long {
			return
		}
		path := filepath.Join(dir, "long.csv")
		if err := table.WriteLongCSV(path, plans, cat); err != nil {
			rt.Fatalf("long: %v", err)
		}
		if got := readLong(rt, path, plans); !reflect.DeepEqual(got, want) {
			rt.Fatalf("long.csv: read back differs:\n got %+v\nwant %+v", got, want)
		}
	})
}

// TestCSVWritersRoundTrip: the flat CSV reads back as the model written;
// the long CSV carries every counter of it.
func TestCSVWritersRoundTrip(t *testing.T) {
	checkRoundTrips(t, []roundTripCase{{"flat.csv", table.WriteFlatCSV}}, true)
}

// TestXLSXWritersRoundTrip: the flat XLSX and the grid workbook read back
// as the model written. Workbooks are slow to write and read under -race,
// so this runs fewer cases unless -rapid.checks says otherwise.
func TestXLSXWritersRoundTrip(t *testing.T) {
	limitRapidChecks(t, 20)
	checkRoundTrips(t, []roundTripCase{
		{"flat.xlsx", books.WriteFlat},
		{"grid.xlsx", func(p string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
			return books.WriteGrid(p, plans, cat)
		}},
	}, false)
}

// limitRapidChecks lowers rapid's number of cases for one test, unless the
// run sets -rapid.checks itself.
func limitRapidChecks(t *testing.T, n int) {
	fl := flag.Lookup("rapid.checks")
	if fl == nil {
		return
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if explicit {
		return
	}
	old := fl.Value.String()
	if err := fl.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Value.Set(old) })
}

// smallCatalog is a custom catalog with its own races, genders and levels.
func smallCatalog(t *testing.T) *pipeline.Catalog {
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

// readLong parses a long CSV back into the model: the plan fields the long
// table does not carry (dates, sector, scorecard) are taken from plans.
func readLong(t readback.TB, path string, plans []*pipeline.InputPlan) []readback.ModelPlan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%v", err)
	}
	// The long CSV's header, as users' tools read it (docs/formats.md, "The long table").
	wantHeader := []string{"plan_id", "plan_name", "company_vat_number", "company_registration_number", "company_id_number",
		"year_number", "financial_year", "target_type", "race", "gender", "level", "counter", "value", "account"}
	if !reflect.DeepEqual(rows[0], wantHeader) {
		t.Fatalf("header %v, want %v", rows[0], wantHeader)
	}
	out := readback.Model(plans)
	for i := range out {
		out[i].Targets = nil
	}
	type tkey struct {
		plan int
		year string
		tt   string
	}
	index := map[tkey]int{}
	for _, r := range rows[1:] {
		pi := -1
		for i, p := range plans {
			if strconv.FormatInt(p.PlanID, 10) == r[0] || (p.PlanID == 0 && r[0] == "" && p.Name == r[1]) {
				pi = i
				break
			}
		}
		if pi < 0 {
			t.Fatalf("row %v names no plan", r)
		}
		p := &out[pi]
		if p.Name != r[1] || p.Company.VAT != r[2] || p.Company.Registration != r[3] || p.Company.IDNumber != r[4] {
			t.Fatalf("row %v: plan fields differ from %+v", r, p)
		}
		if pipeline.CounterName(r[8], r[9], r[10]) != r[11] {
			t.Fatalf("row %v: race, gender, level do not make the counter", r)
		}
		k := tkey{pi, r[5], r[7]}
		ti, ok := index[k]
		if !ok {
			y, _ := strconv.Atoi(r[5])
			var fy pipeline.FinancialYear
			if r[6] != "" {
				v, err := pipeline.ParseFinancialYear(r[6])
				if err != nil {
					t.Fatalf("row %v: %v", r, err)
				}
				fy = v
			}
			p.Targets = append(p.Targets, readback.ModelTarget{YearNumber: y, FinancialYear: fy, TargetType: r[7], Counters: map[string]int64{}})
			ti = len(p.Targets) - 1
			index[k] = ti
		}
		v, err := strconv.ParseInt(r[12], 10, 64)
		if err != nil {
			t.Fatalf("row %v: %v", r, err)
		}
		p.Targets[ti].Counters[r[11]] = v
	}
	return out
}
