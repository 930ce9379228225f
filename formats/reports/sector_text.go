package reports

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// WriteSectorText writes the report as readable tables, one per plan, a
// summary line and the provenance of the figures.
func WriteSectorText(w io.Writer, r *sector.SectorCheckReport) error {
	ew := &sectorWriter{w: w}
	for i, p := range r.Plans {
		if i > 0 {
			ew.printf("\n")
		}
		writeSectorPlanText(ew, p)
	}
	if len(r.Plans) > 0 {
		ew.printf("\n")
	}
	s := r.Summary()
	ew.printf("%s: %d meet%s every final-year target, %d fall%s short, %d meet%s only the targets that could be assessed, %d could not be assessed at all.\n",
		pipeline.Plural(s.Plans, "plan", "plans"), s.Met, sectorVerbS(s.Met), s.Short, sectorVerbS(s.Short), s.PartlyMet, sectorVerbS(s.PartlyMet), s.NotAssessable)
	ew.printf("Targets: %s (sectoral numerical targets, 1 Sep 2025 - 31 Aug 2030); people with disabilities: 3%% of the whole workforce.\n", r.Notice)
	ew.printf("Figures from: %s. %s\n", r.TargetsSource, r.Caveat)
	return ew.err
}

type sectorWriter struct {
	w   io.Writer
	err error
}

func (e *sectorWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *sectorWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// sectorVerbS is the verb ending for n plans: "1 meets", "2 meet".
func sectorVerbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

func sectorPlanHeading(p sector.SectorPlanCheck) string {
	name := p.Name
	if name == "" {
		name = "(no name)"
	}
	title := fmt.Sprintf("Plan %q", name)
	if p.PlanID != 0 {
		title = fmt.Sprintf("Plan %d %q", p.PlanID, name)
	}
	parts := []string{title}
	if p.Sector != "" {
		parts = append(parts, p.Sector)
	} else {
		parts = append(parts, "no sector")
	}
	if !p.StartDate.IsZero() && !p.EndDate.IsZero() {
		parts = append(parts, fmt.Sprintf("%s to %s", p.StartDate, p.EndDate))
	}
	if !p.Company.IsZero() {
		parts = append(parts, "company "+p.Company.String())
	}
	switch {
	case p.Account != "":
		parts = append(parts, "account "+p.Account)
	case p.Source != "":
		parts = append(parts, filepath.Base(p.Source))
	}
	return strings.Join(parts, " | ")
}

func writeSectorPlanText(ew *sectorWriter, p sector.SectorPlanCheck) {
	ew.printf("%s\n", sectorPlanHeading(p))
	ew.printf("  %s\n", sectorPlanOutcome(p))
	for _, n := range p.Notes {
		ew.printf("  Note: %s.\n", strings.TrimSuffix(n, "."))
	}
	if len(p.Years) == 0 {
		return
	}
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  YEAR\tLEVEL\tHEADCOUNT\tDESIGNATED MALE (TARGET)\tDESIGNATED FEMALE (TARGET)\tRESULT\n")
	for _, y := range p.Years {
		for _, l := range y.Levels {
			head := "-"
			if l.Headcount != nil {
				head = strconv.FormatInt(*l.Headcount, 10)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", sectorYearText(y), sectorLevelLabel(l.Level), head,
				sectorShareText(l.Male, l.TargetMale, l.HasTarget), sectorShareText(l.Female, l.TargetFemale, l.HasTarget), sectorLevelResult(l))
		}
	}
	tw.Flush()
	tw = tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  YEAR\tEMPLOYEES\tWITH DISABILITIES (TARGET)\tRESULT\n")
	for _, y := range p.Years {
		d := y.Disability
		emp, share, res := "-", "- ("+sectorTargetText(d.TargetPct)+")", "not assessable: "+d.Reason
		if d.Share != nil {
			emp = strconv.FormatInt(d.Share.Of, 10)
			share = fmt.Sprintf("%d = %s (%s)", d.Share.Count, sectorPct(d.Share.ActualPct), sectorTargetText(d.TargetPct))
			res = "met"
			if !d.Share.Met {
				res = "SHORT: " + sectorGapText(d.Share)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", sectorYearText(y), emp, share, res)
	}
	tw.Flush()
}

// sectorPlanOutcome words a plan's overall result: "Final year 2029/30:
// MEETS every target (13 figures measured)." and the like.
func sectorPlanOutcome(p sector.SectorPlanCheck) string {
	fin := p.FinalYear()
	switch {
	case p.Reason != "":
		return fmt.Sprintf("NOTHING COULD BE ASSESSED: %s.", p.Reason)
	case p.Status == sector.SectorMet:
		return fmt.Sprintf("Final year %s: MEETS every target (%s measured).", fin.Label(), pipeline.Plural(p.Assessed, "figure", "figures"))
	case p.Status == sector.SectorShort:
		return fmt.Sprintf("Final year %s: FALLS SHORT of the targets below.", fin.Label())
	case p.Status == sector.SectorPartlyMet:
		return fmt.Sprintf("Final year %s: NOT FULLY ASSESSED: %d of %s could not be assessed (see the reasons below); the %s.",
			fin.Label(), p.NotAssessed, pipeline.Plural(p.Assessed+p.NotAssessed, "figure", "figures"),
			pipeline.PluralNoun(p.Assessed, "one that could is met", fmt.Sprintf("%d that could are met", p.Assessed)))
	default:
		return fmt.Sprintf("Final year %s: NOTHING COULD BE ASSESSED (see the reasons below).", fin.Label())
	}
}

func sectorYearText(y sector.SectorYearCheck) string {
	if y.Final {
		return y.Label() + " final"
	}
	return y.Label()
}

// sectorTargetText formats a target with one decimal, or two when it has two.
func sectorTargetText(p sector.Pct) string {
	if p%10 != 0 {
		return fmt.Sprintf("%d.%02d%%", p/100, p%100)
	}
	return fmt.Sprintf("%d.%d%%", p/100, (p%100)/10)
}

func sectorPct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

func sectorShareText(s *sector.ShareResult, target sector.Pct, has bool) string {
	t := "no target"
	if has {
		t = sectorTargetText(target)
	}
	if s == nil {
		return "- (" + t + ")"
	}
	return fmt.Sprintf("%s (%s)", sectorPct(s.ActualPct), t)
}

// sectorGapText says how far a share is short: "-2.4 pts, 1 person".
func sectorGapText(s *sector.ShareResult) string {
	pts := "-" + strconv.FormatFloat(s.ShortPoints, 'f', 1, 64)
	if s.ShortPoints < 0.05 {
		pts = "less than 0.1"
	}
	return fmt.Sprintf("%s pts, %s", pts, pipeline.Plural(int(s.ShortPeople), "person", "people"))
}

func sectorLevelResult(l sector.SectorLevelCheck) string {
	var out string
	switch l.Status {
	case sector.SectorMet:
		out = "met"
	case sector.SectorShort:
		var parts []string
		if !l.Male.Met {
			parts = append(parts, "male "+sectorGapText(l.Male))
		}
		if !l.Female.Met {
			parts = append(parts, "female "+sectorGapText(l.Female))
		}
		out = "SHORT: " + strings.Join(parts, "; ")
	default:
		out = "not assessable: " + l.Reason
	}
	if l.Note != "" {
		out += " (" + l.Note + ")"
	}
	return out
}
