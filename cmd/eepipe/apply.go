package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/eepipe/eepipe/pipeline/planapi"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// applyOptions are the options of `eepipe apply` (and, with DryRun, of
// `eepipe diff`).
type applyOptions struct {
	Args                 []string // input files and folders
	DryRun               bool
	Concurrency          int
	RecreateOnDateChange bool
	NoRecalc             bool
	RecalcWait           time.Duration
	Report               string
	ShowUnchanged        bool
	JSON                 bool // diff --json: the run report on stdout instead of the change set
	// Counters lists every counter of the change set (diff -v, and the
	// demo, which shows its small workbook whole); else a summary per plan.
	Counters bool
	Schedule scheduleOptions // apply only: --output-dir, --keep, --lock, --lock-wait, --max-duration
	LockDir  string          // apply only: folder of the account locks
	// SkipInvalid (apply only) sets the plans with errors aside and sends
	// the valid ones; Rejects is where they are written back.
	SkipInvalid bool
	Rejects     string
	Conn        connFlags
	State       stateFlags // --state, --no-state, --overwrite-service-changes, diff -o

	// Locker takes the account locks (nil: OS file locks in LockDir); a
	// shared state store can put team-wide locks here.
	Locker pipeline.Locker

	// For tests and the demo: the HTTP client (nil: the default), the
	// first wait after a 409 (0: the default), and Quiet to skip printing
	// the change set before applying.
	HTTPClient    *http.Client
	RecalcBackoff time.Duration
	Quiet         bool
}

// NewCmdApply returns `eepipe apply`. runF replaces the command's run function in tests.
func NewCmdApply(f *Factory, runF func(*applyOptions) error) *cobra.Command {
	opts := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply FILE|FOLDER...",
		Short: "Make the service's plans match the workbooks: create and patch, with the fewest requests",
		Long: `Read and validate every input (any error: nothing is sent, exit 2; with
--skip-invalid every plan with an error is set aside, never sent, and the
valid ones applied; --rejects FILE writes the plans set aside in their
input's layout with each error beside its cell, before any request), find each
plan's company through the lookup and its account, read the accounts' plans,
and send only what differs: a create (with scorecard prefill when the file
names a scorecard) for a plan that is not there, a metadata update when the
name, sector or scorecard differ, and per target only the counters whose
value differs. Blank cells never send anything. Then every scorecard linked
to a changed plan is recalculated once, waiting through a running
recalculation (409) up to --recalc-wait.

Requests in flight are bounded by --concurrency across all accounts. One
failing plan does not stop the others; a fatal error (key refused, service
or lookup unreachable) or Ctrl-C stops sending, lets requests in flight
finish, writes the report and exits 3.

From cron: --output-dir DIR writes the run report there with a UTC-stamped
name (run-2026-11-22T0300Z.json; --report gives the name) and takes the
lock DIR/.eepipe.lock (or --lock FILE) so that two runs never overlap;
every apply also locks each account it writes (--lock-dir), so that two
applies never write one account at once: a held lock exits 3 naming its
holder, or is waited for up to --lock-wait;
--keep N prunes older reports of the same name; --max-duration D stops
starting requests when D has passed, writes the run report and exits 3.
One summary line ends the log (JSON when stderr is not a terminal).

Run history (state store: --state, state: in the configuration, default
an SQLite file in the XDG state home): every write is recorded as it
completes, and the counters found already holding the file's values count
as applied by the run too (a run that writes nothing is recorded); a
counter or plan field changed on the service since eepipe last applied it
(or changed in both) is left alone and listed unless
--overwrite-service-changes. With a PostgreSQL store each account is
locked for the run (--lock-wait). apply CHANGES.json applies a change set
saved by diff -o exactly, or nothing when the service drifted.

Exit status: 0 all applied, 1 some plans failed, service-side changes
left alone, plans set aside by --skip-invalid, or a change set drifted or
was already applied, 2 invalid
input or configuration, 3 fatal, interrupted, lock held, state store
unusable (also when recording a write fails: the run stops writing) or
--max-duration passed.`,
		Example: `  eepipe apply plans.xlsx
  eepipe apply --dry-run clients/
  eepipe --config eepipe.yaml apply clients/ --concurrency 16 --report run.xlsx
  eepipe apply plan.csv --recreate-on-date-change --no-recalc
  eepipe --config eepipe.yaml apply /srv/clients --output-dir /var/log/eepipe/runs --keep 30 --max-duration 20m`,
		Args: needsInputs("workbook or folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			_, err := runApply(cmd.Context(), f, opts)
			return err
		},
	}
	addApplyFlags(cmd, opts, true)
	addVerboseFlag(cmd, f, "on a terminal each plan's counters as it is written, and with --dry-run every counter that changes")
	return cmd
}

func addApplyFlags(cmd *cobra.Command, opts *applyOptions, apply bool) {
	fl := cmd.Flags()
	if apply {
		fl.BoolVar(&opts.DryRun, "dry-run", false, "print the change set and send nothing (exit 0 no changes, 1 changes)")
		fl.BoolVar(&opts.NoRecalc, "no-recalc", false, "do not recalculate the scorecards linked to changed plans")
		fl.DurationVar(&opts.RecalcWait, "recalc-wait", run.DefaultRecalcWait, "how long to wait for a running recalculation (409) before giving up on a scorecard")
		addScheduleFlags(fl, &opts.Schedule)
		fl.BoolVar(&opts.SkipInvalid, "skip-invalid", false, "send the valid plans and set every plan with an error aside (exit 1 when any is); without it any error sends nothing")
		onceStringVar(fl, &opts.Rejects, "rejects", "", "with --skip-invalid, write the plans set aside to `FILE` (.xlsx or .csv) in their input's layout, each error beside its cell")
		fl.StringVar(&opts.LockDir, "lock-dir", "", "`DIR` of the per-account locks that stop two applies writing one account at once (default: "+envLockDir+", else eepipe/locks in the user's state or cache folder)")
	}
	fl.IntVar(&opts.Concurrency, "concurrency", run.DefaultConcurrency, "maximum requests in flight across all accounts")
	fl.BoolVar(&opts.RecreateOnDateChange, "recreate-on-date-change", false, "delete and recreate plans whose dates the file changes (the service fixes dates at creation)")
	reportHelp := "write one line per input row to `FILE` (.json, .csv or .xlsx)"
	if apply {
		reportHelp += "; with --output-dir the file name to stamp (default " + defaultRunReport + ")"
	}
	onceStringVar(fl, &opts.Report, "report", "", reportHelp)
	fl.BoolVar(&opts.ShowUnchanged, "show-unchanged", false, "list unchanged plans in the change set too")
	opts.Conn.register(cmd)
	opts.State.register(cmd, true)
}

// defaultRunReport is the run report written with --output-dir and no --report.
const defaultRunReport = "run.json"

// checkApplyOptions validates the flags before anything else.
func checkApplyOptions(opts *applyOptions) error {
	if opts.Concurrency < 1 {
		return exitf(ExitInvalid, "--concurrency must be at least 1 (got %d)", opts.Concurrency)
	}
	if opts.Report == "" && opts.Schedule.OutputDir != "" {
		opts.Report = defaultRunReport
	}
	if opts.Report != "" {
		// Found out now, not after the run has changed the service. With
		// --output-dir the report goes there (created if missing).
		if err := checkReportName(opts.Report, opts.Schedule.OutputDir); err != nil {
			return err
		}
	}
	if err := refuseMissingFolder("-o", opts.State.Output, ""); err != nil {
		return err
	}
	if opts.State.SignWith != "" {
		if opts.State.Output == "" {
			return exitf(ExitInvalid, "--sign-with signs off the change set diff -o writes: give -o SET too")
		}
		k, err := readSignerKey(opts.State.SignWith)
		if err != nil {
			return err
		}
		opts.State.signer = k
	}
	if opts.RecalcWait < 0 {
		return exitf(ExitInvalid, "--recalc-wait must not be negative")
	}
	return checkRejectsOptions(opts)
}

// readInputsFor reads and validates the inputs; any error stops the run
// with ExitInvalid before a request is sent. accounts are the configured
// accounts (their names only): CheckRouting reports the plans that no
// account column, company or plan_id routes, and unknown account names. With allowEmpty, inputs that are valid but
// describe no plan (a header-only file, an empty folder: warnings) are not
// an error: there is nothing to do. With creates (diff and apply) the
// warning that a plan which may be new skips a year is left out: they say
// it once, for each plan they create (pipeline.CodeSkippedYears).
//
// With skip (apply --skip-invalid), errors do not stop the run: the plans
// with errors are set aside and written back (skipInvalid.split).
func readInputsFor(f *Factory, args []string, accounts []pipeline.Account, allowEmpty, creates bool, learn func() *pipeline.Catalog, skip *skipInvalid) (*pipeline.Batch, *pipeline.Catalog, error) {
	var cat *pipeline.Catalog
	if f.CatalogPath != "" {
		c, err := pipeline.LoadCatalog(f.CatalogPath)
		if err != nil {
			return nil, nil, exitf(ExitInvalid, "%v", err)
		}
		cat = c
	}
	batch, err := f.readFiles(args, cat)
	if err != nil {
		return nil, nil, err
	}
	if cat == nil && learn != nil && batch.Problems.HasUnknownCounters() {
		// Counters the built-in catalog lacks: the service's catalog
		// (the keys of a target it returns) may have them.
		if served := learn(); served != nil && !served.Equal(pipeline.DefaultCatalog()) {
			if batch, err = f.readFiles(args, served); err != nil {
				return nil, nil, err
			}
			cat = served
		}
	}
	if creates {
		batch.Problems = batch.Problems.Without(pipeline.CodeSkippedYears)
	}
	if ps := assemble.CheckRouting(batch.Plans, accounts); len(ps) > 0 {
		batch.Problems = append(batch.Problems, ps...)
		batch.Problems.Sort()
	}
	if len(batch.Problems) > 0 {
		if err := writeProblems(f, batch); err != nil {
			return nil, nil, exitf(ExitFatal, "%v", err)
		}
	}
	if skip != nil && batch.Count(pipeline.Error) > 0 {
		if err := skip.split(f, batch, cat); err != nil {
			return nil, nil, err
		}
		return batch, cat, nil
	}
	if batch.Problems.HasErrors() {
		n := batch.Count(pipeline.Error)
		// Which account a plan goes to depends on the configuration:
		// validate shows those problems given the same file.
		validate := "eepipe validate"
		if f.configFrom == "--config" {
			validate = "eepipe --config " + f.ConfigPath + " validate"
		}
		return nil, nil, exitf(ExitInvalid, "the input has %s; nothing was sent. Fix %s (%s shows %s too) and run again",
			pipeline.Plural(n, "error"), pipeline.PluralNoun(n, "it", "them"), validate, pipeline.PluralNoun(n, "it", "them"))
	}
	if len(batch.Plans) == 0 && !allowEmpty {
		return nil, nil, exitf(ExitInvalid, "the input describes no plan; nothing was sent")
	}
	return batch, cat, nil
}

// checkServedCatalog checks, after the plans were compared and before
// anything is written, every counter the files set against the catalog the
// service serves (Runner.ServedCatalogProblems): a counter the service
// lacks is an error naming its column, and nothing is sent. With
// --catalog the file's catalog rules instead.
func checkServedCatalog(ctx context.Context, f *Factory, runner *run.Runner, batch *pipeline.Batch) error {
	if f.CatalogPath != "" {
		return nil
	}
	return servedCatalogError(f, batch, &run.ServedCatalogError{Problems: runner.ServedCatalogProblems(ctx, batch.Plans)})
}

// servedCatalogError prints the problems of e (counters the service
// lacks), when there are any, and returns the command's error.
func servedCatalogError(f *Factory, batch *pipeline.Batch, e *run.ServedCatalogError) error {
	if len(e.Problems) == 0 {
		return nil
	}
	if err := reports.WriteProblemsText(f.IO.ErrOut, &pipeline.Batch{Files: batch.Files, Plans: batch.Plans, Problems: e.Problems}); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	return exitf(ExitInvalid, "%v", e)
}

// connect builds one client per account and the lookup client.
func connect(cfg *Config, log *zap.Logger, hc *http.Client) ([]pipeline.Account, pipeline.CompanyFinder, []*apiclient.Client, error) {
	var accounts []pipeline.Account
	var clients []*apiclient.Client
	for _, a := range cfg.Accounts {
		c, err := apiclient.New(apiclient.Options{BaseURL: cfg.BaseURL, APIKey: a.APIKey, APISecret: a.APISecret,
			HTTPClient: hc, Logger: log.With(zap.String("account", a.Name))})
		if err != nil {
			return nil, nil, nil, exitf(ExitInvalid, "account %s: %v", a.Name, err)
		}
		clients = append(clients, c)
		accounts = append(accounts, pipeline.Account{Name: a.Name, CompanyID: a.CompanyID, Company: a.Company,
			KeyHint: pipeline.KeyHint(a.APIKey), Service: planapi.New(c)})
	}
	var finder pipeline.CompanyFinder
	if cfg.Lookup.Configured() {
		c, err := apiclient.New(apiclient.Options{LookupURL: cfg.Lookup.URL, LookupUsername: cfg.Lookup.Username,
			LookupPassword: cfg.Lookup.Password, HTTPClient: hc, Logger: log.With(zap.String("service", "lookup"))})
		if err != nil {
			return nil, nil, nil, exitf(ExitInvalid, "company lookup: %v", err)
		}
		finder = planapi.NewFinder(c)
	}
	return accounts, finder, clients, nil
}

// runApply is `eepipe apply` and, with opts.DryRun, `eepipe diff`; it
// returns the run's report when the run got that far (the demo explains
// its numbers with it) and the error that sets the exit status.
// The scheduled-run safety of export and reconcile (schedule.go) applies:
// --lock / --output-dir take the lock, --max-duration bounds the run (no
// new request starts after it, the run report is written, exit 3), the
// run report is stamped in --output-dir and pruned with --keep, and one
// summary line ends the log.
func runApply(ctx context.Context, f *Factory, opts *applyOptions) (*run.RunReport, error) {
	if err := checkApplyOptions(opts); err != nil {
		return nil, err
	}
	// Before the run's folder and lock are made: a store or a lock folder
	// in a folder that does not exist is refused, and nothing is created.
	if err := checkStateFolder(f, nil, &opts.State); err != nil {
		return nil, err
	}
	if err := checkLockDir(f, opts); err != nil {
		return nil, err
	}
	command := "apply"
	if opts.DryRun {
		command = "diff"
	}
	ctx, sched, err := startRun(ctx, f, command, &opts.Schedule)
	if err != nil {
		return nil, err
	}
	sched.args = opts.Args
	a := &applyRun{f: f, opts: opts, sched: sched, started: f.Now()}
	err = a.scheduled(ctx)
	sched.noteKeyExpiry(a.accounts, a.clients)
	var fields []zap.Field
	if a.rep != nil {
		fields = summaryFields(a.rep)
	}
	fields = append(fields, zap.Bool("dry_run", opts.DryRun))
	if !opts.DryRun && a.st != nil {
		fields = append(fields, zap.Int("changes_without_history", a.unguarded.Changes()))
	}
	if opts.DryRun {
		fields = append(fields, zap.Int("plans_not_compared", sched.notCompared))
	}
	return a.rep, sched.finish(ctx, err, fields...)
}

// applyRun is one run of apply or diff: the options and the dependencies
// built from them, filled in as the run gets to them.
type applyRun struct {
	f          *Factory
	opts       *applyOptions
	sched      *scheduledRun
	started    time.Time
	reportPath string // the run report's path (--report, stamped in --output-dir), or ""

	cfg     *Config
	st      *statestore.Store // nil: no run history
	runner  *run.Runner
	batch   *pipeline.Batch
	history *run.RunHistory // where apply records the run (nil: no history, or diff)
	prog    *progress

	// What the run got to, for the summary: the accounts and their
	// clients, and the run report.
	accounts []pipeline.Account
	clients  []*apiclient.Client
	rep      *run.RunReport
	// unguarded counts the changes to existing plans the store has no
	// history of (classifyPlan).
	unguarded diff.Unguarded
	skip      *skipInvalid // --skip-invalid; nil without
}

// scheduled is the run within its scheduled run: it builds the
// dependencies (configuration, state store, clients, runner), reads the
// inputs, and hands over to a saved change set's apply, dryRun or
// pipelined.
func (a *applyRun) scheduled(ctx context.Context) error {
	f, opts, sched := a.f, a.opts, a.sched
	log := f.Logger()
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Plans: true})
	if err != nil {
		return err
	}
	a.cfg = cfg
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	if opts.Report != "" {
		a.reportPath = sched.outputPath(opts.Report)
	}
	if dir := reportInInputFolder(a.reportPath, opts.Args); dir != "" {
		log.Warn(fmt.Sprintf("the report %s is written inside the input folder %s: the next run over that folder will read it as a workbook; write it elsewhere",
			a.reportPath, dir))
	}
	log.Debug("configuration", zap.Stringer("config", cfg))
	st, err := openState(ctx, f, cfg, &opts.State, statestore.Options{LockWait: opts.Schedule.LockWait, Writers: opts.Concurrency}, opts.DryRun)
	if err != nil {
		return err
	}
	if st != nil {
		a.st = st
		defer st.Close()
	}
	if path, ok := savedChangeSetArg(opts); ok {
		return runApplySaved(ctx, a, path)
	}
	if err := checkServiceHistory(ctx, st, cfg, sched); err != nil {
		return err
	}
	named := make([]pipeline.Account, len(cfg.Accounts))
	for i, c := range cfg.Accounts {
		named[i] = pipeline.Account{Name: c.Name, CompanyID: c.CompanyID}
	}
	accounts, finder, clients, err := connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	a.accounts, a.clients = accounts, clients
	a.prog = newProgress(f, log)
	ropts := run.RunOptions{
		Concurrency:   opts.Concurrency,
		Diff:          diff.DiffOptions{RecreateOnDateChange: opts.RecreateOnDateChange},
		NoRecalc:      opts.NoRecalc,
		RecalcWait:    noWaitIfZero(opts.RecalcWait),
		RecalcBackoff: opts.RecalcBackoff,
		Now:           f.Now,
		Observer:      a.prog,
		CheckServed:   f.CatalogPath == "",
		CountsOnly:    opts.Report == "",
	}
	if st != nil && !opts.DryRun {
		a.history = &run.RunHistory{Store: st, Run: runRecord(cfg, a.started)}
		ropts.History = a.history
		ropts.CheckLock = storeLockCheck(st, cfg)
	}
	a.runner = run.NewRunner(accounts, finder, ropts)
	if opts.SkipInvalid {
		a.skip = newSkipInvalid(f, opts, sched)
	}
	batch, cat, err := readInputsFor(f, opts.Args, named, true, true, func() *pipeline.Catalog {
		c, _ := a.runner.ServiceCatalog(ctx)
		return c
	}, a.skip)
	if err != nil {
		return err
	}
	a.batch = batch
	if a.history != nil {
		// The runner (built first: reading the inputs may need the
		// service's catalog) records the files read, with their digests.
		a.history.Run.Files = inputFiles(batch.Files)
	}
	if len(batch.Plans) == 0 {
		// Valid input without a plan (warnings were printed): nothing to
		// compare, nothing is sent, and the run succeeds.
		log.Warn("the input describes no plan: nothing to do")
	}
	if len(cfg.Accounts) == 1 && !cfg.Lookup.Configured() {
		for _, p := range batch.Plans {
			if !p.Company.IsZero() {
				log.Warn("the company columns are not checked: no company lookup is configured (set " + envLookupURL + ")")
				break
			}
		}
	}

	a.prog.attach(a.runner)

	log.Info("reading the service's plans", zap.Int("plans_in_files", len(batch.Plans)), zap.Int("accounts", len(accounts)))
	if !opts.DryRun {
		return a.pipelined(ctx)
	}
	return a.dryRun(ctx, cat)
}

// dryRun is diff (apply --dry-run): every plan is compared and classified,
// the change set printed (and saved with -o), and nothing is written.
// cat is the catalog the inputs were read with (nil: the built-in one).
func (a *applyRun) dryRun(ctx context.Context, cat *pipeline.Catalog) error {
	f, opts, runner, batch := a.f, a.opts, a.runner, a.batch
	cs, planErr := runner.Plan(ctx, batch.Plans)
	if planErr == nil {
		if err := checkServedCatalog(ctx, f, runner, batch); err != nil {
			return err
		}
	}
	var (
		held []diff.HeldChange
		err  error
	)
	if planErr == nil {
		if held, err = classify(ctx, a.st, a.cfg, cs, &opts.State); err != nil {
			return err
		}
	}
	warnChangeSet(f.Logger(), a.sched, cs, a.accounts, true)
	if planErr == nil {
		for _, w := range runner.ScorecardProblems(ctx, cs) {
			a.sched.warn(w)
		}
	}
	if planErr == nil {
		a.sched.couldNotCompare(cs.Summary().Failed)
		if err := renderChangeSet(f, cs, opts); err != nil {
			return err
		}
		if err := diff.WriteHeld(textOut(f, opts.JSON), held, opts.State.Overwrite, true); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		if opts.State.Output != "" {
			if err := writeSavedChangeSet(f, a.cfg, batch, cs, cat, opts.State.Output, opts.State.signer); err != nil {
				return err
			}
		}
	}
	rep := runner.DryRun(cs, a.started)
	rep.Fatal = runner.Fatal()
	rep.Interrupted = ctx.Err() != nil
	a.rep = rep
	if err := writeRunReport(f, a.sched, a.reportPath, opts.Report, rep); err != nil {
		return err
	}
	if err := writeJSONOut(f, opts.JSON, func(w io.Writer) error { return reports.EncodeRunReportJSON(w, rep) }); err != nil {
		return err
	}
	if timedOut(ctx) {
		return maxDurationError(opts.Schedule.MaxDuration, a.reportPath)
	}
	if planErr != nil {
		return exitf(ExitFatal, "could not compare the files with the service: %v", stopCause(planErr, runner))
	}
	if cs.HasChanges() || cs.HasFailures() || len(held) > 0 {
		return silentExit(ExitDiff)
	}
	return nil
}

// warnChangeSet logs the warnings a compared change set carries: plans
// to create beside a plan of the same name, each plan's notes (with
// notes; apply's summary lists them instead), and companies not checked.
func warnChangeSet(log *zap.Logger, sched *scheduledRun, cs *diff.ChangeSet, accounts []pipeline.Account, notes bool) {
	for _, w := range cs.SameNameOtherStart() {
		log.Warn(w)
	}
	for _, d := range cs.Plans {
		if !notes {
			break
		}
		for _, n := range d.Notes {
			log.Warn(n)
		}
	}
	for _, w := range diff.UncheckedCompanies(cs, accounts) {
		sched.warn(w)
	}
}

// warnRunNotes logs each note on the run as a whole (its end not
// recorded in the state store) as a warning, also counted in the summary
// line; the printed summary and the run report carry them too.
func warnRunNotes(sched *scheduledRun, rep *run.RunReport) {
	for _, n := range rep.Notes {
		sched.warn(n)
	}
}

// pipelined is apply proper: each plan is read, compared, classified
// against the state store and written in turn (Runner.PlanApply), the
// first writes going out while later plans are still read. Before any
// write: the accounts are locked in a PostgreSQL store (before their plans
// are listed and read, so each is read under the lock), and the runner
// checks the served catalog and records the run. On a terminal each plan
// is shown as it is written.
func (a *applyRun) pipelined(ctx context.Context) error {
	f, opts, sched, st, runner, batch, prog := a.f, a.opts, a.sched, a.st, a.runner, a.batch, a.prog
	var unlock func()
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	hooks := run.ApplyHooks{
		Classify: a.classifyPlan(holdBack(st, a.cfg, opts.State.Overwrite).Plan),
		LockLocal: func(ctx context.Context, accounts []string) error {
			if err := lockAccounts(ctx, f, opts, sched, a.cfg, accounts); err != nil {
				return err
			}
			// Again under the lock: a run that held it may have recorded
			// the key pairs' history under its address meanwhile.
			return checkServiceHistory(ctx, st, a.cfg, nil)
		},
	}
	if st != nil && st.Postgres() {
		hooks.Lock = func(ctx context.Context, names []string) error {
			u, err := lockStoreNames(ctx, st, a.cfg, names, opts.Schedule.LockWait)
			unlock = u
			if err != nil {
				return err
			}
			return checkServiceHistory(ctx, st, a.cfg, nil) // another host may have held the lock
		}
	}
	show := !opts.Quiet && f.IO.ErrTTY
	if show {
		prog.showPlans(opts.ShowUnchanged)
	}
	prog.startAll(ctx, len(batch.Plans))
	cs, rep, held, err := runner.PlanApply(ctx, batch.Plans, a.started, hooks)
	prog.stop()
	if err != nil {
		return a.stoppedBeforeWrites(err)
	}
	a.rep = rep
	if st != nil {
		if n := a.unguarded.Note(st.Where()); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	if a.skip != nil {
		rep.Rejected = len(a.skip.rej.Plans)
	}
	warnChangeSet(f.Logger(), sched, cs, a.accounts, false)
	warnRunNotes(sched, rep)
	if show {
		fmt.Fprintf(f.IO.ErrOut, "Compared: %s (%s).\n", cs.Summary(), appliedCountersHint(f, opts))
	}
	if err := rep.WriteSummary(f.IO.ErrOut); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	if line := a.skip.rejectedLine(); line != "" {
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	if err := diff.WriteHeld(f.IO.ErrOut, held, opts.State.Overwrite, false); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	if err := writeRunReport(f, sched, a.reportPath, opts.Report, rep); err != nil {
		return err
	}
	switch {
	case timedOut(ctx):
		return maxDurationError(opts.Schedule.MaxDuration, a.reportPath)
	case rep.Fatal != nil:
		if errors.As(rep.Fatal, new(*pipeline.StoreLockLostError)) {
			sched.setOutcome("lock_lost")
		}
		return causedExit(ExitFatal, fmt.Errorf("the run stopped after a fatal error: %w", rep.Fatal))
	case rep.Interrupted:
		return causedExit(ExitFatal, errInterrupted)
	case !rep.OK():
		return silentExit(ExitDiff)
	case len(held) > 0 && !opts.State.Overwrite:
		return silentExit(ExitDiff)
	case a.skip != nil && !a.skip.rej.Empty():
		return silentExit(ExitDiff)
	}
	return nil
}

// classifyPlan is the run's classification of each plan (classify) that
// also counts the changes to plans already on the service that the state
// store has no history of (pipeline.Unguarded): the first such plan is
// warned of before its writes, and the run's note counts them all.
// Without a store (--no-state, which warns of it) nothing is counted.
func (a *applyRun) classifyPlan(classify func(context.Context, *diff.PlanDiff) ([]diff.HeldChange, error)) func(context.Context, *diff.PlanDiff) ([]diff.HeldChange, error) {
	if a.st == nil {
		return classify
	}
	return func(ctx context.Context, d *diff.PlanDiff) ([]diff.HeldChange, error) {
		held, err := classify(ctx, d)
		if err == nil {
			if w := a.unguarded.Add(d, a.st.Where()); w != "" {
				a.sched.warn(w)
			}
		}
		return held, err
	}
}

// stoppedBeforeWrites is the command's error for err, which stopped
// PlanApply before any write: a counter the service lacks (exit 2), the
// run's record failing (recordFailed), or a lock hook's (already the
// command's).
func (a *applyRun) stoppedBeforeWrites(err error) error {
	var served *run.ServedCatalogError
	var record *run.RecordError
	switch {
	case errors.As(err, &served):
		return servedCatalogError(a.f, a.batch, served)
	case errors.As(err, &record):
		return recordFailed(record)
	}
	return err
}

// recordFailed is the command's error for the run's record failing
// before anything was sent (the workbook's run and a saved set's): exit
// 2 when a run through another address of the service recorded the key
// pairs' address meanwhile (statestore.KeyServiceError: the address is
// the configuration's to declare), else exit 3.
func recordFailed(record *run.RecordError) error {
	var keys *statestore.KeyServiceError
	if errors.As(record.Err, &keys) {
		return exitf(ExitInvalid, "%v; nothing was sent", keys)
	}
	return exitf(ExitFatal, "%v; nothing was sent", record.Err)
}

// envLockDir overrides the folder of the account locks.
const envLockDir = "EEPIPE_LOCK_DIR"

// checkLockDir refuses (exit 2) a lock folder, given with --lock-dir or
// EEPIPE_LOCK_DIR, inside a folder that does not exist, as an output
// file's (refuseMissingFolder): locks taken in a mistyped folder would
// not stop a run that locks the right one. The folder itself is created
// when missing, as the default one. A dry run takes no lock.
func checkLockDir(f *Factory, opts *applyOptions) error {
	if opts.DryRun || opts.Locker != nil {
		return nil
	}
	from, dir := "--lock-dir", opts.LockDir
	if dir == "" {
		from, dir = envLockDir, f.Getenv(envLockDir)
	}
	if dir == "" {
		return nil
	}
	return refuseMissingFolder(from, filepath.Clean(dir), "")
}

// lockAccounts takes the lock of the configured accounts named in only
// (none: every configured account; run.AccountLocks.Local keys them)
// for the rest of the run: --lock-dir, EEPIPE_LOCK_DIR, or the user's
// state folder, unless opts.Locker is set.
func lockAccounts(ctx context.Context, f *Factory, opts *applyOptions, sched *scheduledRun, cfg *Config, only []string) error {
	locker := opts.Locker
	if locker == nil {
		dir := first(opts.LockDir, f.Getenv(envLockDir))
		if dir == "" {
			d, err := filelock.DefaultDir(f.Getenv)
			if err != nil {
				return exitf(ExitFatal, "%v", err)
			}
			dir = d
		}
		locker = filelock.Dir{Path: dir}
	}
	err := sched.lockAccounts(ctx, locker, accountLocks(cfg).Local(only))
	var held *pipeline.LockHeldError
	if err != nil && opts.Locker == nil && ctx.Err() == nil && !errors.As(err, &held) && sched.outcome != "locked" {
		return exitf(ExitFatal, "%v; give a lock folder you can write with --lock-dir or %s", err, envLockDir)
	}
	return err
}

// reportInInputFolder returns the input folder that a CSV or XLSX report
// would be written into (and so read back as input by the next run over
// that folder), or "".
func reportInInputFolder(report string, args []string) string {
	if ext := strings.ToLower(filepath.Ext(report)); report == "" || ext == ".json" {
		return ""
	}
	abs, err := filepath.Abs(report)
	if err != nil {
		return ""
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			continue
		}
		dir, err := filepath.Abs(a)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return a
		}
	}
	return ""
}

// noWaitIfZero maps --recalc-wait 0 to "do not wait" (one attempt); in
// run.RunOptions a zero RecalcWait means the default.
func noWaitIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return time.Nanosecond
	}
	return d
}

// stopCause returns the fatal error behind a stopped run, or err.
func stopCause(err error, r *run.Runner) error {
	if f := r.Fatal(); f != nil {
		return f
	}
	return err
}

// renderChangeSet prints what diff (apply --dry-run) would change on
// stdout: a summary per plan (its fields, and its counters counted), and
// with -v every counter, old -> new. A summary that leaves counters out
// says where they are.
// countersHint ends a brief change set: where its counters are.
const countersHint = "Counters are counted, not listed: -v lists each one (old -> new); --report FILE (.xlsx, .csv or .json) writes them all."

func renderChangeSet(f *Factory, cs *diff.ChangeSet, opts *applyOptions) error {
	if opts.JSON {
		return nil
	}
	brief := !f.Verbose && !opts.Counters
	if err := cs.Render(f.IO.Out, diff.RenderOptions{Unchanged: opts.ShowUnchanged, Brief: brief}); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	if brief && cs.HasChanges() {
		if _, err := fmt.Fprintln(f.IO.Out, countersHint); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	}
	if n := cs.Summary().Failed; n > 0 {
		if _, err := fmt.Fprintf(f.IO.Out, "%s could not be compared (the reasons are above): fix %s and run diff again (exit 1).\n", pipeline.Plural(n, "plan"), pipeline.PluralNoun(n, "it", "them")); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
	}
	return nil
}

// writeRunReport writes the run report to path (the --report name base,
// stamped in --output-dir) and records it for the summary and --keep.
func writeRunReport(f *Factory, sched *scheduledRun, path, base string, rep *run.RunReport) error {
	if path == "" {
		return nil
	}
	if err := reports.WriteRunReport(path, rep); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	sched.wrote(path, base)
	fmt.Fprintf(f.IO.ErrOut, "Run report written to %s\n", path)
	return nil
}

// appliedCountersHint ends apply's Compared line on a terminal: where the
// counters the plans above only count are listed.
func appliedCountersHint(f *Factory, opts *applyOptions) string {
	switch {
	case opts.Report != "":
		return "the run report lists every counter"
	case f.Verbose:
		return "eepipe diff -v lists every change"
	}
	return "apply -v lists each plan's counters, --report FILE every counter"
}

// maxDurationError is the error of an apply stopped by --max-duration.
func maxDurationError(d time.Duration, report string) error {
	msg := fmt.Sprintf("stopped after --max-duration %s: no new request was started after that; plans not reached were not applied", d)
	if report != "" {
		msg += " (the run report " + report + " lists them)"
	}
	return exitf(ExitFatal, "%s", msg)
}

func warnKeyExpiry(log *zap.Logger, clients []*apiclient.Client) {
	for _, c := range clients {
		if exp, in, ok := c.KeyExpiry(); ok {
			log.Warn("an API key expires soon; ask for a new key pair", zap.String("expires", exp), zap.String("expires_in", in))
		}
	}
}

func summaryFields(rep *run.RunReport) []zap.Field {
	s := rep.Summary()
	prefilled, _ := rep.AlreadyHeld()
	return []zap.Field{
		zap.Int("counters_already_held", rep.CountersHeld), // as history counts them (pipeline.TargetWrite.Held)
		zap.Int("counters_prefilled", prefilled),           // of the counters counted to change, held by the created plans (prefill)
		zap.Int("plans_created", s.PlansCreated), zap.Int("plans_updated", s.PlansUpdated),
		zap.Int("plans_recreated", s.PlansRecreated), zap.Int("plans_unchanged", s.PlansUnchanged),
		zap.Int("plans_failed", s.PlansFailed), zap.Int("plans_not_applied", s.PlansNotApplied), zap.Int("plans_rejected", s.PlansRejected),
		zap.Int("targets_patched", s.TargetsPatched), zap.Int("counters_changed", s.CountersChanged),
		zap.Int64("requests", s.Requests), zap.Int64("writes", s.Writes),
		zap.Int("recalculations_accepted", s.RecalcsAccepted), zap.Int("recalculations_failed", s.RecalcsFailed),
	}
}
