package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/pipeline/run"
)

// scorecardsOptions are the options of `eepipe scorecards`.
type scorecardsOptions struct {
	Account    string
	JSON       bool
	Conn       connFlags
	HTTPClient *http.Client // tests
}

// NewCmdScorecards returns `eepipe scorecards`. runF replaces the command's run function in tests.
func NewCmdScorecards(f *Factory, runF func(*scorecardsOptions) error) *cobra.Command {
	opts := &scorecardsOptions{}
	cmd := &cobra.Command{
		Use:   "scorecards [--account NAME]",
		Short: "List each configured account's scorecards: the ids a plan's scorecard_id names",
		Long: `List the scorecards of every configured account (--account: of one), one
request per account: id, description, period, charter and province. A plan
pre-fills its counters from the scorecard its scorecard_id names, which must
be one of its own account's. Nothing is written.

Prints a table on stdout, or with --json the accounts and their scorecards
as JSON. An account whose key pair is refused is named on stderr and the
others are listed. Exit status: 0 listed, 1 some account's key pair was
refused, 2 invalid usage or configuration, 3 fatal (the service did not
answer, every key pair refused).`,
		Example: `  eepipe scorecards
  eepipe --config eepipe.yaml scorecards --account bluecrane
  eepipe scorecards --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runScorecards(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Account, "account", "", "list only this configured account's scorecards")
	addJSONFlag(cmd, &opts.JSON)
	fl.StringVar(&opts.Conn.BaseURL, "base-url", "", "service base URL (overrides "+envBaseURL+" and base_url)")
	return cmd
}

func runScorecards(ctx context.Context, f *Factory, opts *scorecardsOptions) error {
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Plans: true})
	if err != nil {
		return err
	}
	log := f.Logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	if opts.Account != "" {
		name, err := recalcAccount(cfg, opts.Account)
		if err != nil {
			return err
		}
		for _, a := range cfg.Accounts {
			if a.Name == name {
				cfg.Accounts = []AccountConfig{a}
				break
			}
		}
	}
	accounts, _, _, err := connect(cfg, log, opts.HTTPClient)
	if err != nil {
		return err
	}
	runner := run.NewRunner(accounts, nil, run.RunOptions{})
	lists, refused, err := runner.ListScorecards(ctx)
	if err != nil {
		return serviceError(ctx, err)
	}
	if err := writeScorecards(f, opts.JSON, lists); err != nil {
		return err
	}
	for _, l := range lists {
		if l.Refused != "" {
			fmt.Fprintf(f.IO.ErrOut, "eepipe: %s; its scorecards are not listed\n", l.Refused)
		}
	}
	if refused > 0 {
		return silentExit(ExitDiff)
	}
	return nil
}

// writeScorecards prints the accounts' scorecards on stdout: a table, or
// the lists as JSON.
func writeScorecards(f *Factory, asJSON bool, lists []run.AccountScorecards) error {
	if asJSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(lists); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tID\tDESCRIPTION\tPERIOD\tCHARTER\tPROVINCE")
	for _, l := range lists {
		for _, s := range l.Scorecards {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s to %s\t%s\t%s\n", l.Account, s.ID, dash(s.Description), dash(s.StartDate), dash(s.EndDate), dash(s.CharterID), dash(s.Province))
		}
		if len(l.Scorecards) == 0 && l.Refused == "" {
			fmt.Fprintf(tw, "%s\t(no scorecards)\t\t\t\t\n", l.Account)
		}
	}
	if err := tw.Flush(); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	return nil
}
