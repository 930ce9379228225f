package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"

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
func setKeys(cfg *Config) pipeline.SetKeys {
	keys := pipeline.SetKeys{}
	for _, a := range cfg.Accounts {
		keys[a.Name] = pipeline.NewSetKey(a.Name, a.CompanyID, a.APIKey, a.APISecret)
	}
	return keys
}

// writeSavedChangeSet writes the change set of diff -o, signed with the
// key pairs of its accounts. cat is the catalog the input was read with
// (nil: the built-in one).
func writeSavedChangeSet(f *Factory, cfg *Config, batch *pipeline.Batch, cs *pipeline.ChangeSet, cat *pipeline.Catalog, path string) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	s, err := pipeline.SaveChangeSet(cs, serviceKey(cfg), inputFiles(batch.Files), f.Now(), cat, setKeys(cfg))
	if err != nil {
		return exitf(ExitDiff, "%v", err)
	}
	if err := reports.WriteChangeSet(path, s); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "Change set written to %s (signed for %s); apply it with: eepipe apply %s\n",
		path, strings.Join(s.Accounts, ", "), path)
	return nil
}

// runApplySaved applies a saved change set exactly, or nothing: the
// signature must hold, the set must not have been applied before, and
// every target must still hold the service value it was computed against.
// The set is read in passes, each holding one plan at a time per worker
// (README "Saved change sets", "Memory"): one to verify and check it, one
// for the drift check, one to write; a file that changes between them
// stops the run (exit 3).
func runApplySaved(ctx context.Context, f *Factory, opts *applyOptions, run *scheduledRun, cfg *Config, st *statestore.Store, path string,
	started time.Time, accountsOut *[]pipeline.Account, clientsOut *[]*apiclient.Client, repOut **pipeline.RunReport) error {
	log := f.Logger()
	if opts.State.Output != "" {
		return exitf(ExitInvalid, "%s is a saved change set: -o writes a change set computed from workbooks", path)
	}
	cat := pipeline.DefaultCatalog()
	if f.CatalogPath != "" {
		var err error
		if cat, err = pipeline.LoadCatalog(f.CatalogPath); err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
	}
	file := &reports.ChangeSetFile{Path: path}
	set, checkErr, err := pipeline.OpenSaved(file.Read, cat)
	if err != nil {
		return exitf(ExitInvalid, "%v", err)
	}
	s := set.Header
	if pipeline.ServiceKey(s.Service) != serviceKey(cfg) {
		return exitf(ExitInvalid, "the change set %s was computed against %s, but this run talks to %s; nothing was sent", path, s.Service, cfg.BaseURL)
	}
	// Bound to the accounts' companies and key pairs, signed with them,
	// every value as a workbook cell's: else refused before anything is
	// sent (docs/apply-and-state.md, "Saved change sets").
	if err := set.Verify(cfg.BaseURL, setKeys(cfg)); err != nil {
		return exitf(ExitInvalid, "%s: %v", path, err)
	}
	if checkErr != nil && f.CatalogPath != "" {
		return exitf(ExitInvalid, "%s: %v", path, checkErr)
	}
	// setErr turns an error of a pass over the file into the command's.
	setErr := func(err error) error {
		if errors.Is(err, pipeline.ErrSetChanged) {
			return exitf(ExitFatal, "%v", err)
		}
		if se := new(pipeline.SavedSetError); errors.As(err, &se) {
			return exitf(ExitInvalid, "%s: %v", path, err)
		}
		return nil
	}
	var prog pipeline.SavedProgress
	if st != nil {
		prev, err := st.ChangeSetRun(ctx, s.Signature)
		if err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		if prev != nil {
			return exitf(ExitDiff, "%v; nothing was sent", &statestore.ChangeSetAppliedError{Run: *prev})
		}
	} else {
		log.Warn("--no-state: eepipe cannot tell whether this change set was applied before, nor resume one applied in part (the drift check still runs)")
	}
	accounts, finder, clients, err := connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	*accountsOut, *clientsOut = accounts, clients
	journal := &runJournal{}
	ropts := pipeline.RunOptions{
		Concurrency: opts.Concurrency, NoRecalc: opts.NoRecalc, RecalcWait: noWaitIfZero(opts.RecalcWait),
		RecalcBackoff: opts.RecalcBackoff, Now: f.Now,
	}
	if st != nil {
		ropts.Journal = journal
		ropts.CheckLock = storeLockCheck(st, cfg)
	}
	runner := pipeline.NewRunner(accounts, finder, ropts)
	if checkErr != nil {
		// Counters the built-in catalog lacks: the service's catalog may
		// have them, as for a workbook.
		if served, _ := runner.ServiceCatalog(ctx); served != nil && !served.Equal(cat) {
			checkErr = set.CheckAgain(served)
			if e := setErr(checkErr); e != nil {
				return e
			}
		}
		if checkErr != nil {
			return exitf(ExitInvalid, "%s: %v", path, checkErr)
		}
	}
	if !opts.DryRun {
		// The accounts' local lock, as for a workbook: one apply per
		// account at a time on this machine.
		if err := lockAccounts(ctx, f, opts, run, cfg, s.Accounts); err != nil {
			return err
		}
	}
	if st != nil && st.Postgres() && !opts.DryRun {
		unlock, err := lockStoreNames(ctx, st, cfg, append([]string(nil), s.Accounts...), opts.Schedule.LockWait)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if st != nil && !opts.DryRun {
		// Again under the locks: a run of the same change set that held
		// them (while this one waited) has applied it.
		prev, err := st.ChangeSetRun(ctx, s.Signature)
		if err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		if prev != nil {
			return exitf(ExitDiff, "%v; nothing was sent", &statestore.ChangeSetAppliedError{Run: *prev})
		}
	}
	if st != nil {
		// What earlier runs of the set wrote: the set resumes from there.
		if prog, err = st.ChangeSetProgress(ctx, s.Signature); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		if prog.Resumed() {
			log.Info("resuming a change set applied in part", zap.Int64s("earlier_runs", prog.Runs))
		}
	}
	// The drift check: the set read again, every plan compared with the
	// service; nothing is written unless none drifted.
	chk, err := runner.CheckSaved(ctx, set, &prog)
	if err != nil {
		if ee := new(ExitError); errors.As(err, &ee) {
			return err
		}
		if e := setErr(err); e != nil {
			return e
		}
		if ctx.Err() != nil {
			// Interrupted during the check: nothing was sent; the run
			// report says so, as any interrupted run's.
			rep := runner.SavedNotApplied(ctx, set, started)
			*repOut = rep
			if opts.Report != "" {
				if err := writeRunReport(f, run, run.outputPath(opts.Report), opts.Report, rep); err != nil {
					return err
				}
			}
		}
		cause := stopCause(err, runner)
		if errors.As(cause, new(*pipeline.StoreLockLostError)) {
			run.setOutcome("lock_lost")
		}
		return exitf(ExitFatal, "checking the change set against the service: %v", cause)
	}
	if chk.Total > 0 {
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
		return exitf(ExitDiff, "%s", b.String())
	}
	if opts.DryRun {
		// diff changes.json, apply --dry-run changes.json: what it would
		// write, nothing sent, nothing recorded.
		rep, sum, err := runner.DryRunSaved(ctx, set, chk, &prog, started, f.IO.Out, pipeline.RenderOptions{Unchanged: opts.ShowUnchanged, Brief: !f.Verbose && !opts.Counters})
		if err != nil {
			if e := setErr(err); e != nil {
				return e
			}
			return exitf(ExitFatal, "%v", stopCause(err, runner))
		}
		*repOut = rep
		if opts.Report != "" {
			if err := writeRunReport(f, run, run.outputPath(opts.Report), opts.Report, rep); err != nil {
				return err
			}
		}
		if sum.Create+sum.Update+sum.Recreate > 0 {
			if !f.Verbose && !opts.Counters {
				fmt.Fprintln(f.IO.Out, countersHint)
			}
			return silentExit(ExitDiff)
		}
		return nil
	}
	var show func(*pipeline.PlanDiff)
	if !opts.Quiet && f.IO.ErrTTY {
		// Each plan is shown as it is written: the set is not held whole.
		fmt.Fprintf(f.IO.ErrOut, "The change set passed the drift check: %s of %d to write.\n", pipeline.Plural(chk.Changes, "plan"), set.Len())
		show = func(d *pipeline.PlanDiff) {
			pipeline.RenderPlan(f.IO.ErrOut, d, pipeline.RenderOptions{MaxCounters: 12})
		}
	}
	if st != nil {
		accts := slices.Sorted(slices.Values(s.Accounts))
		runID, err := beginRun(ctx, st, journal, cfg, accts, []pipeline.InputFile{{Path: path, SHA256: file.SHA256}}, s.Signature, started)
		switch {
		case err == nil:
			defer func() { st.FinishRun(context.WithoutCancel(ctx), runID, runStatus(*repOut), f.Now()) }()
		case ctx.Err() == nil:
			return err
		}
		// Interrupted before the run was recorded: the run below sends
		// nothing (it is stopped) and its report says so, as any
		// interrupted run's.
	}
	rep, changedErr := runner.ApplySaved(ctx, set, chk, &prog, started, show)
	*repOut = rep
	if err := rep.WriteSummary(f.IO.ErrOut); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	reportPath := ""
	if opts.Report != "" {
		reportPath = run.outputPath(opts.Report)
	}
	if err := writeRunReport(f, run, reportPath, opts.Report, rep); err != nil {
		return err
	}
	switch {
	case changedErr != nil:
		if e := setErr(changedErr); e != nil {
			return e
		}
		return exitf(ExitFatal, "%v", changedErr)
	case timedOut(ctx):
		return maxDurationError(opts.Schedule.MaxDuration, reportPath)
	case rep.Fatal != nil:
		if errors.As(rep.Fatal, new(*pipeline.StoreLockLostError)) {
			run.setOutcome("lock_lost") // as a workbook apply's
		}
		return silentExit(ExitFatal)
	case rep.Interrupted:
		return silentExit(ExitFatal)
	case !rep.OK():
		return silentExit(ExitDiff)
	}
	return nil
}
