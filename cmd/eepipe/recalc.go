package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/spf13/cobra"
)

// recalcOptions are the options of `eepipe recalc`.
type recalcOptions struct {
	Args          []string // scorecard ids
	Account       string
	RecalcWait    time.Duration
	Conn          connFlags
	HTTPClient    *http.Client  // tests
	RecalcBackoff time.Duration // tests
}

// NewCmdRecalc returns `eepipe recalc`. runF replaces the command's run function in tests.
func NewCmdRecalc(f *Factory, runF func(*recalcOptions) error) *cobra.Command {
	opts := &recalcOptions{}
	cmd := &cobra.Command{
		Use:   "recalc SCORECARD_ID...",
		Short: "Recalculate scorecards, waiting through a recalculation that is already running",
		Long: `Ask the service to recalculate each scorecard's totals, concurrently. When a
recalculation of a scorecard is already running the service answers 409;
eepipe then waits with a capped backoff and asks again, until the request is
accepted or --recalc-wait runs out (a large recalculation can take up to an
hour). apply does the same for the scorecards linked to the plans it changed.

With several accounts configured, each scorecard's account is found by
asking every account for it (one GET each); --account names the account
instead, for all of them.

Exit status: 0 all accepted, 1 some failed, 2 invalid usage or
configuration, 3 fatal.`,
		Example: `  eepipe recalc scorecard_acme_2025
  eepipe --config eepipe.yaml recalc --account bluecrane scorecard_bluecrane_2025 --recalc-wait 10m`,
		Args: needsInputs("scorecard id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return runRecalc(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Account, "account", "", "the configured account that owns the scorecards (default: found with one GET per account)")
	fl.DurationVar(&opts.RecalcWait, "recalc-wait", run.DefaultRecalcWait, "how long to wait for a running recalculation (409) before giving up")
	opts.Conn.register(cmd)
	_ = cmd.Flags().MarkHidden("lookup-url") // not used by this command
	return cmd
}

func runRecalc(cmd *cobra.Command, f *Factory, opts *recalcOptions) error {
	if err := checkRecalcOptions(opts); err != nil {
		return err
	}
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Plans: true})
	if err != nil {
		return err
	}
	log := f.Logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	account, err := recalcAccount(cfg, opts.Account)
	if err != nil {
		return err
	}
	cfg.Lookup = LookupConfig{} // recalc needs no lookup
	accounts, _, clients, err := connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	reqs, unowned, err := run.RecalcRequests(cmd.Context(), accounts, account, opts.Args)
	switch {
	case errors.Is(err, run.ErrScorecardOwner):
		return exitf(ExitInvalid, "%s", strings.TrimSuffix(err.Error(), ": "+run.ErrScorecardOwner.Error()))
	case err != nil:
		return exitf(ExitFatal, "%v", err)
	}
	if account == "" {
		for _, q := range reqs {
			log.Debug("scorecard owner found: " + q.ScorecardID + " on account " + q.Account)
		}
	}
	runner := run.NewRunner(accounts, nil, run.RunOptions{RecalcWait: noWaitIfZero(opts.RecalcWait), RecalcBackoff: opts.RecalcBackoff,
		Now: f.Now, Observer: newProgress(f, log)})
	failed := len(unowned)
	for _, u := range unowned {
		fmt.Fprintf(f.IO.Out, "%s: not recalculated: %v\n", u.ScorecardID, u.Err)
	}
	if len(reqs) == 0 {
		// Every scorecard's owner was refused: nothing can be done.
		warnKeyExpiry(log, clients)
		return silentExit(ExitFatal)
	}
	results := runner.Recalc(cmd.Context(), reqs)
	warnKeyExpiry(log, clients)
	failed += printRecalcResults(f, results)
	switch {
	case runner.Fatal() != nil:
		return causedExit(ExitFatal, runner.Fatal())
	case cmd.Context().Err() != nil:
		return causedExit(ExitFatal, errors.New("interrupted"))
	case failed > 0:
		return silentExit(ExitDiff)
	}
	return nil
}

// checkRecalcOptions validates the arguments and flags before anything
// else.
func checkRecalcOptions(opts *recalcOptions) error {
	for _, id := range opts.Args {
		if !strings.HasPrefix(id, "scorecard_") {
			return exitf(ExitInvalid, "%q is not a scorecard id (scorecard ids start with scorecard_)", id)
		}
	}
	if opts.RecalcWait < 0 {
		return exitf(ExitInvalid, "--recalc-wait must not be negative")
	}
	return nil
}

// recalcAccount is the account every scorecard is recalculated on
// (--account, in its configured spelling, or the only account), or ""
// when each scorecard's account is to be found.
func recalcAccount(cfg *Config, account string) (string, error) {
	if account == "" && len(cfg.Accounts) == 1 {
		account = cfg.Accounts[0].Name
	}
	if account == "" {
		return "", nil
	}
	found := false
	for _, a := range cfg.Accounts {
		if pipeline.SameAccount(a.Name, account) {
			found, account = true, a.Name // the configured spelling
		}
	}
	if !found {
		return "", exitf(ExitInvalid, "--account %s is not a configured account", account)
	}
	return account, nil
}

// printRecalcResults prints each recalculation's outcome and returns how
// many failed.
func printRecalcResults(f *Factory, results []*run.RecalcResult) (failed int) {
	for _, r := range results {
		if r.Accepted {
			extra := ""
			if r.Attempts > 1 {
				extra = fmt.Sprintf(" (after waiting %s for a running recalculation)", r.Waited.Round(time.Second))
			}
			fmt.Fprintf(f.IO.Out, "%s: recalculation accepted%s\n", r.ScorecardID, extra)
			continue
		}
		failed++
		fmt.Fprintf(f.IO.Out, "%s: %v\n", r.ScorecardID, r.Err)
	}
	return failed
}
