package table

import (
	"fmt"
	"io"
	"strconv"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// FlatHeader returns the header of the flat table eepipe writes:
// company_vat_number, company_registration_number, company_id_number,
// plan_id, plan_name, start_date, end_date, sector, scorecard_id,
// year_number, financial_year, target_type, then the catalog's counters in
// catalog order.
func FlatHeader(cat *pipeline.Catalog) []string {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	return templates.FlatHeader(cat)
}

// Row is one (plan, year, target type) row of the flat table.
type Row struct {
	plan   *pipeline.InputPlan
	target *pipeline.InputTarget
	year   int
	fy     pipeline.FinancialYear
}

// PlanRows lists the rows of plans in order: plans as given, targets by
// year and target type.
func PlanRows(plans []*pipeline.InputPlan, cat *pipeline.Catalog) ([]Row, error) {
	var rows []Row
	for _, p := range plans {
		if err := templates.CheckCounters(p, cat); err != nil {
			return nil, err
		}
		for _, t := range pipeline.SortedTargets(p) {
			y, fy := pipeline.TargetYears(p, t)
			rows = append(rows, Row{plan: p, target: t, year: y, fy: fy})
		}
	}
	return rows, nil
}

// text returns a plan column's value as text ("" when not given).
func (r Row) text(col string) string {
	p := r.plan
	switch col {
	case pipeline.ColAccount:
		return p.Account
	case pipeline.ColCompanyVAT:
		return p.Company.VAT
	case pipeline.ColCompanyRegistration:
		return p.Company.Registration
	case pipeline.ColCompanyIDNumber:
		return p.Company.IDNumber
	case pipeline.ColPlanID:
		if p.PlanID != 0 {
			return strconv.FormatInt(p.PlanID, 10)
		}
	case pipeline.ColPlanName:
		return p.Name
	case pipeline.ColStartDate:
		return p.StartDate.String()
	case pipeline.ColEndDate:
		return p.EndDate.String()
	case pipeline.ColSector:
		return p.Sector
	case pipeline.ColScorecardID:
		return p.ScorecardID
	case pipeline.ColYearNumber:
		if r.year != 0 {
			return strconv.Itoa(r.year)
		}
	case pipeline.ColFinancialYear:
		if r.fy != 0 {
			return r.fy.String()
		}
	case pipeline.ColTargetType:
		return r.target.TargetType
	default:
		if v, ok := r.target.Counters.ByName(col); ok {
			return strconv.FormatInt(v, 10)
		}
	}
	return ""
}

// WriteFlatCSV writes plans as a flat CSV table (one row per plan, year and
// target type; header FlatHeader) to path, atomically. A counter a target
// does not set is a blank field.
func WriteFlatCSV(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	return writePlansCSV(path, plans, cat, func(w io.Writer, cat *pipeline.Catalog) planCSVWriter {
		return NewFlatCSVWriter(w, cat)
	})
}

// planCSVWriter is a table writer that takes plans one by one: the flat
// and the long table.
type planCSVWriter interface {
	Write(p *pipeline.InputPlan) error
	Close() error
}

// writePlansCSV checks every plan's counters against cat (nil: the default
// catalog), then writes plans through the writer newWriter makes to path,
// atomically. WriteFlatCSV and WriteLongCSV differ only in the writer.
func writePlansCSV(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog, newWriter func(io.Writer, *pipeline.Catalog) planCSVWriter) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	for _, p := range plans {
		if err := templates.CheckCounters(p, cat); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		pw := newWriter(w, cat)
		for _, p := range plans {
			if err := pw.Write(p); err != nil {
				return err
			}
		}
		return pw.Close()
	})
}

// FlatCSVWriter writes the flat CSV table plan by plan, so that an export
// streams its plans to the file as the service returns them: the header
// first, then each plan's rows (targets by year and target type).
type FlatCSVWriter struct {
	cw     *CSVWriter
	cat    *pipeline.Catalog
	header []string
	rec    []string
	began  bool
}

// NewFlatCSVWriter returns a writer of the flat table with the counters of
// cat (nil: the default catalog).
func NewFlatCSVWriter(w io.Writer, cat *pipeline.Catalog) *FlatCSVWriter {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	h := FlatHeader(cat)
	return &FlatCSVWriter{cw: NewCSVWriter(w), cat: cat, header: h, rec: make([]string, len(h))}
}

func (fw *FlatCSVWriter) begin() error {
	if fw.began {
		return nil
	}
	fw.began = true
	return fw.cw.Write(fw.header)
}

// Write writes one plan's rows; a counter the catalog lacks is an error.
func (fw *FlatCSVWriter) Write(p *pipeline.InputPlan) error {
	if err := templates.CheckCounters(p, fw.cat); err != nil {
		return err
	}
	if err := fw.begin(); err != nil {
		return err
	}
	for _, t := range pipeline.SortedTargets(p) {
		y, fy := pipeline.TargetYears(p, t)
		r := Row{plan: p, target: t, year: y, fy: fy}
		for i, h := range fw.header {
			fw.rec[i] = r.text(h)
		}
		if err := fw.cw.Write(fw.rec); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the header when no plan was written, and flushes.
func (fw *FlatCSVWriter) Close() error {
	if err := fw.begin(); err != nil {
		return err
	}
	fw.cw.Flush()
	return fw.cw.Error()
}

// WriteSheet streams the flat table into sheet, an existing empty
// worksheet of f. The sheet is final afterwards: excelize functions that
// walk every worksheet (SetActiveSheet, MoveSheet, DeleteSheet) would
// re-read the whole table.
func WriteSheet(f *excelize.File, sheet string, rows []Row, cat *pipeline.Catalog) error {
	st, err := templates.NewStyles(f)
	if err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, sheet, templates.WidePrint(2)); err != nil { // plan_id, plan_name on every page
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	header := FlatHeader(cat)
	nPlan := len(pipeline.FlatColumns)
	if err := sw.SetColWidth(1, nPlan, templates.FlatColumnWidth); err != nil {
		return err
	}
	if len(header) > nPlan {
		if err := sw.SetColWidth(nPlan+1, len(header), templates.CounterWidth+2); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	row := make([]any, len(header))
	for i, h := range header {
		row[i] = excelize.Cell{StyleID: st.Header, Value: h}
	}
	if err := sw.SetRow("A1", row); err != nil {
		return err
	}
	// One cell per column, reused for every row: the row passes pointers
	// to them, so writing a counter allocates nothing.
	cells := make([]excelize.Cell, len(header))
	for n, r := range rows {
		for i, h := range header {
			row[i] = nil
			if i >= nPlan {
				if v, ok := r.target.Counters.ByName(h); ok {
					cells[i] = excelize.Cell{StyleID: st.Counter, Value: v}
					row[i] = &cells[i]
				}
				continue
			}
			if v := flatXLSXValue(r, h, st); v != nil {
				row[i] = v
			}
		}
		if err := sw.SetRow("A"+strconv.Itoa(n+2), row); err != nil {
			return err
		}
	}
	return sw.Flush()
}

func flatXLSXValue(r Row, col string, st *templates.Styles) any {
	switch col {
	case pipeline.ColPlanID:
		if r.plan.PlanID != 0 {
			return excelize.Cell{StyleID: st.Integer, Value: r.plan.PlanID}
		}
		return nil
	case pipeline.ColYearNumber:
		if r.year != 0 {
			return excelize.Cell{StyleID: st.Integer, Value: r.year}
		}
		return nil
	case pipeline.ColStartDate, pipeline.ColEndDate:
		d := r.plan.StartDate
		if col == pipeline.ColEndDate {
			d = r.plan.EndDate
		}
		if d.IsZero() {
			return nil
		}
		return excelize.Cell{StyleID: st.Date, Value: d.Time()}
	}
	if v, ok := r.target.Counters.ByName(col); ok {
		return excelize.Cell{StyleID: st.Counter, Value: v}
	}
	s := r.text(col)
	if s == "" {
		return nil
	}
	return excelize.Cell{StyleID: st.Identifier, Value: s}
}
