package formats

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/eepipe/eepipe/templates"
)

// The tests write and read files through the paths the binary takes; these
// helpers only put those paths' steps together.

// readChangeSet reads a whole change set file through the streaming
// reader apply uses (reports.ChangeSetFile), signature checked.
func readChangeSet(path string) (*savedset.SavedChangeSet, error) {
	var plans []savedset.SavedPlan
	s, err := (&reports.ChangeSetFile{Path: path}).Read(func(_ *savedset.SavedChangeSet, _ int, p *savedset.SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Plans = plans
	return s, nil
}

// commentText is the plain text of a comment of a workbook read back.
func commentText(c excelize.Comment) string {
	if len(c.Paragraph) == 0 {
		return c.Text
	}
	var b strings.Builder
	for _, p := range c.Paragraph {
		b.WriteString(p.Text)
	}
	return b.String()
}

// writeFlatXLSX writes plans as a workbook of one flat table, the sheet
// Targets, with the flat sheet writer the export uses (table.WriteSheet).
func writeFlatXLSX(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
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

// writeExportXLSX writes the grid export as eepipe export does: the
// workbook composed, then written part by part.
func writeExportXLSX(path string, plans []export.Plan, opts export.Options) error {
	wb, err := export.NewWorkbook(plans, opts)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer wb.Close()
	return xlsx.WriteWorkbook(path, wb)
}

// writeGridXLSX writes plans as the grid workbook the binary writes
// (eepipe export --layout grid): the Overview, one grid sheet per plan
// (the second sheet on, in the plans' order) with its charts, and the
// hidden Chart data.
func writeGridXLSX(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	ps := make([]export.Plan, len(plans))
	for i, p := range plans {
		ps[i] = export.Plan{Plan: p}
	}
	return writeExportXLSX(path, ps, export.Options{Catalog: cat})
}
