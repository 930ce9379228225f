package formats

import (
	"io"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// TestExportWriteFailureAnywhere: a grid export (charts, Sector targets
// sheet) whose output fails at any point of the package reports the
// failure; no part of the writer swallows a write error and leaves a
// truncated package looking complete.
func TestExportWriteFailureAnywhere(t *testing.T) {
	plans := exExportPlans()
	var inputs []*pipeline.InputPlan
	for _, p := range plans {
		inputs = append(inputs, p.Plan)
	}
	report := sector.CheckSector(inputs, pipeline.DefaultCatalog(), sector.DefaultSectorTargets())
	opts := export.Options{Sector: &export.Sector{Plans: report.Plans, Source: report.TargetsSource}}
	var full countingWriter
	wb, err := export.NewWorkbook(plans, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wb.WriteTo(&full); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	for limit := 0; limit < full.n; limit += max(1, full.n/97) {
		wb, err := export.NewWorkbook(plans, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = wb.WriteTo(&exFailingWriter{w: io.Discard, limit: limit})
		wb.Close()
		if err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("failing after %d of %d bytes: err = %v", limit, full.n, err)
		}
	}
}

type countingWriter struct{ n int }

func (c *countingWriter) Write(b []byte) (int, error) { c.n += len(b); return len(b), nil }
