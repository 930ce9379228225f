package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// defaultReconcileReport is the report written with --output-dir and no --report.
const defaultReconcileReport = "reconcile.json"

// reconcileOptions are the options of `eepipe reconcile`.
type reconcileOptions struct {
	Args        []string // input files and folders
	Reports     []string // --report: .xlsx, .csv, .json
	Concurrency int
	JSON        bool // --json: the reconciliation on stdout instead of the text
	Schedule    scheduleOptions
	Conn        connFlags
	State       stateFlags // --state, --no-state: classify against the run history

	HTTPClient *http.Client // tests
}

// NewCmdReconcile returns `eepipe reconcile`. runF replaces the command's run function in tests.
func NewCmdReconcile(f *Factory, runF func(*reconcileOptions) error) *cobra.Command {
	opts := &reconcileOptions{}
	cmd := &cobra.Command{
		Use:   "reconcile FILE|FOLDER... [--report out.xlsx|out.csv|out.json]",
		Short: "Compare workbooks with the service, cell by cell, without writing",
		Long: `Compare the plans the workbooks describe with the service and report, without
sending any write:
  - per plan: present, missing on the service, or only on the service (a plan
    of the same company's account that the workbook does not describe);
  - per target: every counter whose workbook value differs from the
    service's, with both values and the workbook cell.
Blank workbook cells are not compared (they mean "leave as is"). The
comparison is the one apply --dry-run shows, presented for auditors.

Reports (--report, repeatable; the format from the extension):
  .xlsx  the consultant's own workbook (grid or flat; a CSV becomes a sheet)
         with each differing cell filled orange and a comment holding the
         service's value, plus a Summary sheet listing every finding
  .json  stable, documented (schema eepipe.reconcile/v1), for alerting
  .csv   one row per finding

Exit status: 0 in sync, 1 differences, 2 invalid input or configuration,
3 fatal (service unreachable, key refused, lock held, --max-duration
passed; the report is still written with what was compared).`,
		Example: `  eepipe reconcile acme.xlsx --report acme-checked.xlsx
  eepipe reconcile clients/ --report drift.json --report drift.csv
  eepipe --config eepipe.yaml reconcile clients/ --output-dir /var/reports --keep 30 --max-duration 15m`,
		Args: needsInputs("workbook or folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return runReconcile(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Reports, "report", nil, "write the reconciliation to `FILE` (.xlsx annotated copy, .json or .csv); repeat for several")
	fl.IntVar(&opts.Concurrency, "concurrency", run.DefaultConcurrency, "maximum requests in flight across all accounts")
	addJSONFlag(cmd, &opts.JSON)
	addScheduleFlags(fl, &opts.Schedule)
	opts.Conn.register(cmd)
	opts.State.register(cmd, false)
	return cmd
}

func checkReconcileOptions(opts *reconcileOptions) error {
	if opts.Concurrency < 1 {
		return exitf(ExitInvalid, "--concurrency must be at least 1 (got %d)", opts.Concurrency)
	}
	if len(opts.Reports) == 0 && opts.Schedule.OutputDir != "" {
		opts.Reports = []string{defaultReconcileReport}
	}
	for _, r := range opts.Reports {
		if err := checkReportName(r, opts.Schedule.OutputDir); err != nil {
			return err
		}
		for _, in := range opts.Args {
			if validateSameFile(r, in) {
				return exitf(ExitInvalid, "--report %s would overwrite an input; write the report to a new file", r)
			}
		}
	}
	return nil
}

func runReconcile(ctx context.Context, f *Factory, opts *reconcileOptions) error {
	if err := checkReconcileOptions(opts); err != nil {
		return err
	}
	if err := checkStateFolder(f, nil, &opts.State); err != nil {
		return err
	}
	log := f.Logger()
	ctx, sched, err := startRun(ctx, f, "reconcile", &opts.Schedule)
	if err != nil {
		return err
	}
	r := &reconcileRun{f: f, opts: opts, sched: sched, log: log}
	err = r.scheduled(ctx)
	sched.noteKeyExpiry(r.accounts, r.clients)
	return sched.finish(ctx, err, reconcileFields(r.rec)...)
}

// reconcileRun is one run of reconcile: its options, and what it got to
// (the accounts and clients, the reconciliation) for the summary.
type reconcileRun struct {
	f     *Factory
	opts  *reconcileOptions
	sched *scheduledRun
	log   *zap.Logger

	accounts []pipeline.Account
	clients  []*apiclient.Client
	rec      *diff.Reconciliation
}

// scheduled is the reconciliation within its scheduled run: the
// configuration, state store and clients, the inputs compared with the
// service and classified against the history, then the reconciliation
// printed and its reports written.
func (r *reconcileRun) scheduled(ctx context.Context) error {
	f, opts, log := r.f, r.opts, r.log
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Plans: true})
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	st, err := openState(ctx, f, cfg, &opts.State, statestore.Options{LockWait: opts.Schedule.LockWait}, true)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	if err := checkServiceHistory(ctx, st, cfg, r.sched); err != nil {
		return err
	}
	named := make([]pipeline.Account, len(cfg.Accounts))
	for i, a := range cfg.Accounts {
		named[i] = pipeline.Account{Name: a.Name}
	}
	var finder pipeline.CompanyFinder
	r.accounts, finder, r.clients, err = connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	runner := run.NewRunner(r.accounts, finder, run.RunOptions{Concurrency: opts.Concurrency, Now: f.Now})
	batch, _, err := readInputsFor(f, opts.Args, named, false, false, func() *pipeline.Catalog {
		c, _ := runner.ServiceCatalog(ctx)
		return c
	}, nil)
	if err != nil {
		return err
	}
	log.Info("comparing with the service", zap.Int("plans_in_files", len(batch.Plans)), zap.Int("accounts", len(r.accounts)))
	cs, planErr := runner.Plan(ctx, batch.Plans)
	if planErr == nil {
		if err := checkServedCatalog(ctx, f, runner, batch); err != nil {
			return err
		}
	}
	if planErr == nil && st != nil {
		if err := diff.ClassifyChanges(ctx, cs, st, serviceKey(cfg)); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	}
	rec := diff.Reconcile(cs, r.accounts)
	rec.GeneratedAt = f.Now().UTC().Truncate(time.Second) // as documented: 2026-11-22T03:00:00Z
	rec.Files = batch.Files
	r.rec = rec
	return r.write(ctx, runner, planErr)
}

// write marks a reconciliation the run stopped (planErr) as such, prints
// it, writes its reports and maps it to the exit status.
func (r *reconcileRun) write(ctx context.Context, runner *run.Runner, planErr error) error {
	f, opts, rec := r.f, r.opts, r.rec
	var stopErr error
	if planErr != nil {
		cause := stopCause(planErr, runner)
		switch {
		case timedOut(ctx):
			rec.MarkStopped(fmt.Sprintf("--max-duration %s passed before every plan was compared", opts.Schedule.MaxDuration))
			stopErr = exitf(ExitFatal, "stopped after --max-duration %s: the report lists what was compared", opts.Schedule.MaxDuration)
		default:
			rec.MarkStopped(cause.Error())
			stopErr = exitf(ExitFatal, "could not compare the files with the service: %v", cause)
		}
	}
	render := rec.Render
	if opts.JSON {
		render = func(w io.Writer) error { return reports.EncodeReconcileJSON(w, rec) }
	}
	if err := render(f.IO.Out); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	if err := writeReconcileReports(f, r.sched, opts.Reports, rec); err != nil {
		return err
	}
	r.sched.couldNotCompare(rec.Summary.PlansNotCompared)
	if stopErr != nil {
		return stopErr
	}
	if !rec.InSync {
		return silentExit(ExitDiff)
	}
	return nil
}

// reconcileFields are the summary line's fields of rec (none when the
// run did not get to it).
func reconcileFields(rec *diff.Reconciliation) []zap.Field {
	if rec == nil {
		return nil
	}
	s := rec.Summary
	return []zap.Field{
		zap.Bool("in_sync", rec.InSync), zap.Bool("complete", rec.Complete),
		zap.Int("plans", s.Plans), zap.Int("plans_in_sync", s.PlansInSync), zap.Int("plans_differing", s.PlansDiffering),
		zap.Int("plans_missing_on_server", s.PlansMissingOnServer), zap.Int("plans_only_on_server", s.PlansOnlyOnServer),
		zap.Int("plans_not_compared", s.PlansNotCompared), zap.Int("fields_differing", s.FieldsDiffering),
		zap.Int("targets_differing", s.TargetsDiffering), zap.Int("counters_differing", s.CountersDiffering),
	}
}

// writeReconcileReports writes every --report, in --output-dir with
// stamped names when given.
func writeReconcileReports(f *Factory, sched *scheduledRun, bases []string, rec *diff.Reconciliation) error {
	for _, base := range bases {
		var err error
		switch strings.ToLower(filepath.Ext(base)) {
		case ".json":
			path := sched.outputPath(base)
			if err = reports.WriteReconcileJSON(path, rec); err == nil {
				reportWritten(f, sched, path, base)
			}
		case ".csv":
			path := sched.outputPath(base)
			if err = reports.WriteReconcileCSV(path, rec); err == nil {
				reportWritten(f, sched, path, base)
			}
		default:
			sources := rec.Files
			if len(sources) == 0 {
				sources = []string{""}
			}
			for i, name := range reports.ReconcileXLSXPaths(base, sources) {
				path := sched.outputPath(name)
				var how reports.ReconcileCopy
				if how, err = reports.WriteReconcileXLSX(path, sources[i], rec); err != nil {
					break
				}
				if how.Fallback != nil {
					// Not a problem: the copy is the same, written the
					// slower way (docs/performance.md).
					f.Logger().Debug("the annotated copy was not streamed", zap.String("source", sources[i]), zap.Error(how.Fallback))
				}
				reportWritten(f, sched, path, name)
			}
		}
		if err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	}
	return nil
}

func reportWritten(f *Factory, sched *scheduledRun, path, base string) {
	sched.wrote(path, base)
	fmt.Fprintf(f.IO.ErrOut, "Reconciliation report written to %s\n", path)
}
