package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/spf13/cobra"
)

// demoWorkbookName is the demo workbook's file name, embedded from
// cmd/eepipe/demo/ (a copy of testdata/demo/, kept equal by TestDemoWorkbook).
const demoWorkbookName = "demo-plans.xlsx"

//go:embed demo/demo-plans.xlsx
var demoWorkbook []byte

// demoOptions are the options of `eepipe demo`.
type demoOptions struct {
	Args           []string
	Out            string
	Latency        time.Duration
	RecalcDuration time.Duration
	Concurrency    int
}

// NewCmdDemo returns `eepipe demo`. runF replaces the command's run function in tests.
func NewCmdDemo(f *Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Apply a sample workbook to an in-process sandbox, end to end, with no configuration",
		Long: `Start the sandbox (the emulated service, with its example accounts acme and
bluecrane, the company lookup and three scorecards) on a free loopback
port, write a sample workbook of four plans for two client companies, show
the diff, apply it with progress (while a recalculation someone else
started is still running, so the apply waits through a 409), apply it again
to show that nothing is sent, and say where the outputs are. Nothing leaves
this machine; it takes a few seconds.`,
		Example: `  go run ./cmd/eepipe demo
  eepipe demo --out demo-output`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return runDemo(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Out, "out", "", "folder for the demo's outputs (default: a new temporary folder)")
	fl.DurationVar(&opts.Latency, "latency", 15*time.Millisecond, "latency the sandbox adds to every response")
	fl.DurationVar(&opts.RecalcDuration, "recalc-duration", 3*time.Second, "how long a scorecard recalculation runs in the sandbox")
	fl.IntVar(&opts.Concurrency, "concurrency", 8, "maximum requests in flight")
	return cmd
}

func runDemo(ctx context.Context, f *Factory, opts *demoOptions) error {
	out := f.IO.Out
	step := func(n int, format string, args ...any) {
		fmt.Fprintf(out, "\n== %d. %s\n", n, fmt.Sprintf(format, args...))
	}
	dir := opts.Out
	if dir == "" {
		d, err := os.MkdirTemp("", "eepipe-demo-")
		if err != nil {
			return exitf(ExitFatal, "demo: %v", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}

	fmt.Fprintln(out, "eepipe demo: the whole apply flow against the emulated service, on this machine only.")
	step(1, "Starting the sandbox")
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures(), Latency: opts.Latency, RecalcDuration: opts.RecalcDuration})
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	defer srv.Close()
	sb := srv.Sandbox
	fmt.Fprintf(out, "Sandbox at %s: accounts acme (Acme Foods, company 8ovHrj) and bluecrane (Blue Crane Logistics, company Q2wE9z),\n"+
		"the company lookup, and three scorecards; %s latency per response, recalculations run %s.\n", srv.URL, opts.Latency, opts.RecalcDuration)

	// A configuration file like a consultant's; the secrets come from the
	// environment, never from the file.
	cfgPath := filepath.Join(dir, "eepipe.yaml")
	cfgText := fmt.Sprintf(`# written by eepipe demo: two accounts, routed by company
base_url: %s
lookup:
  url: %s
  username: consultant
  password_env: DEMO_LOOKUP_PASSWORD
accounts:
  - name: acme
    company_id: 8ovHrj
    api_key: mpk_sandbox_acme
    api_secret_env: DEMO_ACME_SECRET
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: DEMO_BLUECRANE_SECRET
`, srv.URL, srv.URL)
	if err := formats.WriteFileAtomic(cfgPath, func(w io.Writer) error { _, err := io.WriteString(w, cfgText); return err }); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	_ = os.Chmod(cfgPath, 0o600)
	secrets := map[string]string{
		"DEMO_LOOKUP_PASSWORD":  "sandbox-lookup-pass",
		"DEMO_ACME_SECRET":      "sandbox-secret-acme",
		"DEMO_BLUECRANE_SECRET": "sandbox-secret-bluecrane",
	}
	df := &Factory{IO: f.IO, Now: f.Now, ConfigPath: cfgPath, CatalogPath: f.CatalogPath, Verbose: f.Verbose, LogFormat: f.LogFormat,
		Getenv: func(k string) string {
			if v, ok := secrets[k]; ok {
				return v
			}
			if strings.HasPrefix(k, "EEPIPE_") {
				return "" // the demo ignores the user's own configuration
			}
			return f.Getenv(k)
		}}
	df.logger = f.Logger()

	step(2, "The sample workbook")
	wb := filepath.Join(dir, demoWorkbookName)
	if err := formats.WriteFileAtomic(wb, func(w io.Writer) error { _, err := w.Write(demoWorkbook); return err }); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	fmt.Fprintf(out, "%s: four plans for two client companies, found through the company lookup by VAT or registration number;\n"+
		"two are pre-filled from the company's scorecard, and their blank cells keep the prefilled values.\n", wb)

	step(3, "eepipe diff %s  (what apply would change; sends only reads)", demoWorkbookName)
	sb.ResetStats()
	diffOpts := &applyOptions{Args: []string{wb}, DryRun: true, Concurrency: opts.Concurrency, Report: filepath.Join(dir, "diff.json"),
		State: demoState(dir)}
	if err := runApply(ctx, df, diffOpts); err != nil && exitCode(err) != ExitDiff {
		return err
	}
	st := sb.Stats()
	fmt.Fprintf(out, "The diff sent %d requests and %d writes.\n", st.Requests, st.Writes)

	step(4, "Someone else starts a recalculation of scorecard_acme_2025 (it runs %s)", opts.RecalcDuration)
	other, err := apiclient.New(apiclient.Options{BaseURL: srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	if err := other.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	fmt.Fprintln(out, "apply will recalculate that scorecard after changing its plan; the service answers 409 until the running one ends,\n"+
		"and apply waits with a capped backoff and asks again.")

	step(5, "eepipe apply %s --report run.xlsx", demoWorkbookName)
	sb.ResetStats()
	runReport := filepath.Join(dir, "run.xlsx")
	applyOpts := &applyOptions{Args: []string{wb}, Concurrency: opts.Concurrency, Report: runReport, Quiet: true,
		RecalcWait: 2*opts.RecalcDuration + 30*time.Second, RecalcBackoff: max(opts.RecalcDuration/6, 100*time.Millisecond),
		State: demoState(dir)}
	if err := runApply(ctx, df, applyOpts); err != nil {
		return err
	}
	st = sb.Stats()
	fmt.Fprintf(out, "The apply sent %d requests (%d writes; at most %d in flight with --concurrency %d); by route:\n",
		st.Requests, st.Writes, st.MaxInFlight, opts.Concurrency)
	for _, r := range sortedRoutes(st.ByRoute) {
		fmt.Fprintf(out, "  %4d  %s\n", st.ByRoute[r], r)
	}
	fmt.Fprintf(out, "Stored now: %d plans on account acme, %d on bluecrane.\n", len(sb.Plans("acme")), len(sb.Plans("bluecrane")))

	step(6, "eepipe apply %s again  (the service already matches: nothing to send)", demoWorkbookName)
	sb.ResetStats()
	again := &applyOptions{Args: []string{wb}, Concurrency: opts.Concurrency, Report: filepath.Join(dir, "run-again.json"), NoRecalc: true, Quiet: true,
		State: demoState(dir)}
	if err := runApply(ctx, df, again); err != nil {
		return err
	}
	st = sb.Stats()
	fmt.Fprintf(out, "The second apply sent %d requests (lookups, lists and gets) and %d writes.\n", st.Requests, st.Writes)
	if st.Writes != 0 {
		return exitf(ExitFatal, "demo: the second apply wrote %d times; it should write nothing", st.Writes)
	}

	step(7, "Outputs, in %s", dir)
	for _, o := range []struct{ name, what string }{
		{demoWorkbookName, "the sample workbook (edit a counter and run apply again: only that counter is sent)"},
		{"eepipe.yaml", "the configuration used (secrets came from environment variables)"},
		{"diff.json", "the dry run's report: one line per input row, what would change"},
		{"run.xlsx", "the apply's run report: one line per input row with outcome, plan, milestone and target ids, counters changed"},
		{"run-again.json", "the second apply's report: everything unchanged"},
		{"state.db", "the run history the applies recorded (eepipe history --state '" + filepath.Join(dir, "state.db") + "')"},
	} {
		fmt.Fprintf(out, "  %-16s %s\n", o.name, o.what)
	}
	fmt.Fprintln(out, "\nNext: eepipe apply --help, and README.md for configuring the real service.")
	return nil
}

// exitCode returns the exit code an error maps to.
func exitCode(err error) int {
	if ee, ok := err.(*ExitError); ok {
		return ee.Code
	}
	return ExitFatal
}

func sortedRoutes(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }
