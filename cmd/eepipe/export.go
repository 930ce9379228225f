package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// Export layouts.
const (
	layoutGrid = "grid"
	layoutFlat = "flat"
	layoutLong = "long"
)

// defaultExportName is the output name with --output-dir and no -o.
const defaultExportName = "plans.xlsx"

// exportOptions are the options of `eepipe export`.
type exportOptions struct {
	Args        []string
	Output      string   // -o: the file, or with --output-dir the base name
	Layout      string   // grid, flat, long; "" = from the extension
	PlanIDs     []int64  // --plan
	Companies   []string // --company VAT|REG|ID
	Concurrency int
	NoCharts    bool
	Force       bool // -o may replace an existing file
	Schedule    scheduleOptions
	Conn        connFlags

	HTTPClient *http.Client // tests
}

// NewCmdExport returns `eepipe export`. runF replaces the command's run function in tests.
func NewCmdExport(f *Factory, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export -o FILE | --output-dir DIR",
		Short: "Write the service's plans to a workbook that re-imports onto the same plans",
		Long: `Write the account's plans (all of them, those given with --plan, or those of
the companies given with --company; with --config, of every configured
account) to a workbook or CSV file, with plan ids and company identifiers
filled in, so that applying the file unchanged sends nothing and editing a
cell and applying it patches exactly that counter.

Layouts, from the file's extension and --layout:
  .xlsx  grid (default): an Overview sheet, one grid sheet per plan with two
         charts of the targets by race and gender per financial year (all
         employees, employees with disabilities), the Sector targets sheet
  .xlsx  flat: the Overview sheet and the flat table (sheet Targets)
  .csv   flat (default): one row per plan, financial year and target type
  .csv   long: one row per counter, for BI tools and pivot tables

Company identifiers come from the configuration (each account's
vat_number, registration_number or id_number; EEPIPE_COMPANY_VAT,
EEPIPE_COMPANY_REGISTRATION or EEPIPE_COMPANY_ID_NUMBER for the single
account), checked and completed through the company lookup, or from the
lookup records that --company finds. Every row and grid sheet also carries
the plan id and the configured account's name (column account, grid label
Account), so an export re-imports onto its own plans and accounts even when
the configuration gives no company identifiers. A total the service holds
that disagrees with its parts (typically 0 beside non-zero levels) is
written blank, which means "leave as is": re-importing an unchanged export
sends nothing and warns of nothing.

For scheduled runs, --output-dir writes UTC-stamped names
(plans-2026-11-22T0300Z.xlsx), --keep prunes older ones, a lock file stops
overlapping runs and --max-duration bounds the run; a partial export is
never written. One summary line is logged at the end (JSON when stderr is
not a terminal).

Exit status: 0 written, 1 some --plan ids not found (the others written),
2 invalid usage or configuration, 3 fatal (service unreachable, key refused,
lock held, --max-duration passed).`,
		Example: `  eepipe export -o plans.xlsx
  eepipe export -o acme.csv --company 4012345678
  eepipe export -o plans.csv --layout long --plan 17 --plan 18
  eepipe --config eepipe.yaml export --output-dir /var/backups/ee --keep 14 --max-duration 20m`,
		Args: noArgsWriteTo,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			if opts.Output == "" && opts.Schedule.OutputDir == "" {
				return usageErrorf(cmd, "export needs to know where to write: -o FILE (.xlsx or .csv), or --output-dir DIR for stamped names (for example: eepipe export -o plans.xlsx)")
			}
			return runExport(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	onceStringVar(fl, &opts.Output, "output", "o", "write to `FILE` (.xlsx or .csv); with --output-dir the file name to stamp (default "+defaultExportName+")")
	fl.StringVar(&opts.Layout, "layout", "", "grid or flat for .xlsx (default grid), flat or long for .csv (default flat)")
	fl.Int64SliceVar(&opts.PlanIDs, "plan", nil, "export only the plan with this `ID` (repeat for several)")
	fl.StringArrayVar(&opts.Companies, "company", nil, "export the plans of the company with this VAT, registration or ID `NUMBER` (repeat for several), with its identifiers filled in")
	fl.IntVar(&opts.Concurrency, "concurrency", run.DefaultConcurrency, "maximum requests in flight")
	fl.BoolVar(&opts.NoCharts, "no-charts", false, "leave the charts (each plan sheet's and the Sector targets sheet's) out of an XLSX grid export")
	fl.BoolVar(&opts.Force, "force", false, "replace the -o file if it exists (--output-dir runs write new stamped names and need no --force)")
	addScheduleFlags(fl, &opts.Schedule)
	opts.Conn.register(cmd)
	return cmd
}

// exportTarget is the resolved output: its base name and layout.
type exportTarget struct {
	base   string // -o as given, or the name stamped in --output-dir
	layout string
	xlsx   bool
}

func resolveExportTarget(opts *exportOptions) (exportTarget, error) {
	var t exportTarget
	switch {
	case opts.Output == "" && opts.Schedule.OutputDir == "":
		return t, exitf(ExitInvalid, "say where to write: -o FILE (.xlsx or .csv), or --output-dir DIR for stamped names")
	case opts.Output == "":
		t.base = defaultExportName
		if opts.Layout == layoutLong {
			t.base = "plans.csv"
		}
	case opts.Schedule.OutputDir != "":
		// With --output-dir, -o names the file to stamp; a folder in it is
		// --output-dir's to say.
		t.base = filepath.Base(opts.Output)
	default:
		t.base = opts.Output
	}
	ext := strings.ToLower(filepath.Ext(t.base))
	layout := strings.ToLower(strings.TrimSpace(opts.Layout))
	if layout != "" && layout != layoutGrid && layout != layoutFlat && layout != layoutLong {
		return t, exitf(ExitInvalid, "--layout %q: use grid or flat (.xlsx), flat or long (.csv)", opts.Layout)
	}
	switch ext {
	case ".xlsx":
		t.xlsx = true
		if layout == "" {
			layout = layoutGrid
		}
		if layout != layoutGrid && layout != layoutFlat {
			return t, exitf(ExitInvalid, "--layout %s does not fit %s: an .xlsx export is grid or flat (long is a .csv layout)", opts.Layout, t.base)
		}
	case ".csv":
		if layout == "" {
			layout = layoutFlat
		}
		if layout != layoutFlat && layout != layoutLong {
			return t, exitf(ExitInvalid, "--layout %s does not fit %s: a .csv export is flat or long (grid is an .xlsx layout)", opts.Layout, t.base)
		}
	default:
		return t, exitf(ExitInvalid, "%s: name the export .xlsx or .csv", t.base)
	}
	t.layout = layout
	return t, nil
}

func runExport(ctx context.Context, f *Factory, opts *exportOptions) error {
	log := f.Logger()
	target, err := resolveExportTarget(opts)
	if err != nil {
		return err
	}
	if err := checkExportOptions(opts); err != nil {
		return err
	}
	var cat *pipeline.Catalog
	if f.CatalogPath != "" {
		if cat, err = pipeline.LoadCatalog(f.CatalogPath); err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
	}
	ctx, sched, err := startRun(ctx, f, "export", &opts.Schedule)
	if err != nil {
		return err
	}
	e := &exportRun{f: f, opts: opts, sched: sched, log: log, target: target, cat: cat}
	err = e.scheduled(ctx)
	sched.noteKeyExpiry(e.accounts, e.clients)
	return sched.finish(ctx, err, zap.Int("plans_exported", e.written), zap.String("layout", target.layout))
}

// checkExportOptions validates the flags before anything else: the
// output (not overwritten without --force, its folder there), the
// concurrency and the plan ids.
func checkExportOptions(opts *exportOptions) error {
	if err := refuseOverwrite(opts.Output, opts.Schedule.OutputDir == "" && !opts.Force); err != nil {
		return err
	}
	if err := refuseMissingFolder("-o", opts.Output, opts.Schedule.OutputDir); err != nil {
		return err
	}
	if opts.Concurrency < 1 {
		return exitf(ExitInvalid, "--concurrency must be at least 1 (got %d)", opts.Concurrency)
	}
	for _, id := range opts.PlanIDs {
		if id <= 0 {
			return exitf(ExitInvalid, "--plan %d: a plan id is a positive whole number", id)
		}
	}
	return nil
}

// exportRun is one run of export: its options, and what it got to (the
// accounts and clients, the plans written) for the summary.
type exportRun struct {
	f      *Factory
	opts   *exportOptions
	sched  *scheduledRun
	log    *zap.Logger
	target exportTarget
	cat    *pipeline.Catalog // --catalog, or nil: the service's

	cfg      *Config
	sources  []run.ExportSource
	accounts []pipeline.Account
	clients  []*apiclient.Client
	written  int
}

// scheduled is the export within its scheduled run: the configuration,
// the clients and the accounts to read, then the file written (a CSV
// streamed, an XLSX from the plans read whole).
func (e *exportRun) scheduled(ctx context.Context) error {
	f, opts, log := e.f, e.opts, e.log
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Plans: true, Lookup: len(opts.Companies) > 0})
	if err != nil {
		return err
	}
	e.cfg = cfg
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	var finder pipeline.CompanyFinder
	e.accounts, finder, e.clients, err = connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	configured := make([]pipeline.CompanyIDs, len(cfg.Accounts))
	for i, a := range cfg.Accounts {
		configured[i] = a.Company
	}
	if e.sources, err = exportSources(ctx, e.sched, e.accounts, configured, finder, opts.Companies); err != nil {
		return err
	}
	if !e.target.xlsx {
		return e.streamCSV(ctx)
	}
	return e.writeXLSX(ctx)
}

// streamCSV writes a CSV export as it streams: each plan goes to the
// file as soon as it is read, and nothing is held.
func (e *exportRun) streamCSV(ctx context.Context) error {
	f, opts, sched, log, target := e.f, e.opts, e.sched, e.log, e.target
	path := sched.outputPath(target.base)
	var (
		missing []int64
		refused []*pipeline.AccountRefusedError
	)
	err := xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		var sink interface {
			Write(*pipeline.InputPlan) error
			Close() error
		}
		open := func(served *pipeline.Catalog) {
			c := e.cat
			if c == nil {
				c = served
			}
			if target.layout == layoutLong {
				sink = table.NewLongCSVWriter(w, c)
			} else {
				sink = table.NewFlatCSVWriter(w, c)
			}
		}
		var (
			served *pipeline.Catalog
			err    error
		)
		missing, served, refused, err = eachExportPlan(ctx, e.sources, opts, log, func(p export.Plan, served *pipeline.Catalog) error {
			if sink == nil {
				open(served)
			}
			e.written++
			return sink.Write(p.Plan)
		})
		if err != nil {
			return err
		}
		if timedOut(ctx) || ctx.Err() != nil {
			return exitf(ExitFatal, "stopped before every plan was read (%d read); no partial export was written", e.written)
		}
		if sink == nil {
			open(served)
		}
		return sink.Close()
	})
	if err != nil {
		e.written = 0
		var ee *ExitError
		if errors.As(err, &ee) {
			return ee
		}
		return exitf(ExitFatal, "%v", err)
	}
	sched.wrote(path, target.base)
	return exportOutcome(f, path, target, e.written, missing, refused, len(e.accounts))
}

// writeXLSX reads every plan, then writes the XLSX export.
func (e *exportRun) writeXLSX(ctx context.Context) error {
	f, opts, sched, log, target := e.f, e.opts, e.sched, e.log, e.target
	fetchStart := time.Now()
	plans, missing, served, refused, err := fetchExportPlans(ctx, e.sources, opts, log)
	if err != nil {
		return err
	}
	if timedOut(ctx) || ctx.Err() != nil {
		return exitf(ExitFatal, "stopped before every plan was read (%d read); no partial export was written", len(plans))
	}
	cat := e.cat
	if cat == nil {
		cat = served
	}
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	log.Debug("plans read", zap.Int("plans", len(plans)), zap.Duration("took", time.Since(fetchStart)))
	path := sched.outputPath(target.base)
	writeStart := time.Now()
	var notExported []string
	for _, ar := range refused {
		notExported = append(notExported, "the plans of account "+ar.Account+" (its key was refused)")
	}
	if err := writeExport(path, target, plans, cat, e.cfg.BaseURL, notExported, f, opts); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	log.Debug("export written", zap.String("file", path), zap.Duration("took", time.Since(writeStart)))
	e.written = len(plans)
	sched.wrote(path, target.base)
	return exportOutcome(f, path, target, e.written, missing, refused, len(e.accounts))
}

// exportSources picks the accounts to export (run.ExportSources)
// and maps its errors to the exit status: a company lookup that fails is
// fatal, a --company that names no single company of an account or a
// configured company the lookup refutes is invalid input.
func exportSources(ctx context.Context, sched *scheduledRun, accounts []pipeline.Account, configured []pipeline.CompanyIDs,
	finder pipeline.CompanyFinder, companies []string) ([]run.ExportSource, error) {
	sources, err := run.ExportSources(ctx, accounts, configured, finder, companies, func(w string) { sched.warn(w) })
	var (
		lookup    *run.CompanyLookupError
		byCompany *run.ExportCompanyError
	)
	switch {
	case err == nil:
		return sources, nil
	case errors.As(err, &lookup):
		return nil, exitf(ExitFatal, "%v", err)
	case errors.As(err, &byCompany):
		return nil, exitf(ExitInvalid, "--company %v", err)
	}
	return nil, exitf(ExitInvalid, "configuration: %v", err)
}

// fetchExportPlans reads the sources' stored plans as eachExportPlan
// does and returns them in account order, then by plan id, the --plan ids
// found nowhere, the counter catalog the service serves (nil when no plan
// tells it) and the accounts whose key pair was refused: their plans are
// left out, the others' exported (every account refused is fatal).
func fetchExportPlans(ctx context.Context, sources []run.ExportSource, opts *exportOptions, log *zap.Logger) ([]export.Plan, []int64, *pipeline.Catalog, []*pipeline.AccountRefusedError, error) {
	var plans []export.Plan
	missing, cat, refused, err := eachExportPlan(ctx, sources, opts, log, func(p export.Plan, _ *pipeline.Catalog) error {
		plans = append(plans, p)
		return nil
	})
	return plans, missing, cat, refused, err
}

// eachExportPlan reads the plans through run.ReadExport (which plans,
// from which account, as which exported plan) and hands each to each as
// soon as it (and every plan before it) has arrived, in the same order,
// with the counter catalog the service serves (nil when no plan tells
// it); nothing is kept, so a CSV export streams its plans to the file. It
// returns the --plan ids found nowhere, the catalog and the accounts whose
// key pair was refused.
func eachExportPlan(ctx context.Context, sources []run.ExportSource, opts *exportOptions, log *zap.Logger,
	each func(export.Plan, *pipeline.Catalog) error) ([]int64, *pipeline.Catalog, []*pipeline.AccountRefusedError, error) {
	read, err := run.ReadExport(ctx, sources, run.ExportQuery{
		Concurrency: opts.Concurrency,
		PlanIDs:     opts.PlanIDs,
		Each: func(p run.ExportedStored, served *pipeline.Catalog) error {
			return each(export.Plan{
				Plan:        p.Plan,
				Account:     p.Account,
				CompanyName: p.CompanyName,
				Era:         p.Stored.Era,
				Milestones:  len(p.Stored.Milestones),
				UpdatedAt:   p.Stored.UpdatedAt,
			}, served)
		},
	})
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return nil, nil, nil, err
		}
		return nil, nil, nil, exitf(ExitFatal, "%v", err)
	}
	for _, v := range read.Vanished {
		log.Warn("a plan was deleted while exporting; left out", zap.Int64("plan_id", v.Plan.ID), zap.String("account", v.Account.Name))
	}
	log.Debug("requests", zap.Any("requests", read.Requests))
	return read.Missing, read.Catalog, read.Refused, nil
}

func writeExport(path string, t exportTarget, plans []export.Plan, cat *pipeline.Catalog, source string, notExported []string, f *Factory, opts *exportOptions) error {
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	xo := export.Options{Catalog: cat, GeneratedAt: f.Now(), Source: source, NoCharts: opts.NoCharts, NotExported: notExported}
	switch {
	case t.xlsx && t.layout == layoutGrid:
		// The sectoral targets check of each plan, as `eepipe check` shows
		// it, on a sheet after the Overview.
		report := sector.CheckSector(inputs, cat, sector.DefaultSectorTargets())
		for i := range report.Plans {
			if i < len(plans) { // the plans come from the service: name their account
				report.Plans[i].Source, report.Plans[i].Account = "server", plans[i].Account
			}
		}
		xo.Sector = &export.Sector{Plans: report.Plans, Source: report.TargetsSource}
		wb, err := export.NewWorkbook(plans, xo)
		if err != nil {
			return fmt.Errorf("export %s: %w", path, err)
		}
		defer wb.Close()
		return xlsx.WriteWorkbook(path, wb)
	case t.xlsx:
		return export.WriteFlatXLSX(path, plans, xo)
	case t.layout == layoutLong:
		return table.WriteLongCSV(path, inputs, cat)
	default:
		return table.WriteFlatCSV(path, inputs, cat)
	}
}

// exportOutcome tells what an export wrote and maps what it could not
// export to the exit status: --plan ids found nowhere and accounts whose
// key was refused (their plans left out) are differences (exit 1).
func exportOutcome(f *Factory, path string, target exportTarget, written int, missing []int64, refused []*pipeline.AccountRefusedError, accounts int) error {
	fmt.Fprintln(f.IO.Out, path)
	fmt.Fprintf(f.IO.ErrOut, "Exported %s to %s (%s layout)\n", pipeline.Plural(written, "plan"), path, target.layout)
	for _, ar := range refused {
		fmt.Fprintf(f.IO.ErrOut, "eepipe: %v; its plans are not in %s\n", ar, path)
	}
	// What the file holds besides: a claim about "the other plans" only
	// when there are some.
	others := "the other plans were exported"
	if written == 0 {
		others = fmt.Sprintf("no plan was exported: %s holds none", path)
	}
	switch {
	case len(missing) > 0 && len(refused) > 0:
		return exitf(ExitDiff, "no plan with id %s on the accounts that could be read (%s refused); %s",
			exportJoinIDs(missing), pipeline.Plural(len(refused), "account's key was", "accounts' keys were"), others)
	case len(missing) > 0:
		return exitf(ExitDiff, "no plan with id %s on the configured %s; %s",
			exportJoinIDs(missing), pipeline.PluralNoun(accounts, "account"), others)
	case len(refused) > 0 && written == 0:
		return exitf(ExitDiff, "%s not exported (key refused); %s", pipeline.Plural(len(refused), "account's plans were", "accounts' plans were"), others)
	case len(refused) > 0:
		return exitf(ExitDiff, "%s not exported (key refused); the other accounts' plans were", pipeline.Plural(len(refused), "account's plans were", "accounts' plans were"))
	}
	return nil
}

func exportJoinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
