package grid

import (
	"fmt"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// WritePlanFile writes one plan to path (atomically) as a workbook of one
// grid plan sheet named sheet, titled title in its first row: the plan
// sheet the readers read back, laid out by templates.AddPlanSheet to print
// on A4 (landscape, one page wide, its title row on every page). eepipe
// profile writes the workforce profile this way.
func WritePlanFile(path, sheet, title string, p *pipeline.InputPlan) error {
	ps := PlanSheetOf(p)
	ps.Title = title
	return writeSheetFile(path, sheet, p, ps)
}

// writeSheetFile writes plan p, laid out as ps, to path (atomically) as a
// workbook of the one plan sheet named sheet.
func writeSheetFile(path, sheet string, p *pipeline.InputPlan, ps templates.PlanSheet) error {
	cat := pipeline.DefaultCatalog()
	if err := templates.CheckCounters(p, cat); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := templates.NewStyles(f)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	first := f.GetSheetName(0)
	if err := templates.AddPlanSheet(f, sheet, ps, cat, st); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.DeleteSheet(first); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	templates.ActivateFirstVisible(f)
	return xlsx.WriteWorkbook(path, f)
}
