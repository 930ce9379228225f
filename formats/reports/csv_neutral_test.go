package reports_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
)

const csvEvil = `=HYPERLINK("http://evil","x")`

// csvCheckNeutral parses a CSV file eepipe wrote: no field may start a
// formula, and want (neutralised) must be in it.
func csvCheckNeutral(t *testing.T, name string, data []byte, comma rune) {
	t.Helper()
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, data)
	}
	found := false
	for _, rec := range recs {
		for _, f := range rec {
			if f != "" && strings.ContainsRune("=+-@\t\r", rune(f[0])) && table.CSVSafeField(f) != f {
				t.Errorf("%s: field %q starts a formula", name, f)
			}
			found = found || strings.Contains(f, "'"+csvEvil)
		}
	}
	if !found {
		t.Errorf("%s: the neutralised name is missing:\n%s", name, data)
	}
}

// TestCSVWritersNeutraliseFormulas: every CSV writer neutralises a plan
// name that is a formula, and the exports read back to the name (an error
// at its cell).
func TestCSVWritersNeutraliseFormulas(t *testing.T) {
	dir := t.TempDir()
	o := pipeline.Origin{File: "in.csv", Row: 2}
	plan := &pipeline.InputPlan{Origin: o, Name: csvEvil, StartDate: sample.Date("2025-09-01"), EndDate: sample.Date("2030-08-31"),
		Company: pipeline.CompanyIDs{VAT: "4123456789"},
		Targets: []*pipeline.InputTarget{{Origin: o, YearNumber: 1, TargetType: pipeline.TargetAll,
			Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3})}}}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	for _, w := range []struct {
		name  string
		write func(string, []*pipeline.InputPlan, *pipeline.Catalog) error
	}{{"flat.csv", table.WriteFlatCSV}, {"long.csv", table.WriteLongCSV}} {
		path := filepath.Join(dir, w.name)
		if err := w.write(path, []*pipeline.InputPlan{plan}, nil); err != nil {
			t.Fatal(err)
		}
		csvCheckNeutral(t, w.name, read(path), ',')
		// Read back, the name is the one written (its quote removed), and
		// an error at its cell: a formula-like name is never sent
		// (docs/formats.md "Values").
		batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
		if err != nil || len(batch.Problems) != 1 || batch.Problems[0].Origin.Header != pipeline.ColPlanName ||
			batch.Problems[0].Value != csvEvil || !strings.Contains(batch.Problems[0].Message, "starts like a spreadsheet formula") {
			t.Errorf("%s read back: %v %v", w.name, err, batch)
		}
	}

	problems := filepath.Join(dir, "problems.csv")
	batch := &pipeline.Batch{Files: []string{"in.csv"}, Problems: pipeline.Problems{{Severity: pipeline.Error, Origin: o, Value: csvEvil, Message: "bad"}}}
	if err := reports.WriteProblemReport(problems, batch); err != nil {
		t.Fatal(err)
	}
	csvCheckNeutral(t, "problems.csv", read(problems), ',')

	rep := reports.SampleRunReport()
	rep.Plans[0].Diff.Input.Name = csvEvil
	run := filepath.Join(dir, "run.csv")
	if err := reports.WriteRunReport(run, rep); err != nil {
		t.Fatal(err)
	}
	csvCheckNeutral(t, "run.csv", read(run), ',')

	rec := sample.Reconciliation("in.csv")
	rec.Plans[0].PlanName = csvEvil
	recPath := filepath.Join(dir, "reconcile.csv")
	if err := reports.WriteReconcileCSV(recPath, rec); err != nil {
		t.Fatal(err)
	}
	csvCheckNeutral(t, "reconcile.csv", read(recPath), ',')

	sr := sample.SectorReport(t)
	sr.Plans[0].Name = csvEvil
	var buf bytes.Buffer
	if err := reports.WriteSectorCSV(&buf, sr); err != nil {
		t.Fatal(err)
	}
	csvCheckNeutral(t, "check.csv", buf.Bytes(), ',')
}
