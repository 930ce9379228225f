package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// validateOptions are the options of `eepipe validate`.
type validateOptions struct {
	Args        []string // input files and folders
	Report      string   // --report: problems file (.csv, .xlsx, .json)
	Annotate    string   // --annotate: annotated copy of the single XLSX input
	JSON        bool     // --json: the problem report on stdout instead of the text
	CatalogPath string   // the global --catalog flag
}

// NewCmdValidate returns `eepipe validate`. runF replaces the command's run function in tests.
func NewCmdValidate(f *Factory, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate FILE|FOLDER...",
		Short: "Check workbooks and CSV files completely, without touching the service",
		Long: `Read every input (XLSX workbooks and CSV files, or folders of them), in any
layout (flat table, grid workbook or long table), and report every problem at once:
file, sheet and cell (or CSV line and column), the value found and what to
do about it. Nothing is sent to the service.

The report is grouped by file and sheet and printed on stdout. Exit status 0
when there are no errors (warnings are allowed), 2 when there are.`,
		Example: `  eepipe validate plans.xlsx
  eepipe validate clients/ extra.csv --report problems.xlsx
  eepipe validate acme.xlsx --annotate acme-checked.xlsx
  eepipe validate --catalog counters.txt plans.csv --report problems.json`,
		Args: needsInputs("workbook or folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.CatalogPath = f.CatalogPath
			if runF != nil {
				return runF(opts)
			}
			return runValidate(f, opts)
		},
	}
	fl := cmd.Flags()
	onceStringVar(fl, &opts.Report, "report", "", "also write the problems to `FILE` (.csv, .xlsx or .json)")
	addVerboseFlag(cmd, f, "every problem, not only the first "+strconv.Itoa(problemsPerKind)+" of each kind in each file")
	addJSONFlag(cmd, &opts.JSON)
	onceStringVar(fl, &opts.Annotate, "annotate", "", "write a copy of the (single) XLSX input to `FILE` with each problem cell highlighted and commented")
	return cmd
}

func runValidate(f *Factory, opts *validateOptions) error {
	if err := checkValidateOptions(opts); err != nil {
		return err
	}
	var cat *pipeline.Catalog
	if opts.CatalogPath != "" {
		c, err := pipeline.LoadCatalog(opts.CatalogPath)
		if err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
		cat = c
	}
	log := f.Logger()
	// The first few problems of each kind are printed; with --report the
	// rest wait in a temporary file for the report, which lists them all.
	bound := &pipeline.ProblemBound{Keep: problemsPerKind}
	if opts.Annotate != "" || f.Verbose {
		bound.Keep = 0 // the annotated copy marks every problem cell; -v lists every one
	}
	var spill *reports.ProblemSpill
	if opts.Report != "" || opts.JSON {
		s, err := reports.NewProblemSpill()
		if err != nil {
			return exitf(ExitFatal, "a temporary file for the report: %v", err)
		}
		defer s.Close()
		spill, bound.Overflow = s, s.Add
	}
	batch, err := validateInputs(f, opts, cat, bound)
	if err != nil {
		return err
	}
	if err := writeValidateProblems(f, opts, batch, spill); err != nil {
		return err
	}
	if opts.Annotate != "" {
		if err := annotateInput(f, opts, batch); err != nil {
			return err
		}
	}
	log.Debug("validated", zap.Int("files", len(batch.Files)), zap.Int("plans", len(batch.Plans)),
		zap.Int("errors", batch.Count(pipeline.Error)), zap.Int("warnings", batch.Count(pipeline.Warning)))
	if batch.Problems.HasErrors() {
		return silentExit(ExitInvalid)
	}
	return nil
}

// checkValidateOptions checks --report and --annotate before anything is
// read.
func checkValidateOptions(opts *validateOptions) error {
	if opts.Report != "" {
		if err := checkReportName(opts.Report, ""); err != nil {
			return err
		}
	}
	if opts.Annotate != "" {
		if len(opts.Args) != 1 || !strings.EqualFold(filepath.Ext(opts.Args[0]), ".xlsx") {
			return exitf(ExitInvalid, "--annotate needs exactly one .xlsx input file")
		}
		if !strings.EqualFold(filepath.Ext(opts.Annotate), ".xlsx") {
			return exitf(ExitInvalid, "--annotate %s: the annotated copy is a workbook; give it an .xlsx name", opts.Annotate)
		}
		if validateSameFile(opts.Annotate, opts.Args[0]) {
			return exitf(ExitInvalid, "--annotate %s: write the annotated copy to a new file, not over the input", opts.Annotate)
		}
		if err := refuseMissingFolder("--annotate", opts.Annotate, ""); err != nil {
			return err
		}
	}
	return nil
}

// validateInputs reads the inputs (their problems bounded by bound) and,
// with several accounts configured, checks that every plan finds its
// account: a company, an account or a plan_id, and an account column
// that names a configured account (docs/formats.md, the flat table). The
// secrets are not read; validate never talks to the service.
func validateInputs(f *Factory, opts *validateOptions, cat *pipeline.Catalog, bound *pipeline.ProblemBound) (*pipeline.Batch, error) {
	batch, err := f.readFiles(opts.Args, cat, bound)
	if err != nil {
		return nil, err
	}
	if accounts, err := validateAccounts(f); err != nil {
		return nil, err
	} else if len(accounts) > 0 {
		batch.Problems = append(batch.Problems, assemble.CheckRouting(batch.Plans, accounts)...)
		batch.Problems.Sort()
	}
	return batch, nil
}

// writeValidateProblems prints the problems and writes --report (spill
// holds those not kept in batch).
func writeValidateProblems(f *Factory, opts *validateOptions, batch *pipeline.Batch, spill *reports.ProblemSpill) error {
	shown := batch
	if opts.Annotate != "" {
		// Every problem was kept for the annotated copy; the printout is
		// bounded all the same, the rest going to the --report file.
		pb := &pipeline.ProblemBound{Keep: problemsPerKind}
		if spill != nil {
			pb.Overflow = spill.Add
		}
		kept := pb.Admit(slices.Clone(batch.Problems))
		shown = &pipeline.Batch{Files: batch.Files, Plans: batch.Plans, Problems: kept, Omitted: pb.Omitted()}
	}
	write := reports.WriteProblemsText
	if opts.JSON {
		write = func(w io.Writer, b *pipeline.Batch) error { return reports.EncodeProblemReportJSON(w, b, spill) }
	}
	if err := write(f.IO.Out, shown); err != nil {
		return exitf(ExitFatal, "writing the report: %v", err)
	}
	if opts.Report != "" {
		if err := reports.WriteProblemReport(opts.Report, shown, spill); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "Problem report written to %s\n", opts.Report)
	}
	return nil
}

// annotateInput writes --annotate: a copy of the one input workbook with
// every problem cell marked.
func annotateInput(f *Factory, opts *validateOptions, batch *pipeline.Batch) error {
	if validateUnreadable(batch, opts.Args[0]) {
		// An input that cannot be opened (damaged, encrypted, not a
		// workbook) is invalid input, reported above: there is
		// nothing to annotate.
		fmt.Fprintf(f.IO.ErrOut, "No annotated copy written: %s cannot be opened as a workbook (see the report above)\n", opts.Args[0])
		return nil
	}
	n, err := reports.AnnotateWorkbook(opts.Args[0], opts.Annotate, batch.Problems)
	switch {
	case errors.Is(err, reports.ErrNotAnnotatable) && batch.Problems.HasErrors():
		// Oversized or damaged: reported above as invalid input.
		fmt.Fprintf(f.IO.ErrOut, "No annotated copy written: %v\n", err)
		return silentExit(ExitInvalid)
	case err != nil:
		return exitf(ExitFatal, "%v", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "Annotated copy written to %s (%s marked)\n", opts.Annotate, pipeline.Plural(n, "cell"))
	return nil
}

// problemsPerKind is how many problems of each kind (per file) the
// commands print; the others are counted ("… and 55,643 more warnings:
// disabled above all employees") and listed by validate's --report.
const problemsPerKind = 5

// validateAccounts returns the accounts the --config file names (none
// without one), with their names only. Only the file is read, no secret:
// its syntax and its accounts' own problems (fileAccountProblems) are
// reported.
func validateAccounts(f *Factory) ([]pipeline.Account, error) {
	logConfigFile(f)
	if f.ConfigPath == "" {
		return nil, nil
	}
	b, err := readSmallRegularFile(f.ConfigPath)
	if err != nil {
		return nil, configReadError(f, err)
	}
	var fc fileConfig
	problems, complete := decodeConfigProblems(b, &fc)
	if complete {
		// The accounts' own problems (names, company_id), reported with
		// the file's syntax problems as every other command reports them.
		problems = append(problems, fileAccountProblems(&fc)...)
	}
	if len(problems) > 0 {
		// Laid out as every other command's configuration problems.
		return nil, configError(f.ConfigPath, problems)
	}
	accounts := make([]pipeline.Account, len(fc.Accounts))
	for i, a := range fc.Accounts {
		accounts[i] = pipeline.Account{Name: strings.TrimSpace(a.Name)}
	}
	return accounts, nil
}

// validateUnreadable reports whether the batch holds a file-level error
// (no sheet, no row) for path: the file could not be opened at all.
func validateUnreadable(batch *pipeline.Batch, path string) bool {
	for _, p := range batch.Problems {
		if p.Severity == pipeline.Error && p.Origin.File == path && p.Origin.Sheet == "" && p.Origin.Row == 0 {
			return true
		}
	}
	return false
}

func validateSameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
