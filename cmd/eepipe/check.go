package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// checkOptions are the options of `eepipe check`.
type checkOptions struct {
	Args        []string // input files and folders
	Server      bool     // read plans from the service (alone), or fill the files' blanks from it
	PlanIDs     []int64  // with Server and no files: only these plans
	Targets     string   // a targets file replacing the embedded figures
	Reports     []string // --report, repeatable: .json, .csv or .xlsx reports
	Concurrency int      // plan reads in flight
	JSON        bool     // --json: the report on stdout instead of the text
	Conn        connFlags

	HTTPClient *http.Client // for tests; nil means the default
}

// defaultCheckConcurrency bounds the plan reads of `check --server`.
const defaultCheckConcurrency = 4

// NewCmdCheck returns `eepipe check`. runF replaces the command's run function in tests.
func NewCmdCheck(f *Factory, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [FILE|FOLDER...] [--server [--plan ID]...]",
		Short: "Measure each plan against the 2025 sectoral numerical targets",
		Long: `Measure every plan against the sectoral numerical targets that the Minister
determined for 1 September 2025 - 31 August 2030 (GN 6124, Government Gazette
52514, 15 April 2025), as the plan's sector sets them.

For each plan, each financial year and each of the four levels with a sector
target (top, senior, middle and junior management), check reads the
all_employees target: the level's headcount (every race, both genders,
foreign nationals included), the designated-group male share (African,
Coloured and Indian men) and the designated-group female share (African,
Coloured, Indian and white women), against the sector's two figures: met, or
short by how many percentage points and how many people. For the whole
workforce it checks that people with disabilities are at least 3% of the
employees over the six occupational levels. The final year is the one that
must meet the targets; earlier years show the trajectory.

A plan with no sector, a level with no employees, a catalog without a level's
counters and counters a file leaves blank are "not assessable", with the
reason. With --server, blanks in the files are filled from the plans on the
service (matched by plan_id, else by name and start date; on the account
the file names, when it names one).

The figures are embedded (a copy of the public transcription of the gazette);
they should be checked against the gazette, and --targets FILE replaces them
(CSV: sector,level,designated_male_pct,designated_female_pct).

Exit status: 0 every plan's final year was measured in full and meets every
target; 1 the targets are not shown to be met: some figure falls short, or
some figures (or all: "nothing could be assessed") could not be assessed;
2 invalid input or configuration; 3 fatal (service unreachable, key refused).`,
		Example: `  eepipe check plans.xlsx
  eepipe check clients/ --report sector-check.xlsx --report sector-check.csv
  eepipe check --server
  eepipe --config eepipe.yaml check --server --plan 12 --plan 14 --report check.json
  eepipe check plans.csv --server --targets corrected-targets.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if len(args) == 0 && !opts.Server && len(opts.PlanIDs) == 0 {
				return usageErrorf(cmd, "check needs the workbooks to check (eepipe check FILE...), or --server to check the plans on the service")
			}
			if runF != nil {
				return runF(opts)
			}
			return runCheck(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Server, "server", false, "check the plans on the service (every configured account); with files, fill their blank counters from the service")
	fl.Int64SliceVar(&opts.PlanIDs, "plan", nil, "with --server and no files: check only the plan with this `ID` (repeatable)")
	fl.StringVar(&opts.Targets, "targets", "", "sector targets `FILE` (CSV) replacing the embedded 2025 figures")
	fl.StringArrayVar(&opts.Reports, "report", nil, "also write the results to `FILE` (.xlsx, .csv or .json); repeat for several")
	fl.IntVar(&opts.Concurrency, "concurrency", defaultCheckConcurrency, "with --server: plan reads in flight")
	addJSONFlag(cmd, &opts.JSON)
	// check reads plans only: it needs the service URL but never the company lookup.
	fl.StringVar(&opts.Conn.BaseURL, "base-url", "", "service base URL (overrides "+envBaseURL+" and base_url)")
	return cmd
}

// validateCheckOptions checks the flags before anything is read.
func validateCheckOptions(opts *checkOptions) error {
	switch {
	case len(opts.PlanIDs) > 0 && !opts.Server:
		return exitf(ExitInvalid, "--plan selects plans on the service: use it with --server")
	case len(opts.Args) == 0 && !opts.Server:
		return exitf(ExitInvalid, "name the workbooks to check (eepipe check FILE...), or check the plans on the service with --server")
	case len(opts.PlanIDs) > 0 && len(opts.Args) > 0:
		return exitf(ExitInvalid, "--plan selects plans on the service; with files, the files name the plans to check (leave out --plan or the files)")
	case opts.Concurrency < 1:
		return exitf(ExitInvalid, "--concurrency must be at least 1 (got %d)", opts.Concurrency)
	}
	for _, id := range opts.PlanIDs {
		if id <= 0 {
			return exitf(ExitInvalid, "--plan %d: a plan id is a positive whole number", id)
		}
	}
	seen := map[string]bool{}
	for _, r := range opts.Reports {
		if err := checkReportName(r, ""); err != nil {
			return err
		}
		abs, _ := filepath.Abs(r)
		if seen[abs] {
			return exitf(ExitInvalid, "--report %s is given twice", r)
		}
		seen[abs] = true
	}
	return nil
}

func runCheck(ctx context.Context, f *Factory, opts *checkOptions) error {
	if err := validateCheckOptions(opts); err != nil {
		return err
	}
	log := f.Logger()
	targets, cat, err := checkTables(f, opts)
	if err != nil {
		return err
	}
	var batch *pipeline.Batch
	if len(opts.Args) > 0 {
		if batch, err = readCheckInputs(f, opts.Args, cat); err != nil {
			return err
		}
	}
	var accounts []pipeline.Account
	if opts.Server {
		if accounts, err = checkAccounts(f, opts, log); err != nil {
			return err
		}
	}
	var (
		checks           []sector.SectorPlanCheck
		missing, refused int
	)
	if batch != nil {
		checks, err = checkFiles(ctx, f, opts, batch, accounts, cat, targets)
	} else {
		checks, missing, refused, err = checkServer(ctx, f, opts, log, accounts, targets)
	}
	if err != nil {
		return err
	}
	report := sector.NewSectorCheckReport(targets, checks)
	if err := writeCheckResults(f, opts, log, report); err != nil {
		return err
	}
	switch {
	case missing > 0:
		return exitf(ExitInvalid, "%s not on the service", pipeline.Plural(missing, "plan asked for with --plan is", "plans asked for with --plan are"))
	case refused > 0:
		if err := checkExit(report); err != nil {
			return err
		}
		return exitf(ExitDiff, "the plans of %s were not checked (key refused), so the targets are not shown to be met", pipeline.Plural(refused, "account"))
	}
	return checkExit(report)
}

// checkTables loads the sector targets (--targets, else the built-in
// ones) and the counter catalog (--catalog, else nil).
func checkTables(f *Factory, opts *checkOptions) (*sector.SectorTargets, *pipeline.Catalog, error) {
	targets := sector.DefaultSectorTargets()
	if opts.Targets != "" {
		t, err := sector.LoadSectorTargets(opts.Targets)
		if err != nil {
			return nil, nil, exitf(ExitInvalid, "--targets: %v", err)
		}
		targets = t
	}
	var cat *pipeline.Catalog
	if f.CatalogPath != "" {
		c, err := pipeline.LoadCatalog(f.CatalogPath)
		if err != nil {
			return nil, nil, exitf(ExitInvalid, "--catalog: %v", err)
		}
		cat = c
	}
	return targets, cat, nil
}

// checkFiles checks the plans of the files; with --server their blanks
// are filled from the plans on the service first.
func checkFiles(ctx context.Context, f *Factory, opts *checkOptions, batch *pipeline.Batch, accounts []pipeline.Account,
	cat *pipeline.Catalog, targets *sector.SectorTargets) ([]sector.SectorPlanCheck, error) {
	var checks []sector.SectorPlanCheck
	plans := batch.Plans
	notes := make([][]string, len(plans))
	if opts.Server {
		runner := run.NewRunner(accounts, nil, run.RunOptions{Concurrency: opts.Concurrency})
		filled, n, err := runner.FillFromStored(ctx, plans)
		if err != nil {
			return nil, serviceError(ctx, err)
		}
		plans, notes = filled, n
	}
	for i, p := range plans {
		if !opts.Server && p.Sector == "" && p.PlanID != 0 {
			notes[i] = append(notes[i], "the file leaves the sector blank (which keeps the service's value); check with --server to use the plan's sector on the service")
		}
		c := sector.CheckPlanSector(p, cat, targets)
		c.Notes = append(notes[i], c.Notes...)
		checks = append(checks, c)
	}
	if !opts.Server && sector.AnyBlankCounters(checks) {
		fmt.Fprintln(f.IO.ErrOut, "Some figures are not assessable because the files leave counters blank; --server fills blanks from the plans on the service.")
	}
	return checks, nil
}

// checkServer checks the plans on the service (--plan: those plans).
// missing counts the plans asked for that no account holds; refused the
// accounts whose key pair was refused: a refused key pair leaves out its
// own account only, the others' plans are checked.
func checkServer(ctx context.Context, f *Factory, opts *checkOptions, log *zap.Logger, accounts []pipeline.Account,
	targets *sector.SectorTargets) (checks []sector.SectorPlanCheck, missing, refused int, err error) {
	runner := run.NewRunner(accounts, nil, run.RunOptions{Concurrency: opts.Concurrency})
	read, err := runner.ReadStored(ctx, run.StoredQuery{PlanIDs: opts.PlanIDs, GoOnWhenRefused: true})
	if err != nil {
		return nil, 0, 0, serviceError(ctx, err)
	}
	for _, ar := range read.Refused {
		fmt.Fprintf(f.IO.ErrOut, "eepipe: %v; its plans were not checked\n", ar)
	}
	refused = len(read.Refused)
	stored, notFound := read.Plans, read.Missing
	log.Debug("plans on the service", zap.Int("plans", len(stored)))
	for _, id := range notFound {
		fmt.Fprintf(f.IO.ErrOut, "eepipe: plan %d is not on any configured account (%s)\n", id, accountNames(accounts))
	}
	missing = len(notFound)
	for _, sp := range stored {
		in := pipeline.FromServer(sp.Plan, pipeline.CompanyIDs{})
		c := sector.CheckPlanSector(in, pipeline.CatalogOfStored(sp.Plan), targets)
		c.Source, c.Account = "server", sp.Account.Name
		checks = append(checks, c)
	}
	return checks, missing, refused, nil
}

// writeCheckResults prints the results and writes each --report.
func writeCheckResults(f *Factory, opts *checkOptions, log *zap.Logger, report *sector.SectorCheckReport) error {
	write := reports.WriteSectorText
	if opts.JSON {
		write = reports.WriteSectorJSON
	}
	if err := write(f.IO.Out, report); err != nil {
		return exitf(ExitFatal, "write the results: %v", err)
	}
	for _, path := range opts.Reports {
		if err := reports.WriteSectorReport(path, report); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "Sector check report written to %s\n", path)
	}
	s := report.Summary()
	log.Debug("sector check done", zap.Int("plans", s.Plans), zap.Int("met", s.Met), zap.Int("short", s.Short),
		zap.Int("not_assessable", s.NotAssessable), zap.String("targets", report.TargetsSource))
	return nil
}

// checkExit maps the check's outcome to the exit status: 0 only when every
// final-year figure of every plan was measured and is met.
func checkExit(report *sector.SectorCheckReport) error {
	s := report.Summary()
	switch report.Outcome() {
	case sector.SectorSomeShort:
		return silentExit(ExitDiff)
	case sector.SectorNothingAssessed:
		return exitf(ExitDiff, "nothing could be assessed: not one final-year figure of %s could be measured (the reasons are above), so the targets are not shown to be met",
			pipeline.Plural(s.Plans, "plan"))
	case sector.SectorIncomplete:
		return exitf(ExitDiff, "no figure falls short, but %s not assessed in full (the reasons are above), so the targets are not shown to be met",
			pipeline.Plural(s.PartlyMet+s.NotAssessable, "plan was", "plans were"))
	}
	return nil
}

// readCheckInputs reads and validates the files; problems go to stderr and
// any error stops the check with ExitInvalid.
func readCheckInputs(f *Factory, args []string, cat *pipeline.Catalog) (*pipeline.Batch, error) {
	batch, err := f.readFiles(args, cat)
	if err != nil {
		return nil, err
	}
	if len(batch.Problems) > 0 {
		if err := writeProblems(f, batch); err != nil {
			return nil, exitf(ExitFatal, "%v", err)
		}
	}
	if batch.Problems.HasErrors() {
		n := batch.Count(pipeline.Error)
		return nil, exitf(ExitInvalid, "the input has %s; fix %s (eepipe validate shows %s too) and check again",
			pipeline.Plural(n, "error"), pipeline.PluralNoun(n, "it", "them"), pipeline.PluralNoun(n, "it", "them"))
	}
	if len(batch.Plans) == 0 {
		return nil, exitf(ExitInvalid, "the input describes no plan")
	}
	return batch, nil
}

// checkAccounts resolves the configuration (--config, environment, flags)
// and connects every configured account. check only reads plans, so it
// needs no company lookup even with several accounts.
func checkAccounts(f *Factory, opts *checkOptions, log *zap.Logger) ([]pipeline.Account, error) {
	cfg, err := loadConfig(f, opts.Conn, configNeeds{})
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	var problems []string
	if cfg.BaseURL == "" {
		problems = append(problems, fmt.Sprintf("no service URL: set %s, base_url in the --config file, or --base-url", envBaseURL))
	}
	if len(cfg.Accounts) == 0 {
		problems = append(problems, fmt.Sprintf("no account: set %s and %s, or list accounts in the --config file", envAPIKey, envAPISecret))
	}
	if len(problems) > 0 {
		return nil, exitf(ExitInvalid, "configuration for --server:\n  %s", strings.Join(problems, "\n  "))
	}
	cfg.Lookup = LookupConfig{} // check never searches companies
	accounts, _, _, err := connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	log.Debug("checking against the service", zap.String("config", cfg.String()))
	return accounts, nil
}

func accountNames(accounts []pipeline.Account) string {
	names := make([]string, len(accounts))
	for i, a := range accounts {
		names[i] = a.Name
	}
	return "accounts: " + strings.Join(names, ", ")
}

// serviceError turns a failed read into the command's error: every failure
// to read the service is fatal for a check.
func serviceError(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return exitf(ExitFatal, "interrupted")
	}
	return exitf(ExitFatal, "%v", err)
}
