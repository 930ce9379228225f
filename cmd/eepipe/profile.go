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

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/roster"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/profile"
)

// profileOptions are the options of `eepipe profile`.
type profileOptions struct {
	Rosters []string // the roster files
	Output  string   // -o: the profile workbook (.xlsx or .csv)
	JSON    bool     // --json: the profile as JSON on stdout
	Name    string   // --name: the profile's plan name
	Sector  string   // --sector: the client's sector, for check
	AsOf    string   // --as-of: a date in the profile's financial year
	Force   bool     // --force: overwrite -o
}

// profileSheet is the profile workbook's sheet and title.
const (
	profileSheet = "Current workforce"
	profileTitle = "Current workforce, counted from the roster (not a plan to apply)"
)

// NewCmdProfile returns `eepipe profile`. runF replaces the command's run function in tests.
func NewCmdProfile(f *Factory, runF func(*profileOptions) error) *cobra.Command {
	opts := &profileOptions{}
	cmd := &cobra.Command{
		Use:   "profile ROSTER... [--map FILE] [-o OUT.xlsx|OUT.csv] [--json]",
		Short: "Count an HR roster (one row per employee) into the workforce profile",
		Long: `Read HR rosters (CSV or XLSX, one row per employee, as payroll systems export
them) and count the current workforce into the counters of both targets, as
form EEA2's workforce table counts it.

Columns are found by their headers (case and spacing folded): Employee
Number, Employee Code or Employee No (optional); Race or Population Group;
Gender or Sex; Occupational Level, or a job grade (Grade, Paterson Grade, Job
Grade: Paterson A1-F5, F+, G and A, B Lower ... F Upper, by form EEA9's
table); Disabled or Disability; Foreign National, Nationality or
Citizenship; Employment Type. A mapping file (--map) names a client's own
headers (columns), words (levels, races, genders) and gradings (grades).

A permanent employee counts at their level and in total permanent; a
temporary one (Temporary, Fixed term, Contract, Casual) only in temporary
employees; everyone in the grand total; a foreign national in the foreign
columns; employees with a disability in disabled_employees as well.

Every row is counted or listed as not counted, with its file, row and
reason: an unknown or missing race, gender, level or grade; a level and a
grade that disagree; an employee number that repeats an earlier row's (the
later rows are not counted). Blank rows are skipped.

-o writes the profile as a workbook (.xlsx: a grid sheet that prints on A4;
.csv: the flat table) that eepipe check and eepipe propose read: a plan of
one financial year (the one holding --as-of, default today) named "Current
workforce" (--name). With --sector, eepipe check PROFILE measures the current
workforce against the sector's targets.

Exit status: 0 every row counted; 1 some rows not counted (the profile is
still written, and lists them); 2 a file that is not a roster, or bad usage.`,
		Example: `  eepipe profile staff.csv --json
  eepipe profile vip-equity.csv simplepay.xlsx -o profile.xlsx --sector "Wholesale and Retail Trade"
  eepipe profile payspace-eea2.xlsx --map client.yaml -o profile.csv`,
		Args: needsInputs("roster (CSV or XLSX)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Rosters = args
			if runF != nil {
				return runF(opts)
			}
			return runProfile(f, opts)
		},
	}
	fl := cmd.Flags()
	onceStringVar(fl, &opts.Output, "output", "o", "write the profile to `FILE` (.xlsx or .csv)")
	fl.BoolVar(&opts.JSON, "json", false, "print the profile as JSON on stdout")
	fl.StringVar(&opts.Name, "name", profile.DefaultName, "the profile's plan name in -o")
	fl.StringVar(&opts.Sector, "sector", "", "the client's `SECTOR` (as the service spells it) in -o, so that check measures the profile")
	fl.StringVar(&opts.AsOf, "as-of", "", "the profile's `DATE` (YYYY-MM-DD): -o holds its financial year (default today)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite -o if it exists")
	return cmd
}

func runProfile(f *Factory, opts *profileOptions) error {
	fy, err := checkProfileOptions(f, opts)
	if err != nil {
		return err
	}
	ro, err := f.readOptions(nil)
	if err != nil {
		return err
	}
	// The global --map (or map: in the configuration) names the client's
	// headers, words and job grades.
	m := ro.Words
	counter := profile.NewCounter(roster.Words(m))
	sink := roster.Sink{Employee: counter.Add, Bad: counter.Unreadable}
	for _, path := range opts.Rosters {
		if err := roster.Read(path, m, ro.Limits, sink); err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
	}
	p := counter.Profile()
	if opts.Output != "" {
		if err := writeProfile(opts, p, fy); err != nil {
			return err
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			return exitf(ExitFatal, "write the profile: %v", err)
		}
	} else if err := p.WriteText(f.IO.Out); err != nil {
		return exitf(ExitFatal, "write the profile: %v", err)
	}
	if opts.Output != "" {
		fmt.Fprintf(f.IO.ErrOut, "Workforce profile written to %s (financial year %s)\n", opts.Output, fy)
	}
	if len(p.Unclassified) > 0 {
		return exitf(ExitDiff, "%s not counted (listed above, each with its file, row and reason)", pipeline.Plural(len(p.Unclassified), "row was", "rows were"))
	}
	return nil
}

// checkProfileOptions checks the flags before any roster is read, and
// returns the profile's financial year.
func checkProfileOptions(f *Factory, opts *profileOptions) (pipeline.FinancialYear, error) {
	day := pipeline.DateOf(f.Now())
	if opts.AsOf != "" {
		d, err := pipeline.ParseDate(strings.TrimSpace(opts.AsOf))
		if err != nil {
			return 0, exitf(ExitInvalid, "--as-of: %v", err)
		}
		day = d
	}
	fy := pipeline.FinancialYearOf(day)
	if fy.Start().Before(pipeline.EarliestStart) {
		fy = pipeline.FinancialYearOf(pipeline.EarliestStart)
	}
	if opts.Sector != "" && !pipeline.Contains(pipeline.Sectors, opts.Sector) {
		return 0, exitf(ExitInvalid, "--sector %q is not a sector as the service spells it (%s)", opts.Sector, strings.Join(pipeline.Closest(opts.Sector, pipeline.Sectors, 3), "; "))
	}
	if opts.Output == "" {
		return fy, nil
	}
	if ext := strings.ToLower(filepath.Ext(opts.Output)); ext != ".xlsx" && ext != ".csv" {
		return 0, exitf(ExitInvalid, "-o %s: the profile is written as .xlsx or .csv", opts.Output)
	}
	if err := refuseMissingFolder("-o", opts.Output, ""); err != nil {
		return 0, err
	}
	if !opts.Force {
		if _, err := os.Stat(opts.Output); err == nil {
			return 0, exitf(ExitInvalid, "%s exists; give --force to replace it, or another -o name", opts.Output)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return 0, exitf(ExitFatal, "-o %s: %v", opts.Output, err)
		}
	}
	return fy, nil
}

// writeProfile writes -o: the grid sheet (.xlsx) or the flat table (.csv).
func writeProfile(opts *profileOptions, p *profile.Profile, fy pipeline.FinancialYear) error {
	plan := p.Plan(opts.Name, opts.Sector, fy)
	var err error
	if strings.EqualFold(filepath.Ext(opts.Output), ".csv") {
		err = table.WriteFlatCSV(opts.Output, []*pipeline.InputPlan{plan}, nil)
	} else {
		err = grid.WritePlanFile(opts.Output, profileSheet, profileTitle, plan)
	}
	if err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	return nil
}
