package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/savedset"

	"github.com/eepipe/eepipe/formats/reports"
	"go.uber.org/zap"
)

// savedChangeSetArg reports whether apply was given one saved change set
// (a .json change set, or a sign-off .xlsx written by diff -o) instead of
// workbooks. Only the workbook's list of sheets is read to tell.
func savedChangeSetArg(opts *applyOptions) (string, bool) {
	if len(opts.Args) != 1 {
		return "", false
	}
	p := opts.Args[0]
	return p, reports.IsChangeSet(p)
}

// setKeys are the change-set signing keys of the configured accounts
// (docs/apply-and-state.md, "Saved change sets": who can sign).
func setKeys(cfg *Config) savedset.SetKeys {
	keys := savedset.SetKeys{}
	for _, a := range cfg.Accounts {
		keys[a.Name] = savedset.NewSetKey(a.Name, a.CompanyID, a.APIKey, a.APISecret)
	}
	return keys
}

// writeSavedChangeSet writes the change set of diff -o, signed with the
// key pairs of its accounts, and signed off with signer's key when there
// is one (--sign-with). cat is the catalog the input was read with (nil:
// the built-in one).
func writeSavedChangeSet(f *Factory, cfg *Config, batch *pipeline.Batch, cs *diff.ChangeSet, cat *pipeline.Catalog, path string, signer *savedset.SignerKey) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	s, err := savedset.SaveChangeSet(cs, serviceKey(cfg), inputFiles(batch.Files), f.Now(), cat, setKeys(cfg))
	if err != nil {
		return exitf(ExitDiff, "%v", err)
	}
	signedOff := ""
	if signer != nil {
		if err := s.SignOff(signer, f.Now()); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		signedOff = ", signed off by " + signer.Name
	}
	if err := reports.WriteChangeSet(path, s); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "Change set written to %s (signed for %s%s); apply it with: eepipe apply %s\n",
		path, strings.Join(s.Accounts, ", "), signedOff, path)
	return nil
}

// runApplySaved applies a saved change set exactly, or nothing: the
// signature must hold, the set must not have been applied before, and
// every target must still hold the service value it was computed against.
// The set is read in passes, each holding one plan at a time per worker
// (README "Saved change sets", "Memory"): one to verify and check it, one
// for the drift check, one to write; a file that changes between them
// stops the run (exit 3). What the run got to (its accounts and clients,
// its report) is left in a.
func runApplySaved(ctx context.Context, a *applyRun, path string) error {
	sr := &savedRun{applyRun: a, path: path}
	checkErr, err := sr.open()
	if err != nil {
		return err
	}
	// The protocol's order is run.SavedSetRun's; the command gives it its
	// world: the service address's check (after the set's own check of
	// the service it is bound to, which names the set), the clients, the
	// catalog and the locks.
	proto := &run.SavedSetRun{
		Set: sr.set, DryRun: sr.opts.DryRun,
		CheckHistory: func(ctx context.Context, again bool) error {
			if again {
				return checkServiceHistory(ctx, sr.st, sr.cfg, nil)
			}
			return checkServiceHistory(ctx, sr.st, sr.cfg, sr.sched)
		},
		Connect: func() (*run.Runner, error) {
			if err := sr.connect(); err != nil {
				return nil, err
			}
			return sr.runner, nil
		},
		CheckCatalog: func(ctx context.Context, _ *run.Runner) error { return sr.checkCatalog(ctx, checkErr) },
		Lock:         sr.lock,
	}
	if sr.st != nil {
		proto.Store = sr.st
	} else {
		why := "--no-state"
		if !sr.opts.State.NoState {
			why = "no state store" // a dry run, which creates none
		}
		sr.f.Logger().Warn(why + ": eepipe cannot tell whether this change set was applied before, nor resume one applied in part (the drift check still runs)")
	}
	prep, err := proto.Prepare(ctx)
	if err != nil {
		return preparedErr(err)
	}
	defer prep.Unlock()
	sr.earlier = prep.Earlier
	if sr.earlier.Resumed() {
		sr.f.Logger().Info("resuming a change set applied in part", zap.Int64s("earlier_runs", sr.earlier.Runs))
	}
	chk, err := sr.driftCheck(ctx)
	if err != nil {
		return err
	}
	if sr.opts.DryRun {
		return sr.dryRun(ctx, chk)
	}
	return sr.apply(ctx, chk)
}

// savedRun is the apply (or diff) of one saved change set: the apply's
// run, and the set as its passes get to it.
type savedRun struct {
	*applyRun
	path string
	file *reports.ChangeSetFile
	set  *savedset.StreamedSet
	// earlier is what earlier runs of the set wrote (resume).
	earlier pipeline.SavedProgress
	// signer is the name of the listed signer whose sign-off of the set
	// was verified ("" when the configuration lists no signers).
	signer string
}

// open opens and verifies the set: bound to this run's service, to the
// accounts' companies and key pairs, signed with them, every value as a
// workbook cell's: else refused before anything is sent
// (docs/apply-and-state.md, "Saved change sets"). checkErr is the check of
// its counters against the catalog it was read with, for checkCatalog.
func (sr *savedRun) open() (checkErr, err error) {
	f, cfg, path := sr.f, sr.cfg, sr.path
	if sr.opts.State.Output != "" {
		return nil, exitf(ExitInvalid, "%s is a saved change set: -o writes a change set computed from workbooks", path)
	}
	cat := pipeline.DefaultCatalog()
	if f.CatalogPath != "" {
		if cat, err = pipeline.LoadCatalog(f.CatalogPath); err != nil {
			return nil, exitf(ExitInvalid, "%v", err)
		}
	}
	sr.file = &reports.ChangeSetFile{Path: path}
	sr.set, checkErr, err = savedset.OpenSaved(sr.file.Read, cat)
	if err != nil {
		return nil, exitf(ExitInvalid, "%v", err)
	}
	s := sr.set.Header
	if err := sr.set.Verify(cfg.address().History(), setKeys(cfg)); err != nil {
		return nil, exitf(ExitInvalid, "%s: %v", path, err)
	}
	switch {
	case len(cfg.Signers) > 0:
		if sr.signer, err = s.VerifySignOff(cfg.Signers); err != nil {
			return nil, exitf(ExitInvalid, "%s: %v", path, err)
		}
	case s.SignedOff != nil:
		f.Logger().Warn("the change set's sign-off is not checked, nor recorded: the configuration lists no signers",
			zap.String("signed_off_by", s.SignedOff.Signer))
	}
	if checkErr != nil && f.CatalogPath != "" {
		return nil, exitf(ExitInvalid, "%s: %v", path, checkErr)
	}
	return checkErr, nil
}

// setErr turns an error of a pass over the file into the command's, or
// nil when it is not one.
func (sr *savedRun) setErr(err error) error {
	if errors.Is(err, savedset.ErrSetChanged) {
		return exitf(ExitFatal, "%v", err)
	}
	if se := new(savedset.SavedSetError); errors.As(err, &se) {
		return exitf(ExitInvalid, "%s: %v", sr.path, err)
	}
	return nil
}

// preparedErr is the command's error for a saved set's step that
// stopped it before its drift check.
func preparedErr(err error) error {
	if ab := new(run.AppliedBeforeError); errors.As(err, &ab) {
		return exitf(ExitDiff, "%v; nothing was sent", err)
	}
	if se := new(run.StoreError); errors.As(err, &se) {
		return exitf(ExitFatal, "%v", err)
	}
	return err
}

// connect builds the clients and the runner, which records the run in
// the state store (when there is one) and shows each plan as it is
// written on a terminal.
func (sr *savedRun) connect() error {
	f, opts, cfg, st := sr.f, sr.opts, sr.cfg, sr.st
	accounts, finder, clients, err := connect(cfg, f.Logger(), opts.HTTPClient)
	if err != nil {
		return err
	}
	sr.accounts, sr.clients = accounts, clients
	ropts := run.RunOptions{
		Concurrency: opts.Concurrency, NoRecalc: opts.NoRecalc, RecalcWait: noWaitIfZero(opts.RecalcWait),
		RecalcBackoff: opts.RecalcBackoff, Now: f.Now,
	}
	if !opts.Quiet && f.IO.ErrTTY {
		ropts.Observer = savedShow{w: f.IO.ErrOut} // each plan shown as it is written
	}
	if st != nil {
		rec := runRecord(cfg, sr.started)
		rec.Files = []pipeline.InputFile{{Path: sr.path, SHA256: sr.file.SHA256}}
		rec.Signer = sr.signer
		ropts.History = &run.RunHistory{Store: st, Run: rec}
		ropts.CheckLock = storeLockCheck(st, cfg)
	}
	sr.runner = run.NewRunner(accounts, finder, ropts)
	return nil
}

// checkCatalog settles checkErr, the set's counters that the catalog it
// was read with lacks: the service's catalog may have them, as for a
// workbook.
func (sr *savedRun) checkCatalog(ctx context.Context, checkErr error) error {
	if checkErr == nil {
		return nil
	}
	if served, _ := sr.runner.ServiceCatalog(ctx); served != nil && !served.Equal(pipeline.DefaultCatalog()) {
		checkErr = sr.set.CheckAgain(served)
		if e := sr.setErr(checkErr); e != nil {
			return e
		}
	}
	if checkErr != nil {
		return exitf(ExitInvalid, "%s: %v", sr.path, checkErr)
	}
	return nil
}

// lock takes the accounts' local lock, as for a workbook (one apply per
// account at a time on this machine), then a PostgreSQL store's locks
// (run.SavedSetRun checks again under them that the set was not applied).
// unlock releases the store's locks.
func (sr *savedRun) lock(ctx context.Context, accounts []string) (unlock func(), err error) {
	unlock = func() {}
	f, opts, cfg, st := sr.f, sr.opts, sr.cfg, sr.st
	if err := lockAccounts(ctx, f, opts, sr.sched, cfg, accounts); err != nil {
		return unlock, err
	}
	if st != nil && st.Postgres() {
		u, err := lockStoreNames(ctx, st, cfg, accounts, opts.Schedule.LockWait)
		if err != nil {
			return unlock, err
		}
		unlock = u
	}
	return unlock, nil
}

// driftCheck reads the set again and compares every plan with the
// service; nothing is written unless none drifted.
func (sr *savedRun) driftCheck(ctx context.Context) (*run.SavedCheck, error) {
	path, s := sr.path, sr.set.Header
	chk, err := sr.runner.CheckSaved(ctx, sr.set, &sr.earlier)
	if err != nil {
		return nil, sr.checkFailed(ctx, err)
	}
	if chk.Total == 0 {
		return chk, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the service changed since the change set %s was computed (%s); nothing was sent. What drifted:\n",
		path, s.Created.Format("2006-01-02 15:04 UTC"))
	for _, d := range chk.Drifts {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	if more := chk.Total - len(chk.Drifts); more > 0 {
		fmt.Fprintf(&b, "  and %s\n", pipeline.Plural(more, "more drift"))
	}
	b.WriteString("Compute a new change set with eepipe diff -o and have it signed off again.")
	return nil, exitf(ExitDiff, "%s", b.String())
}

// checkFailed is the command's error for a drift check that stopped: an
// interrupted one writes the run report (nothing was sent, as any
// interrupted run's says).
func (sr *savedRun) checkFailed(ctx context.Context, err error) error {
	f, opts, sched, runner := sr.f, sr.opts, sr.sched, sr.runner
	if ee := new(ExitError); errors.As(err, &ee) {
		return err
	}
	if e := sr.setErr(err); e != nil {
		return e
	}
	if ctx.Err() != nil {
		rep := runner.SavedNotApplied(ctx, sr.set, sr.started)
		rep.Signer = sr.signer
		sr.rep = rep
		if opts.Report != "" {
			if err := writeRunReport(f, sched, sched.outputPath(opts.Report), opts.Report, rep); err != nil {
				return err
			}
		}
	}
	cause := stopCause(err, runner)
	if errors.As(cause, new(*pipeline.StoreLockLostError)) {
		sched.setOutcome("lock_lost")
	}
	return exitf(ExitFatal, "checking the change set against the service: %v", cause)
}

// dryRun is diff changes.json (apply --dry-run changes.json): what the
// set would write, nothing sent, nothing recorded.
func (sr *savedRun) dryRun(ctx context.Context, chk *run.SavedCheck) error {
	f, opts, sched, runner := sr.f, sr.opts, sr.sched, sr.runner
	brief := !f.Verbose && !opts.Counters
	rep, sum, err := runner.DryRunSaved(ctx, sr.set, chk, &sr.earlier, sr.started, textOut(f, opts.JSON), diff.RenderOptions{Unchanged: opts.ShowUnchanged, Brief: brief})
	if err != nil {
		if e := sr.setErr(err); e != nil {
			return e
		}
		return exitf(ExitFatal, "%v", stopCause(err, runner))
	}
	rep.Signer = sr.signer
	sr.rep = rep
	if opts.Report != "" {
		if err := writeRunReport(f, sched, sched.outputPath(opts.Report), opts.Report, rep); err != nil {
			return err
		}
	}
	if err := writeJSONOut(f, opts.JSON, func(w io.Writer) error { return reports.EncodeRunReportJSON(w, rep) }); err != nil {
		return err
	}
	if sum.Create+sum.Update+sum.Recreate > 0 {
		if brief {
			fmt.Fprintln(textOut(f, opts.JSON), countersHint)
		}
		return silentExit(ExitDiff)
	}
	return nil
}

// apply writes the set that passed the drift check (the runner records
// the run first; interrupted before it was, the run sends nothing and its
// report says so, as any interrupted run's), then prints the summary,
// writes the run report and maps the outcome to the exit status.
func (sr *savedRun) apply(ctx context.Context, chk *run.SavedCheck) error {
	f, opts, sched := sr.f, sr.opts, sr.sched
	if !opts.Quiet && f.IO.ErrTTY {
		// Each plan is shown as it is written: the set is not held whole.
		fmt.Fprintf(f.IO.ErrOut, "The change set passed the drift check: %s of %d to write.\n", pipeline.Plural(chk.Changes, "plan"), sr.set.Len())
	}
	rep, changedErr := sr.runner.ApplySaved(ctx, sr.set, chk, &sr.earlier, sr.started)
	if re := new(run.RecordError); errors.As(changedErr, &re) {
		return recordFailed(re)
	}
	rep.Signer = sr.signer
	sr.rep = rep
	warnRunNotes(sched, rep)
	if err := rep.WriteSummary(f.IO.ErrOut); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	reportPath := ""
	if opts.Report != "" {
		reportPath = sched.outputPath(opts.Report)
	}
	if err := writeRunReport(f, sched, reportPath, opts.Report, rep); err != nil {
		return err
	}
	switch {
	case changedErr != nil:
		if e := sr.setErr(changedErr); e != nil {
			return e
		}
		return exitf(ExitFatal, "%v", changedErr)
	case timedOut(ctx):
		return maxDurationError(opts.Schedule.MaxDuration, reportPath)
	case rep.Fatal != nil:
		if errors.As(rep.Fatal, new(*pipeline.StoreLockLostError)) {
			sched.setOutcome("lock_lost") // as a workbook apply's
		}
		return causedExit(ExitFatal, fmt.Errorf("the run stopped after a fatal error: %w", rep.Fatal))
	case rep.Interrupted:
		return causedExit(ExitFatal, errInterrupted)
	case !rep.OK():
		return silentExit(ExitDiff)
	}
	return nil
}

// savedShow is the observer of a saved change set's apply on a terminal:
// each plan is shown as it is written.
type savedShow struct{ w io.Writer }

// PlanCompared implements run.Observer.
func (s savedShow) PlanCompared(d *diff.PlanDiff) {
	diff.RenderPlan(s.w, d, diff.RenderOptions{MaxCounters: 12})
}

// PlanDone implements run.Observer.
func (savedShow) PlanDone(*run.PlanResult) {}

// Recalc implements run.Observer.
func (savedShow) Recalc(run.RecalcEvent) {}
