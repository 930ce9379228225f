package formats

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/eepipe/eepipe/pipeline"
)

// LongHeader is the header of the long (tidy) CSV: one row per counter.
var LongHeader = []string{
	pipeline.ColPlanID, pipeline.ColPlanName,
	pipeline.ColCompanyVAT, pipeline.ColCompanyRegistration, pipeline.ColCompanyIDNumber,
	pipeline.ColYearNumber, pipeline.ColFinancialYear, pipeline.ColTargetType,
	"race", "gender", "level", "counter", "value", pipeline.ColAccount,
}

// WriteLongCSV writes plans as the long table (format section 3) to path,
// atomically: one row per counter a target sets, with the plan id and name,
// the company identifiers, the year number and financial year, the target
// type, the counter's race, gender and level, its name and its value. Rows
// follow the plans as given, targets by year and type, counters in catalog
// order. For BI tools and pivot tables.
func WriteLongCSV(path string, plans []*pipeline.InputPlan, cat *pipeline.Catalog) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	rows, err := flatRows(plans, cat)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(LongHeader); err != nil {
			return err
		}
		for _, r := range rows {
			fixed := []string{
				r.text(pipeline.ColPlanID), r.plan.Name,
				r.plan.Company.VAT, r.plan.Company.Registration, r.plan.Company.IDNumber,
				r.text(pipeline.ColYearNumber), r.text(pipeline.ColFinancialYear), r.target.TargetType,
			}
			for _, name := range cat.Names() {
				v, ok := r.target.Counters[name]
				if !ok {
					continue
				}
				race, gender, level, _ := pipeline.ParseCounterName(name)
				rec := append(fixed[:len(fixed):len(fixed)], race, gender, level, name, strconv.FormatInt(v, 10), r.plan.Account)
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
}
