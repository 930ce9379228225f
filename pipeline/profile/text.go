package profile

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// WriteText writes the profile for people: the rows counted and not
// counted (each with its file, row and reason), then the headcount of each
// level, of all employees and of those with disabilities.
func (p *Profile) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s read: %d counted, %d not counted.\n", pipeline.Plural(p.Employees, "employee row"), p.Classified, len(p.Unclassified))
	if len(p.Unclassified) > 0 {
		fmt.Fprintln(w, "Not counted:")
		for _, u := range p.Unclassified {
			fmt.Fprintf(w, "  %s row %d: %s\n", u.File, u.Row, u.Reason)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tALL EMPLOYEES\tDESIGNATED MALE\tDESIGNATED FEMALE\tFOREIGN NATIONALS\tWITH DISABILITIES")
	all, dis := p.Targets[pipeline.TargetAll], p.Targets[pipeline.TargetDisabled]
	for _, level := range pipeline.Levels {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", level, Headcount(all, level),
			Designated(all, "male", level), Designated(all, "female", level),
			sum(all, []string{"foreign"}, pipeline.Genders, level), Headcount(dis, level))
	}
	return tw.Flush()
}

// Headcount returns a level's counters summed over every race and both
// genders (a blank counter counts 0).
func Headcount(c pipeline.Counters, level string) int64 {
	return sum(c, pipeline.Races, pipeline.Genders, level)
}

// Designated returns a level's designated-group count of a gender
// (pipeline.DesignatedRaces).
func Designated(c pipeline.Counters, gender, level string) int64 {
	return sum(c, sector.DesignatedRaces(gender), []string{gender}, level)
}

func sum(c pipeline.Counters, races, genders []string, level string) int64 {
	var n int64
	for _, r := range races {
		for _, g := range genders {
			v, _ := c.ByName(pipeline.CounterName(r, g, level))
			n += v
		}
	}
	return n
}
