package table

import (
	"io"
	"strconv"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// LongHeader is the header of the long (tidy) CSV: one row per counter.
var LongHeader = []string{
	pipeline.ColPlanID, pipeline.ColPlanName,
	pipeline.ColCompanyVAT, pipeline.ColCompanyRegistration, pipeline.ColCompanyIDNumber,
	pipeline.ColYearNumber, pipeline.ColFinancialYear, pipeline.ColTargetType,
	"race", "gender", "level", "counter", "value", pipeline.ColAccount,
}

// WriteLongCSV writes plans as the long table (docs/formats.md, the long table) to path,
// atomically: one row per counter a target sets, with the plan id and name,
// the company identifiers, the year number and financial year, the target
// type, the counter's race, gender and level, its name and its value. Rows
// follow the plans as given, targets by year and type, counters in catalog
// order. For BI tools and pivot tables.
func WriteLongCSV(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	return writePlansCSV(path, plans, cat, func(w io.Writer, cat *pipeline.Catalog) planCSVWriter {
		return NewLongCSVWriter(w, cat)
	})
}

// LongCSVWriter writes the long table plan by plan (see WriteLongCSV), so
// that an export streams its plans to the file as the service returns
// them.
type LongCSVWriter struct {
	cw    *CSVWriter
	cat   *pipeline.Catalog
	parts [][3]string // race, gender, level of each counter of cat
	began bool
}

// NewLongCSVWriter returns a writer of the long table with the counters of
// cat (nil: the default catalog).
func NewLongCSVWriter(w io.Writer, cat *pipeline.Catalog) *LongCSVWriter {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	lw := &LongCSVWriter{cw: NewCSVWriter(w), cat: cat}
	for _, name := range cat.Names() {
		race, gender, level, _ := pipeline.ParseCounterName(name)
		lw.parts = append(lw.parts, [3]string{race, gender, level})
	}
	return lw
}

func (lw *LongCSVWriter) begin() error {
	if lw.began {
		return nil
	}
	lw.began = true
	return lw.cw.Write(LongHeader)
}

// Write writes one plan's rows; a counter the catalog lacks is an error.
func (lw *LongCSVWriter) Write(p *pipeline.InputPlan) error {
	if err := templates.CheckCounters(p, lw.cat); err != nil {
		return err
	}
	if err := lw.begin(); err != nil {
		return err
	}
	rec := make([]string, 0, len(LongHeader))
	for _, t := range pipeline.SortedTargets(p) {
		y, fy := pipeline.TargetYears(p, t)
		r := Row{plan: p, target: t, year: y, fy: fy}
		fixed := []string{
			r.text(pipeline.ColPlanID), r.plan.Name,
			r.plan.Company.VAT, r.plan.Company.Registration, r.plan.Company.IDNumber,
			r.text(pipeline.ColYearNumber), r.text(pipeline.ColFinancialYear), r.target.TargetType,
		}
		for k, name := range lw.cat.Names() {
			v, ok := r.target.Counters.ByName(name)
			if !ok {
				continue
			}
			part := lw.parts[k]
			rec = append(append(rec[:0], fixed...), part[0], part[1], part[2], name, strconv.FormatInt(v, 10), r.plan.Account)
			if err := lw.cw.Write(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close writes the header when no plan was written, and flushes.
func (lw *LongCSVWriter) Close() error {
	if err := lw.begin(); err != nil {
		return err
	}
	lw.cw.Flush()
	return lw.cw.Error()
}
