package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/propose"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
)

// proposeOptions are the options of `eepipe propose`.
type proposeOptions struct {
	Profile     string // --profile: the workforce profile (eepipe profile -o, or any plan file of one year)
	Sector      string // --sector
	Start, End  string // --start, --end
	Name        string // --name
	Company     pipeline.CompanyIDs
	Output      string   // -o
	Layout      string   // --layout grid|flat
	LayoutSet   bool     // --layout was given
	JSON        bool     // --json
	Growth      float64  // --growth: percent a year
	RaceWeights []string // --race-weights race=weight,...
	Targets     string   // --targets FILE
	Force       bool
}

// NewCmdPropose returns `eepipe propose`. runF replaces the command's run function in tests.
func NewCmdPropose(f *Factory, runF func(*proposeOptions) error) *cobra.Command {
	opts := &proposeOptions{}
	cmd := &cobra.Command{
		Use:   "propose --profile PROFILE --sector SECTOR --start DATE --end DATE --name NAME --company-vat VAT|--company-registration R|--company-id ID -o PLAN.xlsx|.csv",
		Short: "Write a draft plan from a workforce profile that meets the sector's targets, moving the fewest people",
		Long: `Write a draft plan from a workforce profile (eepipe profile -o): one milestone
per financial year from --start to --end, each level keeping the profile's
headcount (or growing by --growth percent a year).

The final year meets every target of the sector (the designated male and
designated female shares at top, senior, middle and junior management, by
eepipe check's own arithmetic) and the 3% disability target, moving the
fewest people: at each level exactly max(0, need_male - designated_male) +
max(0, need_female - designated_female) people change group, need being the
smallest count that meets the target at that headcount. They are the level's
non-designated people (white men, foreign nationals), in proportion to their
numbers, then the other designated group's surplus; the people they become
are split among the designated races in proportion to the designated people
of their gender already at the level (--race-weights overrides). People with
disabilities are added, where there is room, until they are 3% of the
employees of the six levels. The semi-skilled, unskilled and temporary rows
keep their all-employees counters. Earlier years step evenly: every counter
lies between its profile and its final value, monotonic over the years.

Layouts: grid (default; .xlsx) in the shape of form EEA13's section 4: the
workforce profile (4.1, a sheet of its own), the numerical goals (4.2, the
final year) and the numerical targets (4.3, each earlier year), all employees
and people with disabilities, printing on A4; flat (.xlsx or .csv): the flat
table. The plan validates with 0 errors, eepipe check exits 0 on it, and
eepipe apply creates it.

Exit status: 0 the plan meets every target; 1 a target cannot be met at its
headcount (the nearest plan is written; the level, the target and the reason
are said); 2 bad input or usage.`,
		Example: `  eepipe propose --profile profile.xlsx --sector "Wholesale and Retail Trade" \
      --start 2026-09-01 --end 2030-08-31 --name "Acme EE Plan 2026-2030" --company-vat 4012345678 -o plan.xlsx
  eepipe propose --profile profile.csv --sector "Transport and Storage" --start 2026-09-01 --end 2028-08-31 \
      --name "Acme" --company-registration 2009/012345/07 -o plan.csv --growth 3 --race-weights african=8,coloured=1,indian=1,white=1 --json`,
		Args: noArgsWriteTo,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.LayoutSet = cmd.Flags().Changed("layout")
			if runF != nil {
				return runF(opts)
			}
			if opts.Profile == "" || opts.Output == "" {
				return usageErrorf(cmd, "propose needs the profile (--profile PROFILE) and the plan to write (-o PLAN.xlsx)")
			}
			return runPropose(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Profile, "profile", "", "the workforce profile `FILE` (eepipe profile -o, or its --json output as .json)")
	fl.StringVar(&opts.Sector, "sector", "", "the plan's `SECTOR`, as the service spells it (default: the profile's)")
	fl.StringVar(&opts.Start, "start", "", "the plan's start `DATE` (YYYY-MM-DD)")
	fl.StringVar(&opts.End, "end", "", "the plan's end `DATE` (YYYY-MM-DD, at the latest 2030-08-31)")
	fl.StringVar(&opts.Name, "name", "", "the plan's `NAME`")
	fl.StringVar(&opts.Company.VAT, "company-vat", "", "the client company's `VAT` number")
	fl.StringVar(&opts.Company.Registration, "company-registration", "", "the client company's registration `NUMBER`")
	fl.StringVar(&opts.Company.IDNumber, "company-id", "", "the sole proprietor's `ID` number")
	onceStringVar(fl, &opts.Output, "output", "o", "the plan to write (`FILE`.xlsx or .csv)")
	fl.StringVar(&opts.Layout, "layout", templates.LayoutGrid, "layout: grid (EEA13 section 4, .xlsx) or flat (.xlsx or .csv)")
	fl.BoolVar(&opts.JSON, "json", false, "print per year and level the headcount, designated shares and moves as JSON")
	fl.Float64Var(&opts.Growth, "growth", 0, "each level's growth a year, in `PERCENT`")
	fl.StringSliceVar(&opts.RaceWeights, "race-weights", nil, "split the people who join a designated group among races by these `RACE=WEIGHT` pairs (african, coloured, indian, white for women)")
	fl.StringVar(&opts.Targets, "targets", "", "sector targets `FILE` (CSV) replacing the embedded 2025 figures")
	fl.BoolVar(&opts.Force, "force", false, "overwrite -o if it exists")
	return cmd
}

func runPropose(f *Factory, opts *proposeOptions) error {
	base, popts, err := checkProposeOptions(opts)
	if err != nil {
		return err
	}
	counts, profileSector, err := readProfile(f, opts.Profile)
	if err != nil {
		return err
	}
	if opts.Sector == "" {
		opts.Sector = profileSector
	}
	if !popts.Targets.HasSector(opts.Sector) {
		return exitf(ExitInvalid, "--sector %q: not a sector the targets give figures for (give --sector as the service spells it)", opts.Sector)
	}
	popts.Sector, base.Sector = opts.Sector, opts.Sector
	res, err := propose.Plan(counts, popts)
	if err != nil {
		return exitf(ExitInvalid, "%v", err)
	}
	plan := res.InputPlan(base)
	if check := sector.CheckPlanSector(plan, nil, popts.Targets); len(res.Shortfalls) == 0 && check.Status != sector.SectorMet {
		// The sector check is the judge of the arithmetic: a plan it does
		// not pass is never written as one that meets the targets.
		return exitf(ExitFatal, "internal error: the plan worked out does not meet the targets by eepipe check (%s); nothing was written", check.Status)
	}
	if err := writeProposal(opts, plan, counts); err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return exitf(ExitFatal, "write the plan: %v", err)
		}
	} else if err := res.WriteText(f.IO.Out); err != nil {
		return exitf(ExitFatal, "write the plan: %v", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "Plan written to %s (%s layout, %s)\n", opts.Output, opts.Layout, pipeline.Plural(len(res.Years), "financial year"))
	if len(res.Shortfalls) > 0 {
		var why []string
		for _, s := range res.Shortfalls {
			why = append(why, fmt.Sprintf("%s, %s: %s", s.Level, s.Target, s.Reason))
		}
		return exitf(ExitDiff, "the plan cannot meet %s; the nearest plan was written:\n  %s",
			pipeline.Plural(len(res.Shortfalls), "target"), strings.Join(why, "\n  "))
	}
	return nil
}

// checkProposeOptions checks the flags before the profile is read, and
// returns the plan's details and the options of the arithmetic.
func checkProposeOptions(opts *proposeOptions) (pipeline.InputPlan, propose.Options, error) {
	var base pipeline.InputPlan
	var popts propose.Options
	fail := func(format string, args ...any) (pipeline.InputPlan, propose.Options, error) {
		return base, popts, exitf(ExitInvalid, format, args...)
	}
	start, err := pipeline.ParseDate(strings.TrimSpace(opts.Start))
	if err != nil {
		return fail("--start: %v", err)
	}
	end, err := pipeline.ParseDate(strings.TrimSpace(opts.End))
	if err != nil {
		return fail("--end: %v", err)
	}
	switch {
	case start.Before(pipeline.EarliestStart):
		return fail("--start %s is before %s, the earliest start the service accepts", start, pipeline.EarliestStart)
	case end.Before(start):
		return fail("--end %s is before --start %s", end, start)
	case pipeline.LatestEnd.Before(end):
		return fail("--end %s is after %s, the latest plan end the service keeps", end, pipeline.LatestEnd)
	case strings.TrimSpace(opts.Name) == "":
		return fail("--name: give the plan's name")
	case opts.Company.IsZero():
		return fail("give the client company: --company-vat, --company-registration or --company-id")
	case opts.Growth < 0 || opts.Growth > 100:
		return fail("--growth %v: give a percentage a year from 0 to 100", opts.Growth)
	}
	layout := strings.ToLower(strings.TrimSpace(opts.Layout))
	ext := strings.ToLower(filepath.Ext(opts.Output))
	switch {
	case layout != templates.LayoutGrid && layout != templates.LayoutFlat:
		return fail("--layout %q: use grid or flat", opts.Layout)
	case ext != ".xlsx" && ext != ".csv":
		return fail("-o %s: the plan is written as .xlsx or .csv", opts.Output)
	}
	if ext == ".csv" {
		if opts.LayoutSet && layout == templates.LayoutGrid {
			return fail("-o %s: a CSV file holds the flat layout; give an .xlsx name for the grid layout", opts.Output)
		}
		layout = templates.LayoutFlat // a CSV file holds the flat table
	}
	opts.Layout = layout
	if err := refuseMissingFolder("-o", opts.Output, ""); err != nil {
		return base, popts, err
	}
	if !opts.Force {
		if _, err := os.Stat(opts.Output); err == nil {
			return fail("%s exists; give --force to replace it, or another -o name", opts.Output)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return base, popts, exitf(ExitFatal, "-o %s: %v", opts.Output, err)
		}
	}
	weights, err := propose.ParseWeights(opts.RaceWeights)
	if err != nil {
		return fail("--race-weights %v", err)
	}
	targets := sector.DefaultSectorTargets()
	if opts.Targets != "" {
		if targets, err = sector.LoadSectorTargets(opts.Targets); err != nil {
			return fail("--targets: %v", err)
		}
	}
	base = pipeline.InputPlan{Name: strings.TrimSpace(opts.Name), Company: opts.Company, StartDate: start, EndDate: end}
	popts = propose.Options{Targets: targets, Years: pipeline.PlanYears(start, end), Growth: opts.Growth, Weights: weights}
	return base, popts, nil
}

// readProfile reads the profile: one plan of one financial year with both
// targets. A blank counter is read as 0 and said on stderr.
func readProfile(f *Factory, path string) (propose.Counts, string, error) {
	var c propose.Counts
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return readProfileJSON(f, path)
	}
	batch, err := f.readFiles([]string{path}, nil)
	if err != nil {
		return c, "", err
	}
	if len(batch.Problems) > 0 {
		if err := writeProblems(f, batch); err != nil {
			return c, "", exitf(ExitFatal, "%v", err)
		}
	}
	if batch.Problems.HasErrors() {
		return c, "", exitf(ExitInvalid, "--profile %s has %s; fix it (eepipe validate shows them) and propose again", path, pipeline.Plural(batch.Count(pipeline.Error), "error"))
	}
	if len(batch.Plans) != 1 {
		return c, "", exitf(ExitInvalid, "--profile %s: a profile describes one workforce, and this file describes %s", path, pipeline.Plural(len(batch.Plans), "plan"))
	}
	p := batch.Plans[0]
	c, blank, err := propose.ProfileOf(p)
	if err != nil {
		return c, "", exitf(ExitInvalid, "--profile %s: %v", path, err)
	}
	if len(blank) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "--profile %s: %s blank, read as 0 (for example %s)\n", path, pipeline.Plural(len(blank), "counter is", "counters are"), blank[0])
	}
	return c, p.Sector, nil
}

// readProfileJSON reads a profile as eepipe profile --json prints it; it
// names no sector.
func readProfileJSON(f *Factory, path string) (propose.Counts, string, error) {
	file, err := os.Open(path)
	if err != nil {
		return propose.Counts{}, "", exitf(ExitInvalid, "--profile: %v", err)
	}
	defer file.Close()
	c, blank, err := propose.ProfileJSON(file)
	if err != nil {
		return c, "", exitf(ExitInvalid, "--profile %s: %v", path, err)
	}
	if len(blank) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "--profile %s: %s blank, read as 0 (for example %s)\n", path, pipeline.Plural(len(blank), "counter is", "counters are"), blank[0])
	}
	return c, "", nil
}

// writeProposal writes -o in its layout.
func writeProposal(opts *proposeOptions, plan *pipeline.InputPlan, profile propose.Counts) error {
	var err error
	switch {
	case strings.EqualFold(filepath.Ext(opts.Output), ".csv"):
		err = table.WriteFlatCSV(opts.Output, []*pipeline.InputPlan{plan}, nil)
	case opts.Layout == templates.LayoutFlat:
		err = export.WriteFlatXLSX(opts.Output, []export.Plan{{Plan: plan}}, export.Options{})
	default:
		err = grid.WriteSection4(opts.Output, plan, profile.Counters(0), profile.Counters(1))
	}
	if err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	return nil
}
