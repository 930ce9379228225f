package propose

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the plan for people: per year and level the headcount,
// the designated shares and the people who have changed group since the
// profile; per year the people with disabilities; then the targets that
// cannot be met, with the reason.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "YEAR\tLEVEL\tHEADCOUNT\tDESIGNATED MALE\tDESIGNATED FEMALE\tMOVED SINCE THE PROFILE")
	for _, y := range r.Years {
		label := y.FinancialYear
		if y.Final {
			label += " final"
		}
		for _, l := range y.Levels {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d (%.1f%%)\t%d (%.1f%%)\t%d\n", label, l.Level, l.Headcount,
				l.DesignatedMale, l.DesignatedMalePct, l.DesignatedFemale, l.DesignatedFemalePct, l.Moves)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, y := range r.Years {
		pct := 0.0
		if y.Employees > 0 {
			pct = float64(y.Disabled) * 100 / float64(y.Employees)
		}
		fmt.Fprintf(w, "%s: %d of %d employees with disabilities (%.1f%%)\n", y.FinancialYear, y.Disabled, y.Employees, pct)
	}
	fmt.Fprintf(w, "People who change group are chosen among the races %s.\n", r.Rule)
	for _, s := range r.Shortfalls {
		fmt.Fprintf(w, "CANNOT BE MET: %s, %s: %s\n", s.Level, s.Target, s.Reason)
	}
	return nil
}
