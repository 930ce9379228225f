package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// templateOptions are the options of `eepipe template`.
type templateOptions struct {
	Output      string // -o: the workbook to write
	Layout      string // --layout: grid or flat
	Years       int    // --years: financial years of the grid template
	YearsSet    bool   // --years was given (not the default)
	Start       string // --start: optional plan start date (YYYY-MM-DD)
	Force       bool   // --force: overwrite an existing file
	CatalogPath string // the global --catalog flag
}

// NewCmdTemplate returns `eepipe template`. runF replaces the command's run function in tests.
func NewCmdTemplate(f *Factory, runF func(*templateOptions) error) *cobra.Command {
	opts := &templateOptions{}
	cmd := &cobra.Command{
		Use:   "template -o FILE.xlsx",
		Short: "Write an empty workbook for consultants to fill in",
		Long: `Write a workbook template to fill in by hand and load with eepipe apply.

The grid layout (default) has an Instructions sheet and one plan sheet:
labelled cells for the plan's details (plan id or name, company
identifiers, dates, sector, scorecard) and, for each financial year, a grid
for all employees and one for employees with disabilities, with the
occupational levels down the side and race x gender across the top. Counter
cells accept whole numbers of 0 or more, the sector is a drop-down and the
dates are date cells. A blank counter cell leaves the service's value as it
is.

The flat layout has a Targets sheet with the flat table's header, one row
per plan, financial year and target type, with the same validation. With
--years or --start it is pre-filled with one plan's rows: year_number and
target_type for each year (both target types), and with --start the start
and end dates and each row's financial year.

The counters follow the counter catalog: the default one, or the file given
with --catalog.`,
		Example: `  eepipe template -o plan.xlsx
  eepipe template -o plan.xlsx --years 3 --start 2026-09-01
  eepipe template -o targets.xlsx --layout flat
  eepipe template -o targets.xlsx --layout flat --years 3 --start 2026-09-01
  eepipe template -o custom.xlsx --catalog counters.txt`,
		Args: noArgsWriteTo,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.CatalogPath = f.CatalogPath
			opts.YearsSet = cmd.Flags().Changed("years")
			if runF != nil {
				return runF(opts)
			}
			if opts.Output == "" {
				return usageErrorf(cmd, "template needs the workbook to write: -o FILE.xlsx (for example: eepipe template -o plan.xlsx)")
			}
			return runTemplate(f, opts)
		},
	}
	fl := cmd.Flags()
	onceStringVar(fl, &opts.Output, "output", "o", "the workbook to write (`FILE`.xlsx)")
	fl.StringVar(&opts.Layout, "layout", templates.LayoutGrid, "layout: grid (for people) or flat (one row per plan, year and target type)")
	fl.IntVar(&opts.Years, "years", templates.DefaultYears, "financial years of the plan (grid: its grids; flat: its rows)")
	fl.StringVar(&opts.Start, "start", "", "pre-fill the plan's start and end dates (`YYYY-MM-DD`) and each grid's or row's financial year")
	fl.BoolVar(&opts.Force, "force", false, "overwrite the file if it exists")
	return cmd
}

func runTemplate(f *Factory, opts *templateOptions) error {
	if opts.Output == "" {
		return exitf(ExitInvalid, "template: give the file to write with -o FILE.xlsx")
	}
	if !strings.EqualFold(filepath.Ext(opts.Output), ".xlsx") {
		return exitf(ExitInvalid, "template: -o %s: the template is a workbook; give it an .xlsx name", opts.Output)
	}
	layout := strings.ToLower(strings.TrimSpace(opts.Layout))
	if layout != templates.LayoutGrid && layout != templates.LayoutFlat {
		return exitf(ExitInvalid, "template: --layout %q: use grid or flat", opts.Layout)
	}
	if opts.Years < 1 || opts.Years > templates.MaxYears {
		return exitf(ExitInvalid, "template: --years %d: give a number of financial years from 1 to %d", opts.Years, templates.MaxYears)
	}
	var start pipeline.Date
	if opts.Start != "" {
		d, err := pipeline.ParseDate(strings.TrimSpace(opts.Start))
		if err != nil {
			return exitf(ExitInvalid, "template: --start: %v", err)
		}
		if d.Before(pipeline.EarliestStart) {
			return exitf(ExitInvalid, "template: --start %s is before %s, the earliest start the service accepts", d, pipeline.EarliestStart)
		}
		start = d
		// The service clamps plan ends to 2030-08-31: grids for later
		// financial years could never be applied. The default number of
		// years stops there; an explicit --years beyond it is refused.
		fit := len(pipeline.PlanYears(start, pipeline.LatestEnd))
		switch {
		case fit == 0:
			return exitf(ExitInvalid, "template: --start %s is after %s, the latest plan end the service keeps", d, pipeline.LatestEnd)
		case !opts.YearsSet:
			opts.Years = min(opts.Years, fit)
		case opts.Years > fit:
			return exitf(ExitInvalid, "template: --years %d from --start %s would end the plan after %s, the latest end the service keeps (it clamps later ends, so the last grids could never be applied): give --years %d or fewer",
				opts.Years, d, pipeline.LatestEnd, fit)
		}
	}
	cat := pipeline.DefaultCatalog()
	if opts.CatalogPath != "" {
		c, err := pipeline.LoadCatalog(opts.CatalogPath)
		if err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
		cat = c
	}
	if err := refuseMissingFolder("-o", opts.Output, ""); err != nil {
		return err
	}
	if !opts.Force {
		if _, err := os.Stat(opts.Output); err == nil {
			return exitf(ExitInvalid, "%s exists; give --force to replace it, or another -o name", opts.Output)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return exitf(ExitFatal, "template: %v", err)
		}
	}
	tmpl := templates.Options{Layout: layout, Years: opts.Years, Catalog: cat, Start: start}
	if layout == templates.LayoutFlat && (opts.YearsSet || !start.IsZero()) {
		// --years and --start shape the flat table too: its rows for one
		// plan over those years, never silently ignored.
		tmpl.FlatYears = opts.Years
	}
	wb, err := templates.New(tmpl)
	if err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	defer wb.Close()
	if err := xlsx.WriteFileAtomic(opts.Output, func(w io.Writer) error {
		_, err := wb.WriteTo(w)
		return err
	}); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	what := fmt.Sprintf("%s layout, %s", layout, pipeline.Plural(cat.Len(), "counter"))
	if layout == templates.LayoutGrid {
		what = fmt.Sprintf("grid layout, %s, %s", pipeline.Plural(opts.Years, "financial year"), pipeline.Plural(cat.Len(), "counter"))
	}
	fmt.Fprintf(f.IO.ErrOut, "Template written to %s (%s)\n", opts.Output, what)
	return nil
}
