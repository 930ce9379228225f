package books

import (
	"fmt"
	"io"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/sample"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// ExportPlans are two stored plans of one account as the export writes
// them (sample.StoredPlan), with company, era and milestones.
func ExportPlans() []export.Plan {
	ids := pipeline.CompanyIDs{VAT: "0412345678", Registration: "2009/012345/07"}
	var out []export.Plan
	for _, sp := range []*pipeline.Plan{sample.StoredPlan(7, "Acme 2026", "2026-09-01", 4), sample.StoredPlan(9, "Acme: plan/2", "2027-09-01", 3)} {
		out = append(out, export.Plan{Plan: pipeline.FromServer(sp, ids), Account: "acme", CompanyName: "Acme Foods (Pty) Ltd",
			Era: sp.Era, Milestones: len(sp.Milestones), UpdatedAt: sp.UpdatedAt})
	}
	return out
}

// ManyExportPlans returns n export plans of 4 or 5 financial years (9
// targets on average, as in the 500-plan command benchmark).
func ManyExportPlans(n int) []export.Plan {
	ids := pipeline.CompanyIDs{VAT: "4012345678", Registration: "2009/012345/07"}
	out := make([]export.Plan, n)
	for i := range out {
		start, years := "2025-09-01", 5
		if i%2 == 1 {
			start, years = "2026-09-01", 4
		}
		sp := sample.StoredPlan(int64(1000+i), fmt.Sprintf("Bench plan %d", i), start, years)
		out[i] = export.Plan{Plan: pipeline.FromServer(sp, ids), Account: "acme", CompanyName: "Acme Foods (Pty) Ltd",
			Era: sp.Era, Milestones: len(sp.Milestones), UpdatedAt: sp.UpdatedAt}
	}
	return out
}

// WriteFlat writes plans as a workbook of one flat table, the sheet
// Targets, with the flat sheet writer the export uses (table.WriteSheet).
func WriteFlat(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	rows, err := table.PlanRows(plans, cat)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName(f.GetSheetName(0), templates.FlatSheet); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := table.WriteSheet(f, templates.FlatSheet, rows, cat); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

// WriteExport writes the grid export as eepipe export does: the
// workbook composed, then written part by part.
func WriteExport(path string, plans []export.Plan, opts export.Options) error {
	wb, err := export.NewWorkbook(plans, opts)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer wb.Close()
	return xlsx.WriteWorkbook(path, wb)
}

// WriteGrid writes plans as the grid workbook the binary writes
// (eepipe export --layout grid): the Overview, one grid sheet per plan
// (the second sheet on, in the plans' order) with its charts, and the
// hidden Chart data.
func WriteGrid(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	ps := make([]export.Plan, len(plans))
	for i, p := range plans {
		ps[i] = export.Plan{Plan: p}
	}
	return WriteExport(path, ps, export.Options{Catalog: cat})
}
