package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// historyOptions are the options of `eepipe history`.
type historyOptions struct {
	PlanID  int64
	Account string
	Since   string
	Counter string
	Report  string
	All     bool
	JSON    bool // --json: the history report on stdout instead of the listing
	State   stateFlags
}

// NewCmdHistory returns `eepipe history`. runF replaces the command's run function in tests.
func NewCmdHistory(f *Factory, runF func(*historyOptions) error) *cobra.Command {
	opts := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the apply runs recorded in the state store and the counters they wrote",
		Long: `List the runs recorded in the state store (every apply that wrote: when, who,
from which host, the command line, the input files with their SHA-256, the
accounts) and, under each run, one line per plan counting the counters it
sent; with -v every counter it sent: the value before and after, the
target and the file. --counter NAME lists every value eepipe
wrote to that counter, when and from which file. Filters combine.

--report FILE writes the runs and every counter recorded (also those the
run left as they were because they already held the file's value, with
sent false) as .json, .csv or .xlsx.

Nothing is sent to the service. Exit status: 0 ok, 2 invalid usage, 3 the
store cannot be read.`,
		Example: `  eepipe history
  eepipe history -v
  eepipe history --account acme --since 2026-11-01
  eepipe history --plan 4711 --counter number_of_african_male_top_managers
  eepipe history --report audit.xlsx`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runHistory(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&opts.PlanID, "plan", 0, "only this plan `ID`")
	fl.StringVar(&opts.Account, "account", "", "only this account `NAME`")
	fl.StringVar(&opts.Since, "since", "", "only from this `DATE` on (2026-11-01, or an RFC 3339 time)")
	fl.StringVar(&opts.Counter, "counter", "", "only this counter `NAME`: every value eepipe wrote to it")
	onceStringVar(fl, &opts.Report, "report", "", "write the runs and counters to `FILE` (.json, .csv or .xlsx)")
	opts.State.registerPath(cmd)
	addVerboseFlag(cmd, f, "every counter each run sent, before -> after")
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runHistory(ctx context.Context, f *Factory, opts *historyOptions) error {
	q, err := historyQuery(opts)
	if err != nil {
		return err
	}
	if err := checkHistoryReport(opts.Report); err != nil {
		return err
	}
	cfg, err := loadConfig(f, connFlags{}, configNeeds{})
	if err != nil {
		return err
	}
	if none, err := noHistory(f, cfg, opts); none || err != nil {
		return err
	}
	st, err := openState(ctx, f, cfg, &opts.State, statestore.Options{}, true)
	if err != nil {
		return err
	}
	defer st.Close()
	h, err := readHistory(ctx, st, q)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSONOut(f, true, func(w io.Writer) error { return reports.EncodeHistoryJSON(w, h) }); err != nil {
			return err
		}
		return writeHistoryReport(f, opts.Report, h)
	}
	var b strings.Builder
	if q.Counter != "" {
		writeCounterHistory(&b, q.Counter, h.Entries)
	} else {
		writeRunsHistory(&b, h, f.Verbose)
	}
	if _, err := fmt.Fprint(f.IO.Out, b.String()); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	return writeHistoryReport(f, opts.Report, h)
}

// historyQuery is the query the flags ask for; --since is a date or an
// RFC 3339 time.
func historyQuery(opts *historyOptions) (pipeline.HistoryQuery, error) {
	q := pipeline.HistoryQuery{Account: opts.Account, PlanID: opts.PlanID, Counter: strings.TrimSpace(opts.Counter)}
	if opts.Since != "" {
		t, err := time.Parse(time.RFC3339, opts.Since)
		if err != nil {
			d, derr := pipeline.ParseDate(opts.Since)
			if derr != nil {
				return q, exitf(ExitInvalid, "--since %q: give a date (2026-11-01) or an RFC 3339 time", opts.Since)
			}
			t = d.Time()
		}
		q.Since = t
	}
	return q, nil
}

// checkHistoryReport checks --report's name and folder before anything
// is read.
func checkHistoryReport(report string) error {
	if report == "" {
		return nil
	}
	return checkReportName(report, "")
}

// noHistory reports (none) an SQLite store that does not exist, and says
// so (with an empty report for --report): reading creates nothing, so a
// mistyped --state is not a new, empty store; one in a folder that does
// not exist is refused (checkStateFolder).
func noHistory(f *Factory, cfg *Config, opts *historyOptions) (none bool, err error) {
	if err := checkStateFolder(f, cfg, &opts.State); err != nil {
		return false, err
	}
	loc, err := stateLocation(cfg, &opts.State)
	if err != nil || statestore.IsPostgres(loc) {
		return false, nil
	}
	if _, serr := os.Stat(loc); !errors.Is(serr, fs.ErrNotExist) {
		return false, nil
	}
	msg := fmt.Sprintf("0 runs: there is no state store at %s (apply creates it when it records its first run; --state, %s or state: in the configuration name another).\n", loc, envState)
	if opts.JSON {
		fmt.Fprint(f.IO.ErrOut, msg)
		empty := &reports.HistoryReport{}
		if err := writeJSONOut(f, true, func(w io.Writer) error { return reports.EncodeHistoryJSON(w, empty) }); err != nil {
			return true, err
		}
	} else {
		fmt.Fprint(f.IO.Out, msg)
	}
	return true, writeHistoryReport(f, opts.Report, &reports.HistoryReport{})
}

// readHistory reads the runs, the counter writes and the plan writes q
// asks for.
func readHistory(ctx context.Context, st *statestore.Store, q pipeline.HistoryQuery) (*reports.HistoryReport, error) {
	runs, err := st.Runs(ctx, q)
	if err != nil {
		return nil, exitf(ExitFatal, "%v", err)
	}
	entries, err := st.History(ctx, q)
	if err != nil {
		return nil, exitf(ExitFatal, "%v", err)
	}
	planWrites, err := st.PlanWrites(ctx, q)
	if err != nil {
		return nil, exitf(ExitFatal, "%v", err)
	}
	return &reports.HistoryReport{Runs: runs, Entries: entries, PlanWrites: planWrites}, nil
}

// writeCounterHistory writes every value eepipe wrote to counter.
func writeCounterHistory(b *strings.Builder, counter string, entries []pipeline.HistoryEntry) {
	fmt.Fprintf(b, "Values eepipe wrote to %s:\n", counter)
	n := 0
	for _, e := range entries {
		if !e.Sent {
			continue
		}
		n++
		fmt.Fprintf(b, "  %s  run %d (%s@%s)  %s plan %d %q %s  %s -> %d  from %s%s\n",
			e.At.UTC().Format("2006-01-02 15:04 UTC"), e.Run.ID, e.Run.User, e.Run.Host, e.Account, e.PlanID, e.PlanName,
			targetWords(e), beforeText(e.Before), e.After, e.File, outcomeWords(e.Outcome))
	}
	if n == 0 {
		b.WriteString("  (none)\n")
	}
}

// writeRunsHistory writes each run: who, where, its files, its plan
// requests and its counters (counted per plan, or each one with verbose).
func writeRunsHistory(b *strings.Builder, h *reports.HistoryReport, verbose bool) {
	plansByRun := map[int64][]pipeline.PlanWriteEntry{}
	for _, p := range h.PlanWrites {
		plansByRun[p.RunID] = append(plansByRun[p.RunID], p)
	}
	counted := false // some run's counters were counted, not listed
	byRun := map[int64][]pipeline.HistoryEntry{}
	inSync := map[int64]int{}
	for _, e := range h.Entries {
		if e.Sent {
			byRun[e.Run.ID] = append(byRun[e.Run.ID], e)
		} else if e.Held() {
			inSync[e.Run.ID]++
		}
	}
	for _, r := range h.Runs {
		fmt.Fprintf(b, "run %d  %s  %s@%s  %s  accounts %s  %s\n", r.ID, r.Started.UTC().Format("2006-01-02 15:04 UTC"),
			r.User, r.Host, r.Status, strings.Join(r.Accounts, ", "), r.Service)
		fmt.Fprintf(b, "    command: %s\n", r.Command)
		for _, fl := range r.Files {
			fmt.Fprintf(b, "    file: %s (sha256 %s)\n", fl.Path, fl.SHA256)
		}
		if r.ChangeSet != "" {
			fmt.Fprintf(b, "    change set: %s\n", r.ChangeSet)
		}
		if r.Signer != "" {
			fmt.Fprintf(b, "    signed off by: %s (the set's sign-off, verified against the configuration's signers)\n", r.Signer)
		}
		for _, p := range plansByRun[r.ID] {
			fmt.Fprintf(b, "    %s plan %d %q: %s%s\n", p.Account, p.PlanID, p.PlanName, p.Action, outcomeWords(p.Outcome))
		}
		if verbose {
			for _, e := range byRun[r.ID] {
				fmt.Fprintf(b, "    %s plan %d %q %s %s: %s -> %d%s\n", e.Account, e.PlanID, e.PlanName, targetWords(e), e.Counter,
					beforeText(e.Before), e.After, outcomeWords(e.Outcome))
			}
		} else {
			counted = counted || len(byRun[r.ID]) > 0
			writeRunCounts(b, byRun[r.ID])
		}
		if n := inSync[r.ID]; n > 0 {
			fmt.Fprintf(b, "    %s\n", pipeline.HeldText(n))
		}
	}
	fmt.Fprintf(b, "%s.\n", pipeline.Plural(len(h.Runs), "run"))
	if counted {
		b.WriteString("Counters are counted, not listed: -v lists each one (before -> after); --report FILE (.xlsx, .csv or .json) writes them all.\n")
	}
}

// writeHistoryReport writes h to report (--report), when one is asked for.
func writeHistoryReport(f *Factory, report string, h *reports.HistoryReport) error {
	if report == "" {
		return nil
	}
	if err := reports.WriteHistoryReport(report, h); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "History report written to %s\n", report)
	return nil
}

// writeRunCounts writes a run's sent counters as one line per plan: how
// many counters in how many targets, and how many were adopted (a later
// run found the service holding them), have no answer on record (pending)
// or failed.
func writeRunCounts(b *strings.Builder, entries []pipeline.HistoryEntry) {
	type planCount struct {
		account, name                      string
		id                                 int64
		from                               int64 // the run whose writes these are, adopted by this one
		counters, adopted, pending, failed int
		leftOut, moot                      int
		targets                            map[string]bool
	}
	var order []*planCount
	byPlan := map[string]*planCount{}
	for _, e := range entries {
		from, _ := pipeline.AdoptedFrom(e.Outcome)
		if from == e.Run.ID {
			from = 0 // the run's own write, adopted by a later one
		}
		key := fmt.Sprintf("%s\x00%d\x00%s\x00%d", e.Account, e.PlanID, e.PlanName, from)
		pc := byPlan[key]
		if pc == nil {
			pc = &planCount{account: e.Account, name: e.PlanName, id: e.PlanID, from: from, targets: map[string]bool{}}
			byPlan[key] = pc
			order = append(order, pc)
		}
		pc.counters++
		pc.targets[targetWords(e)] = true
		switch {
		case e.Outcome == "ok":
		case pipeline.AppliedOutcome(e.Outcome):
			pc.adopted++
		case e.Outcome == pipeline.OutcomePending:
			pc.pending++
		case strings.HasPrefix(e.Outcome, pipeline.OutcomeLeftOut):
			pc.leftOut++
		case strings.HasPrefix(e.Outcome, pipeline.OutcomeMoot):
			pc.moot++
		default:
			pc.failed++
		}
	}
	for _, pc := range order {
		if pc.from != 0 {
			fmt.Fprintf(b, "    %s plan %d %q: %s that run %d sent in %s adopted: it recorded no answer, and this run found the service holding them\n",
				pc.account, pc.id, pc.name, pipeline.Plural(pc.counters, "counter"), pc.from, pipeline.Plural(len(pc.targets), "target"))
			continue
		}
		fmt.Fprintf(b, "    %s plan %d %q: %s sent in %s", pc.account, pc.id, pc.name, pipeline.Plural(pc.counters, "counter"), pipeline.Plural(len(pc.targets), "target"))
		if pc.adopted > 0 {
			fmt.Fprintf(b, " (adopted: the run recorded no answer, and a later run found the service holding them: %d)", pc.adopted)
		}
		if pc.pending > 0 {
			fmt.Fprintf(b, " (%s: %d)", pendingWords, pc.pending)
		}
		if pc.leftOut > 0 {
			fmt.Fprintf(b, " (not applied: the run recorded no answer, and a later run found the service not holding them: %d)", pc.leftOut)
		}
		if pc.moot > 0 {
			fmt.Fprintf(b, " (answer unknown, a later write is on record: %d)", pc.moot)
		}
		if pc.failed > 0 {
			fmt.Fprintf(b, " (FAILED: %d)", pc.failed)
		}
		b.WriteByte('\n')
	}
}

// pendingWords says what a write still pending is: sent (or about to be)
// when its run stopped, its answer not recorded.
const pendingWords = "pending, no answer recorded: the next apply of the plan finds out whether the service holds it"

func targetWords(e pipeline.HistoryEntry) string {
	s := fmt.Sprintf("year %d", e.YearNumber)
	if e.FinancialYear != "" {
		s += " (" + e.FinancialYear + ")"
	}
	return s + " " + e.TargetType
}

func beforeText(v *int64) string {
	if v == nil {
		return "(prefill)"
	}
	return fmt.Sprint(*v)
}

// outcomeWords says a write's outcome after its counter: nothing when it
// succeeded, else adopted, pending or FAILED with the outcome recorded.
func outcomeWords(o string) string {
	switch {
	case o == "ok":
		return ""
	case pipeline.AppliedOutcome(o):
		return "  (" + o + ")"
	case o == pipeline.OutcomePending:
		return "  (" + pendingWords + ")"
	case strings.HasPrefix(o, pipeline.OutcomeLeftOut), strings.HasPrefix(o, pipeline.OutcomeMoot):
		return "  (" + o + ")"
	}
	return "  (FAILED: " + o + ")"
}
