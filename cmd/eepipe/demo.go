package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/statestore"
	"github.com/spf13/cobra"
	"github.com/xuri/excelize/v2"
)

// demoWorkbookName is the demo workbook's file name, embedded from
// cmd/eepipe/demo/ (a copy of testdata/demo/, kept equal by TestDemoWorkbook).
const demoWorkbookName = "demo-plans.xlsx"

//go:embed demo/demo-plans.xlsx
var demoWorkbook []byte

// demoGridName is the grid workbook the demo exports and edits.
const demoGridName = "clients-grid.xlsx"

// demoSecrets are the sandbox fixtures' secrets, given to the demo's
// configuration through these environment variables (never in the file).
var demoSecrets = [][2]string{
	{"DEMO_LOOKUP_PASSWORD", "sandbox-lookup-pass"},
	{"DEMO_ACME_SECRET", "sandbox-secret-acme"},
	{"DEMO_BLUECRANE_SECRET", "sandbox-secret-bluecrane"},
}

// demoOptions are the options of `eepipe demo`.
type demoOptions struct {
	Args           []string
	Out            string
	Latency        time.Duration
	RecalcDuration time.Duration
	Concurrency    int
	Serve          bool

	// Program is how the printed next steps invoke eepipe ("" = found
	// from the running executable); Ready is called once the next steps
	// are printed with --serve (tests).
	Program string
	Ready   func()
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
to show that nothing is sent; then export the plans as a grid workbook (the
layout people fill in), change one counter in it as a consultant would, and
reconcile it with the service. Nothing leaves this machine; it takes a few
seconds.

The outputs go to --out, by default one folder reused by every run
(eepipe/demo under the user's cache folder). With --serve the sandbox stays
up after the demo and the command prints the exact commands, with their
environment, to continue by hand (apply the changed counter, reconcile
again); Ctrl-C stops it.`,
		Example: `  go run ./cmd/eepipe demo
  go run ./cmd/eepipe demo --serve
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
	fl.StringVar(&opts.Out, "out", "", "folder for the demo's outputs (default: eepipe/demo in the user's cache folder, reused by every run)")
	fl.BoolVar(&opts.Serve, "serve", false, "keep the sandbox running after the demo and print the commands to continue with")
	fl.DurationVar(&opts.Latency, "latency", 15*time.Millisecond, "latency the sandbox adds to every response")
	fl.DurationVar(&opts.RecalcDuration, "recalc-duration", 3*time.Second, "how long a scorecard recalculation runs in the sandbox")
	fl.IntVar(&opts.Concurrency, "concurrency", 8, "maximum requests in flight")
	return cmd
}

// demoDir returns the demo's output folder: --out, else one folder under
// the user's cache folder that every run reuses (no new folder per run).
func demoDir(out string) (string, error) {
	if out != "" {
		return out, os.MkdirAll(out, 0o755)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("eepipe-%d", os.Getuid()))
	}
	dir := filepath.Join(base, "eepipe", "demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	return dir, nil
}

func runDemo(ctx context.Context, f *Factory, opts *demoOptions) error {
	d := &demo{f: f, opts: opts, out: f.IO.Out}
	dir, err := demoDir(opts.Out)
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	d.dir = dir
	if err := newDemoState(ctx, dir); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "eepipe demo: the whole apply flow against the emulated service, on this machine only.")
	if err := d.startSandbox(); err != nil {
		return err
	}
	defer d.srv.Close()
	for _, step := range []func(context.Context) error{d.configure, d.writeWorkbook, d.diffAndApply, d.exportAndReconcile} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.listOutputs()
	return d.serve(ctx)
}

// newDemoState starts a new run history in dir: each demo starts a new
// sandbox, at a new address, so the history an earlier demo left is of
// plans that no longer exist, under an address the demo's key pairs no
// longer reach (a store refuses a key pair's second address:
// docs/apply-and-state.md, "The state store"). The new store is made
// empty before the demo's first diff, which is no mistyped store. A
// store there with runs of a service not on this machine is no demo's
// (--out names a folder whose state.db is a real history): the folder is
// refused (exit 2) and the store left as it is.
func newDemoState(ctx context.Context, dir string) error {
	p := demoState(dir).Path
	if _, err := os.Stat(p); err == nil {
		if err := checkDemoState(ctx, dir, p); err != nil {
			return err
		}
	}
	for _, f := range []string{p, p + "-wal", p + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return exitf(ExitFatal, "demo: %v", err)
		}
	}
	st, err := statestore.OpenWith(ctx, p, statestore.Options{})
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	if err := st.Close(); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	return nil
}

// checkDemoState refuses (exit 2) the demo's folder dir when the store p
// there holds runs of a service that is not on this machine, as the
// demo's sandboxes are.
func checkDemoState(ctx context.Context, dir, p string) error {
	st, err := statestore.OpenWith(ctx, p, statestore.Options{})
	if err != nil {
		return exitf(ExitInvalid, "demo --out %s: %s is not a run history the demo made (%v); give the demo another folder with --out; nothing was changed", dir, p, err)
	}
	defer st.Close()
	services, err := st.RunServices(ctx)
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	for _, svc := range services {
		if u, err := url.Parse(svc); err != nil || !loopbackHost(u.Hostname()) {
			return exitf(ExitInvalid, "demo --out %s: %s holds the run history of %s, not the demo's (the demo starts a new history in its folder each time): "+
				"give the demo another folder with --out; nothing was changed", dir, p, svc)
		}
	}
	return nil
}

// demo is one run of `eepipe demo`: its options, its output folder, the
// sandbox it started and the Factory its commands run with.
type demo struct {
	f    *Factory
	opts *demoOptions
	out  io.Writer
	dir  string

	srv     *sandbox.Server
	df      *Factory // the demo's commands' Factory: its configuration, its secrets
	cfgPath string
	wb      string // the sample workbook
	grid    string // the exported grid workbook
}

// step prints the heading of step n.
func (d *demo) step(n int, format string, args ...any) {
	fmt.Fprintf(d.out, "\n== %d. %s\n", n, fmt.Sprintf(format, args...))
}

// startSandbox is step 1: the sandbox on a free local port.
func (d *demo) startSandbox() error {
	opts := d.opts
	d.step(1, "Starting the sandbox")
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: sandbox.DefaultFixtures(), Latency: opts.Latency, RecalcDuration: opts.RecalcDuration})
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	d.srv = srv
	fmt.Fprintf(d.out, "Sandbox at %s: accounts acme (Acme Foods, company 8ovHrj) and bluecrane (Blue Crane Logistics, company Q2wE9z),\n"+
		"the company lookup, and three scorecards; %s latency per response, recalculations run %s.\n", srv.URL, opts.Latency, opts.RecalcDuration)
	return nil
}

// configure writes a configuration file like a consultant's (the secrets
// come from the environment, never from the file) and builds the Factory
// the demo's commands run with.
func (d *demo) configure(context.Context) error {
	f, srv := d.f, d.srv
	d.cfgPath = filepath.Join(d.dir, "eepipe.yaml")
	cfgText := fmt.Sprintf(`# written by eepipe demo: two accounts, routed by company.
# The sandbox at this URL runs only while "eepipe demo --serve" does.
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
    vat_number: "4012345678"
  - name: bluecrane
    company_id: Q2wE9z
    api_key: mpk_sandbox_bluecrane
    api_secret_env: DEMO_BLUECRANE_SECRET
    registration_number: "2015/123456/07"
`, srv.URL, srv.URL)
	if err := xlsx.WriteFileAtomic(d.cfgPath, func(w io.Writer) error { _, err := io.WriteString(w, cfgText); return err }); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	_ = os.Chmod(d.cfgPath, 0o600)
	secrets := map[string]string{}
	for _, kv := range demoSecrets {
		secrets[kv[0]] = kv[1]
	}
	d.df = &Factory{IO: f.IO, Now: f.Now, ConfigPath: d.cfgPath, configFrom: "the demo", CatalogPath: f.CatalogPath, Debug: f.Debug, Verbose: f.Verbose, LogFormat: f.LogFormat,
		Getenv: func(k string) string {
			if v, ok := secrets[k]; ok {
				return v
			}
			if strings.HasPrefix(k, "EEPIPE_") {
				return "" // the demo ignores the user's own configuration
			}
			return f.Getenv(k)
		}}
	d.df.logger = f.Logger()
	return nil
}

// writeWorkbook is step 2: the sample workbook.
func (d *demo) writeWorkbook(context.Context) error {
	d.step(2, "The sample workbook")
	d.wb = filepath.Join(d.dir, demoWorkbookName)
	if err := xlsx.WriteFileAtomic(d.wb, func(w io.Writer) error { _, err := w.Write(demoWorkbook); return err }); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	fmt.Fprintf(d.out, "%s: four plans for two client companies in the flat layout (one row per plan, year and target type),\n"+
		"found through the company lookup by VAT or registration number; two are pre-filled from the company's scorecard,\n"+
		"and their blank cells keep the prefilled values.\n", d.wb)
	return nil
}

// diffAndApply are steps 3 to 6: diff, a recalculation started by someone
// else, apply (which waits for it), and apply again, which sends nothing.
func (d *demo) diffAndApply(ctx context.Context) error {
	diffRep, err := d.diff(ctx)
	if err != nil {
		return err
	}
	if err := d.recalcElsewhere(ctx); err != nil {
		return err
	}
	if err := d.apply(ctx, diffRep); err != nil {
		return err
	}
	return d.applyAgain(ctx)
}

// diff is step 3: what apply would change; it sends only reads.
func (d *demo) diff(ctx context.Context) (*run.RunReport, error) {
	opts, dir, sb := d.opts, d.dir, d.srv.Sandbox
	d.step(3, "eepipe diff %s  (what apply would change; sends only reads)", demoWorkbookName)
	sb.ResetStats()
	diffOpts := &applyOptions{Args: []string{d.wb}, DryRun: true, Counters: true, Concurrency: opts.Concurrency, Report: filepath.Join(dir, "diff.json"),
		State: demoState(dir), LockDir: demoLockDir(dir)}
	diffRep, err := runApply(ctx, d.df, diffOpts)
	if err != nil && exitCode(err) != ExitDiff {
		return nil, err
	}
	st := sb.Stats()
	fmt.Fprintf(d.out, "The diff sent %s and %s.\n", pipeline.Plural(int(st.Requests), "request"), pipeline.Plural(int(st.Writes), "write"))
	return diffRep, nil
}

// recalcElsewhere is step 4: someone else starts a recalculation that
// apply will have to wait for.
func (d *demo) recalcElsewhere(ctx context.Context) error {
	d.step(4, "Someone else starts a recalculation of scorecard_acme_2025 (it runs %s)", d.opts.RecalcDuration)
	other, err := apiclient.New(apiclient.Options{BaseURL: d.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	if err := other.RecalculateScorecard(ctx, "scorecard_acme_2025"); err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	fmt.Fprintln(d.out, "apply will recalculate that scorecard after changing its plan; the service answers 409 until the running one ends,\n"+
		"and apply waits with a capped backoff and asks again.")
	return nil
}

// apply is step 5: the apply, its requests by route, and why its counts
// differ from the diff's (diffRep).
func (d *demo) apply(ctx context.Context, diffRep *run.RunReport) error {
	opts, dir, sb, out := d.opts, d.dir, d.srv.Sandbox, d.out
	d.step(5, "eepipe apply %s --report run.xlsx", demoWorkbookName)
	sb.ResetStats()
	runReport := filepath.Join(dir, "run.xlsx")
	applyOpts := &applyOptions{Args: []string{d.wb}, Concurrency: opts.Concurrency, Report: runReport, Quiet: true,
		RecalcWait: 2*opts.RecalcDuration + 30*time.Second, RecalcBackoff: max(opts.RecalcDuration/6, 100*time.Millisecond),
		State: demoState(dir), LockDir: demoLockDir(dir)}
	applyRep, err := runApply(ctx, d.df, applyOpts)
	if err != nil {
		return err
	}
	st := sb.Stats()
	fmt.Fprintf(out, "The apply sent %s (%s; at most %d in flight with --concurrency %d); by route:\n",
		pipeline.Plural(int(st.Requests), "request"), pipeline.Plural(int(st.Writes), "write"), st.MaxInFlight, opts.Concurrency)
	for _, r := range sortedRoutes(st.ByRoute) {
		fmt.Fprintf(out, "  %4d  %s\n", st.ByRoute[r], r)
	}
	fmt.Fprintf(out, "Stored now: %s on account acme, %d on bluecrane.\n", pipeline.Plural(len(sb.Plans("acme")), "plan"), len(sb.Plans("bluecrane")))
	if diffRep != nil && applyRep != nil {
		fmt.Fprintln(out, demoExplainCounts(diffRep.Summary(), applyRep.Summary()))
	}
	return nil
}

// applyAgain is step 6: the service already matches, so nothing is sent.
func (d *demo) applyAgain(ctx context.Context) error {
	opts, dir, sb := d.opts, d.dir, d.srv.Sandbox
	d.step(6, "eepipe apply %s again  (the service already matches: nothing to send)", demoWorkbookName)
	sb.ResetStats()
	again := &applyOptions{Args: []string{d.wb}, Concurrency: opts.Concurrency, Report: filepath.Join(dir, "run-again.json"), NoRecalc: true, Quiet: true,
		State: demoState(dir), LockDir: demoLockDir(dir)}
	if _, err := runApply(ctx, d.df, again); err != nil {
		return err
	}
	st := sb.Stats()
	fmt.Fprintf(d.out, "The second apply sent %s (lookups, lists and gets) and %s.\n", pipeline.Plural(int(st.Requests), "request"), pipeline.Plural(int(st.Writes), "write"))
	if st.Writes != 0 {
		return exitf(ExitFatal, "demo: the second apply wrote %s; it should write nothing", pipeline.Plural(int(st.Writes), "time"))
	}
	return nil
}

// exportAndReconcile are steps 7 and 8: the plans exported as grid
// workbooks, one cell changed, and the reconciliation that finds it.
func (d *demo) exportAndReconcile(ctx context.Context) error {
	opts, dir, out := d.opts, d.dir, d.out
	d.grid = filepath.Join(dir, demoGridName)
	d.step(7, "eepipe export -o %s  (the plans as grid workbooks: the layout people fill in)", demoGridName)
	if err := runExport(ctx, d.df, &exportOptions{Output: d.grid, Layout: layoutGrid, Concurrency: opts.Concurrency, Force: true}); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: an Overview sheet and one sheet per plan, each financial year a grid of occupational levels (down)\n"+
		"by race and gender (across), for all employees and for employees with disabilities; plan ids and company\n"+
		"identifiers are filled in, so applying it unchanged sends nothing.\n", d.grid)
	edit, err := demoEditGrid(d.grid)
	if err != nil {
		return exitf(ExitFatal, "demo: %v", err)
	}
	fmt.Fprintf(out, "A consultant changes one cell: %s.\n", edit)

	d.step(8, "eepipe reconcile %s --report reconcile.xlsx  (the workbook against the service, cell by cell; sends only reads)", demoGridName)
	recReport := filepath.Join(dir, "reconcile.xlsx")
	if err := runReconcile(ctx, d.df, &reconcileOptions{Args: []string{d.grid}, Reports: []string{recReport}, Concurrency: opts.Concurrency, State: demoState(dir)}); err != nil && exitCode(err) != ExitDiff {
		return err
	}
	fmt.Fprintln(out, "Reconcile finds exactly the changed cell (exit 1: differences); reconcile.xlsx is a copy of the workbook with\n"+
		"that cell marked and a sheet listing every difference.")
	return nil
}

// listOutputs is step 9: what the demo left in its folder.
func (d *demo) listOutputs() {
	d.step(9, "Outputs, in %s (reused by the next run)", d.dir)
	for _, o := range []struct{ name, what string }{
		{demoWorkbookName, "the sample workbook (flat layout)"},
		{demoGridName, "the plans exported as grid workbooks, with the one changed counter"},
		{"eepipe.yaml", "the configuration used; its secrets come from the DEMO_* environment variables printed below"},
		{"diff.json", "the dry run's report: one line per input row, what would change"},
		{"run.xlsx", "the apply's run report: one line per input row with outcome, plan, milestone and target ids, counters changed"},
		{"run-again.json", "the second apply's report: everything unchanged"},
		{"reconcile.xlsx", "the reconciliation of the grid workbook: the changed cell marked"},
		{"state.db", "the run history the applies recorded (eepipe history --state '" + filepath.Join(d.dir, "state.db") + "')"},
		{"locks/", "the applies' account locks (empty files; the demo's service is its own, so its locks stay here)"},
	} {
		fmt.Fprintf(d.out, "  %-18s %s\n", o.name, o.what)
	}
}

// serve ends the demo: without --serve it says how to continue; with it,
// it prints the commands to continue with and keeps the sandbox up until
// ctx is done.
func (d *demo) serve(ctx context.Context) error {
	opts, dir, out := d.opts, d.dir, d.out
	prog := opts.Program
	if prog == "" {
		prog = demoProgram()
	}
	if !opts.Serve {
		fmt.Fprintf(out, "\nThe sandbox has stopped, so eepipe.yaml now points at nothing. To continue by hand (apply the changed\n"+
			"counter, reconcile again), run the demo with the sandbox kept up:\n\n  %s demo --serve\n", prog)
		fmt.Fprintln(out, "\nREADME.md and docs/configuration.md explain configuring the real service.")
		return nil
	}
	cfgQ, gridQ := demoShellQuote(d.cfgPath), demoShellQuote(d.grid)
	var exports []string
	for _, kv := range demoSecrets {
		exports = append(exports, kv[0]+"="+kv[1])
	}
	// The demo's run history and locks stay in its folder, not the user's.
	exports = append(exports, envState+"="+demoShellQuote(demoState(dir).Path), envLockDir+"="+demoShellQuote(demoLockDir(dir)))
	fmt.Fprintf(out, "\nThe sandbox keeps running at %s until Ctrl-C. Continue in another terminal; copy these lines:\n\n", d.srv.URL)
	fmt.Fprintf(out, "  export %s\n", strings.Join(exports, " "))
	fmt.Fprintf(out, "  %s --config %s reconcile %s   # the changed counter is the one difference (exit 1)\n", prog, cfgQ, gridQ)
	fmt.Fprintf(out, "  %s --config %s apply %s       # sends exactly that counter\n", prog, cfgQ, gridQ)
	fmt.Fprintf(out, "  %s --config %s reconcile %s   # in sync now (exit 0)\n", prog, cfgQ, gridQ)
	fmt.Fprintf(out, "\nThen edit any counter in %s (or %s) and run diff, apply and reconcile again.\n", gridQ, demoShellQuote(d.wb))
	if opts.Ready != nil {
		opts.Ready()
	}
	<-ctx.Done()
	fmt.Fprintln(out, "Sandbox stopped.")
	return nil
}

// demoExplainCounts says why the apply patched fewer targets and counters
// than the diff counted: a plan created from a scorecard is pre-filled by
// the service, and counters the prefill already gives the workbook's value
// need no patch; the diff cannot know the prefill before the plan exists.
func demoExplainCounts(diff, applied run.RunSummary) string {
	if diff.TargetsPatched == applied.TargetsPatched && diff.CountersChanged == applied.CountersChanged {
		return fmt.Sprintf("The diff's %s / %s are what the apply patched.", pipeline.Plural(diff.TargetsPatched, "target"), pipeline.Plural(diff.CountersChanged, "counter"))
	}
	return fmt.Sprintf("The diff counted %s / %s to change, the apply patched %s / %s: the diff cannot know what a scorecard\n"+
		"prefill will put in a plan that does not exist yet, so it counts every workbook value of a pre-filled plan (\"(prefill) -> n\").\n"+
		"Once created, those plans already held %s of those values (%s needed no patch at all), and only the rest were sent.",
		pipeline.Plural(diff.TargetsPatched, "target"), pipeline.Plural(diff.CountersChanged, "counter"),
		pipeline.Plural(applied.TargetsPatched, "target"), pipeline.Plural(applied.CountersChanged, "counter"),
		pipeline.Plural(diff.CountersChanged-applied.CountersChanged, "counter"), pipeline.Plural(diff.TargetsPatched-applied.TargetsPatched, "target"))
}

// demoEditGrid changes one counter of the exported grid workbook, as a
// consultant would, and says which.
func demoEditGrid(path string) (string, error) {
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		return "", err
	}
	const counter = "number_of_african_female_junior_managers"
	for _, p := range batch.Plans {
		for _, t := range p.Targets {
			o := t.CellOf(counter)
			v, set := t.Counters.ByName(counter)
			if !set || o.Sheet == "" || o.Cell == "" || t.TargetType != pipeline.TargetAll {
				continue
			}
			x, err := excelize.OpenFile(path)
			if err != nil {
				return "", err
			}
			defer x.Close()
			if err := x.SetCellInt(o.Sheet, o.Cell, v+1); err != nil {
				return "", err
			}
			if err := xlsx.WriteFileAtomic(path, func(w io.Writer) error { _, err := x.WriteTo(w); return err }); err != nil {
				return "", err
			}
			return fmt.Sprintf("sheet %q cell %s (%s, %s, %s) from %d to %d", o.Sheet, o.Cell, p.Name, t.TargetType, counter, v, v+1), nil
		}
	}
	return "", fmt.Errorf("%s has no %s cell to change", path, counter)
}

// demoProgram is how the printed next steps run eepipe: "go run
// ./cmd/eepipe" under go run, else "eepipe" when that is the one on PATH,
// else the executable's path.
func demoProgram() string {
	exe, err := os.Executable()
	if err != nil {
		return "eepipe"
	}
	if goRunBinary(exe) {
		return "go run ./cmd/eepipe"
	}
	if p, err := exec.LookPath("eepipe"); err == nil {
		if a, b := evalPath(p), evalPath(exe); a == b {
			return "eepipe"
		}
	}
	return demoShellQuote(exe)
}

// goRunBinary reports whether exe was built by go run: in a temporary
// go-build folder, or (Go 1.24 on) cached in the build cache as
// GOCACHE/8e/<64 hex digits>-d/NAME, wherever GOCACHE points.
func goRunBinary(exe string) bool {
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return true
	}
	dir := filepath.Dir(exe)
	hash, shard := filepath.Base(dir), filepath.Base(filepath.Dir(dir))
	return goCachedRun.MatchString(hash) && len(shard) == 2 && strings.HasPrefix(hash, shard)
}

// goCachedRun is the folder name of an executable go run cached.
var goCachedRun = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

func evalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// demoShellQuote quotes s for a POSIX shell when it needs it (plain
// paths stay readable in the printed commands).
func demoShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exitCode returns the exit code an error maps to.
func exitCode(err error) int {
	if ee, ok := err.(*ExitError); ok {
		return ee.Code
	}
	return ExitFatal
}

func sortedRoutes(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }
